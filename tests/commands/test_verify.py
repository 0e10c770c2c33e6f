"""`gitreg verify` run as a process on a cache a real server filled: a replaced or truncated
archive (a .tar.gz, or an OCI package's .zip) named with exit status 1, a rebuild from the clone
compared with the record, a progress line only on a terminal; under `state: postgres`, the
records read from a real PostgreSQL, and one out of reach a status 2 in one line."""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import psycopg
import pytest

from gitreg.catalog.load import load_catalog
from tests.support.gitrepo import GitRepo, module_files
from tests.support.postgres import PostgresServer
from tests.support.servers import RegistryServer, free_port
from tests.support.servers import run_gitreg as gitreg

DOWNLOAD = "/v1/modules/infra/net/aws/1.0.0/download"
DSN_ENV = "GITREG_VERIFY_DSN"


def _catalog(tmp_path: Path, extra: str = "") -> Path:
    """registry.yaml serving one module of a real Git repository made here."""
    GitRepo(tmp_path / "repo").release("v1.0.0", module_files("1.0.0", "modules/net"))
    config = tmp_path / "registry.yaml"
    config.write_text(
        f"cache_dir: cache\narchives: {{memory_budget: 0}}\n{extra}modules:\n"
        f"  - {{namespace: infra, name: net, system: aws, repo: {tmp_path / 'repo'},"
        " path: modules/net}\n"
    )
    return config


def _served(tmp_path: Path, extra: str = "") -> tuple[Path, Path]:
    """A catalog whose one archive a real server built and recorded: (registry.yaml, archive)."""
    config = _catalog(tmp_path, extra)
    with RegistryServer(load_catalog(config)) as server:
        location = httpx.get(server.url + DOWNLOAD).headers["x-terraform-get"]
        assert httpx.get(server.url + location.partition("//")[0]).status_code == 200
    (archive,) = (tmp_path / "cache" / "archives").rglob("*.tar.gz")
    return config, archive


def _zipped(tmp_path: Path) -> tuple[Path, Path]:
    """A catalog whose one OCI package's zip a real server built and recorded, as OpenTofu
    pulls it: (registry.yaml, the zip)."""
    config = _catalog(tmp_path, "oci: {enabled: true}\n")
    with RegistryServer(load_catalog(config)) as server:
        manifest = httpx.get(server.url + "/v2/infra/net/aws/manifests/1.0.0").json()
        (layer,) = manifest["layers"]
        blob = httpx.get(server.url + "/v2/infra/net/aws/blobs/" + layer["digest"])
        assert blob.status_code == 200
    (archive,) = (tmp_path / "cache" / "zips").rglob("*.zip")
    assert archive.read_bytes() == blob.content
    return config, archive


def _digests(tmp_path: Path) -> Path:
    (found,) = (tmp_path / "cache" / "ledgers").glob("*.digests.json")
    return found


