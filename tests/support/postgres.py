"""A real PostgreSQL for tests, from the machine's own binaries (Debian's `postgresql`): made
with initdb in a temporary folder, on a free port of 127.0.0.1, stopped at the end. initdb and
the server refuse to run as root, so as root they run as the `postgres` user."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.support.servers import free_port


def _bin_dir() -> Path | None:
    found = shutil.which("pg_ctl")
    if found:
        return Path(os.path.realpath(found)).parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=_version_key)
    return Path(versions[-1]).parent if versions else None


def _version_key(path: str) -> int:
    part = Path(path).parent.parent.name
    return int(part) if part.isdigit() else 0


def _runner() -> list[str]:
    """The prefix that runs PostgreSQL's programs as a user it accepts."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        pytest.skip("running as root, and there is no postgres user to run PostgreSQL as")
    runuser = shutil.which("runuser")
    if runuser is None:
        pytest.skip("running as root, and runuser is not on PATH")
    return [runuser, "-u", "postgres", "--"]


class PostgresServer:
    """One server; `database()` makes a fresh database on it and gives its URL."""

    def __init__(self, bin_dir: Path, runner: list[str]) -> None:
        self.bin_dir = bin_dir
        self.runner = runner
        self.root = Path(tempfile.mkdtemp(prefix="gitreg-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.password = "s3cret-" + uuid.uuid4().hex[:8]
        if runner:
            shutil.chown(self.root, "postgres")
        (self.root / "pw").write_text(self.password)
        if runner:
            shutil.chown(self.root / "pw", "postgres")
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            "gitreg",
            "--pwfile",
            str(self.root / "pw"),
            "-A",
            "scram-sha-256",
            "-E",
            "UTF8",
            "--no-sync",
        )
        self.start()

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://gitreg:{self.password}@127.0.0.1:{self.port}/{database}"

    def database(self) -> str:
        """A new, empty database; its URL."""
        name = "t" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def start(self) -> None:
        options = f"-h 127.0.0.1 -p {self.port} -k {self.root} -F -c max_connections=200"
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.root / "log"),
            "-w",
            "start",
        )

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def close(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)

    def _run(self, program: str, *args: str) -> None:
        subprocess.run(
            [*self.runner, str(self.bin_dir / program), *args],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=60,
        )


@contextlib.contextmanager
def postgres_server() -> Iterator[PostgresServer]:
    """A running server, or a skip saying why there cannot be one."""
    bin_dir = _bin_dir()
    if bin_dir is None or not (bin_dir / "initdb").exists():
        pytest.skip("PostgreSQL is not installed (initdb, pg_ctl): apt-get install postgresql")
    server = PostgresServer(bin_dir, _runner())
    try:
        yield server
    finally:
        server.close()