def test_every_archive_matching_its_record_is_status_0_and_says_nothing_else(
    tmp_path: Path,
) -> None:
    config, _ = _served(tmp_path)
    done = gitreg("verify", "--config", str(config), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == "1 archives checked, 1 match, 0 do not\n"
    assert done.stderr == ""  # piped: no progress line
    rebuilt = gitreg("verify", "--rebuild", "--config", str(config), cwd=tmp_path)
    assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
    assert rebuilt.stdout == "2 archives checked, 2 match, 0 do not\n"


def test_a_replaced_or_truncated_archive_is_named_with_status_1(tmp_path: Path) -> None:
    config, archive = _served(tmp_path)
    original = archive.read_bytes()
    for changed in (b"other bytes", original[: len(original) // 2]):
        archive.write_bytes(changed)
        done = gitreg("verify", "--config", str(config), cwd=tmp_path)
        assert done.returncode == 1
        (line, summary) = done.stdout.splitlines()
        assert line.startswith(f"{archive}: sha256:")
        assert "is recorded (replaced or corrupted)" in line
        assert summary == "1 archives checked, 0 match, 1 do not"


def test_an_archive_with_no_record_is_named(tmp_path: Path) -> None:
    config, archive = _served(tmp_path)
    _digests(tmp_path).write_text("{}")
    done = gitreg("verify", "--config", str(config), cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout.splitlines()[0] == f"{archive}: no digest is recorded for it"


@pytest.mark.parametrize("cached", [_served, _zipped], ids=["tar.gz", "zip"])
def test_a_rebuild_that_differs_from_the_record_is_named_with_status_1(
    tmp_path: Path, cached: Callable[[Path], tuple[Path, Path]]
) -> None:
    config, archive = cached(tmp_path)
    archive.unlink()  # the cache says nothing now: only the rebuild can
    _digests(tmp_path).write_text(json.dumps({archive.name: "0" * 64}))
    assert gitreg("verify", "--config", str(config), cwd=tmp_path).returncode == 0
    done = gitreg("verify", "--rebuild", "--config", str(config), cwd=tmp_path)
    assert done.returncode == 1
    (line, summary) = done.stdout.splitlines()
    assert line.startswith(f"{archive.name} rebuilt from {tmp_path / 'cache' / 'git'}")
    assert line.endswith(f"but sha256:{'0' * 64} is recorded")
    assert summary == "1 archives checked, 0 match, 1 do not"
    assert not archive.exists()  # built elsewhere: the cache is never written


def test_a_terminal_sees_a_progress_counter_on_stderr(tmp_path: Path) -> None:
    config, _ = _served(tmp_path)
    leader, follower = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    with subprocess.Popen(
        [sys.executable, "-m", "gitreg", "verify", "--config", str(config)],
        stdout=follower,
        stderr=follower,
        cwd=tmp_path,
        env=env,
    ) as process:
        os.close(follower)
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal's other end closed: the process ended
                break
            if not chunk:
                break
            seen += chunk
        assert process.wait() == 0
    os.close(leader)
    assert b"gitreg verify: 1/1" in seen
    assert b"1 archives checked, 1 match, 0 do not" in seen


def test_a_missing_config_is_status_2(tmp_path: Path) -> None:
    done = gitreg("verify", "--config", str(tmp_path / "nothing.yaml"), cwd=tmp_path)
    assert done.returncode == 2


def test_digests_that_cannot_be_read_are_status_2_in_one_line(tmp_path: Path) -> None:
    config, _ = _served(tmp_path)
    _digests(tmp_path).write_text("not json")
    done = gitreg("verify", "--config", str(config), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("gitreg: verify: cannot read the recorded digests: ")
    assert done.stderr.count("\n") == 1


def test_an_oci_zip_is_checked_and_rebuilt_like_a_tarball(tmp_path: Path) -> None:
    config, archive = _zipped(tmp_path)
    assert not list((tmp_path / "cache" / "archives").rglob("*.tar.gz"))  # the zip alone
    done = gitreg("verify", "--config", str(config), cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "1 archives checked, 1 match, 0 do not\n")
    rebuilt = gitreg("verify", "--rebuild", "--config", str(config), cwd=tmp_path)
    assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
    assert rebuilt.stdout == "2 archives checked, 2 match, 0 do not\n"
    changed = bytearray(archive.read_bytes())
    changed[len(changed) // 2] ^= 0xFF  # one byte of the zip replaced
    archive.write_bytes(changed)
    done = gitreg("verify", "--config", str(config), cwd=tmp_path)
    assert done.returncode == 1
    (line, summary) = done.stdout.splitlines()
    assert line.startswith(f"{archive}: sha256:")
    assert line.endswith("is recorded (replaced or corrupted)")
    assert summary == "1 archives checked, 0 match, 1 do not"


def _shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dsn: str) -> tuple[Path, Path]:
    """As `_served`, the digest recorded in PostgreSQL (`state: postgres`) at `dsn`."""
    monkeypatch.setenv(DSN_ENV, dsn)
    return _served(tmp_path, f"state:\n  postgres: {{dsn_env: {DSN_ENV}}}\n")


def test_under_state_postgres_the_digests_are_read_from_the_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database_url: str
) -> None:
    config, archive = _shared(tmp_path, monkeypatch, database_url)
    # This host's copies of the records are not what is read: the database is.
    shutil.rmtree(tmp_path / "cache" / "ledgers-confirmed")
    done = gitreg("verify", "--rebuild", "--config", str(config), cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, ""), done.stdout + done.stderr
    assert done.stdout == "2 archives checked, 2 match, 0 do not\n"
    original = archive.read_bytes()
    archive.write_bytes(original[: len(original) // 2])  # truncated
    done = gitreg("verify", "--config", str(config), cwd=tmp_path)
    assert done.returncode == 1
    (line, summary) = done.stdout.splitlines()
    assert line.startswith(f"{archive}: sha256:") and line.endswith("(replaced or corrupted)")
    assert summary == "1 archives checked, 0 match, 1 do not"
    archive.write_bytes(original)
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("UPDATE gitreg_archive_digests SET digest = %s", ("0" * 64,))
    done = gitreg("verify", "--config", str(config), cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout.splitlines()[0].endswith(
        f"but sha256:{'0' * 64} is recorded (replaced or corrupted)"
    )


def test_a_database_out_of_reach_is_status_2_in_one_line_with_no_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, postgres: PostgresServer, database_url: str
) -> None:
    config, _ = _shared(tmp_path, monkeypatch, database_url)
    nobody = f"postgresql://gitreg:{postgres.password}@127.0.0.1:{free_port()}/postgres"
    wrong = database_url.replace(postgres.password, "not-the-password-4711")
    for dsn, reason in ((nobody, "connection refused"), (wrong, "authentication failed")):
        monkeypatch.setenv(DSN_ENV, dsn)
        done = gitreg("verify", "--config", str(config), cwd=tmp_path)
        assert done.returncode == 2
        assert done.stdout == ""
        assert done.stderr == (
            f"gitreg: verify: cannot read the recorded digests: PostgreSQL: cannot connect: {reason}\n"
        )
        assert postgres.password not in done.stderr and "not-the-password" not in done.stderr
    # A database no replica has used (no tables yet) records nothing: each archive is named.
    monkeypatch.setenv(DSN_ENV, postgres.database())
    done = gitreg("verify", "--config", str(config), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[0].endswith(": no digest is recorded for it")
