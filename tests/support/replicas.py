"""Replicas as an operator runs them: several real `gitreg serve` processes on 127.0.0.1, each
with a cache_dir of its own, all on one PostgreSQL (state.postgres), one Git server behind them."""

from __future__ import annotations

import contextlib
import os
import signal
import ssl
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO

import httpx

from gitreg.process.tlscert import TlsMaterial
from tests.support.servers import answers, free_port, public_cas, start_gitreg, wait_until
from tests.support.tls_clients import trusting
from tests.support.webhook_payloads import FORGES

SECRET = "replicas-test-webhook-secret"
DSN_ENV = "GITREG_REPLICAS_DSN"
SECRET_ENV = "GITREG_REPLICAS_SECRET"


class Replica:
    def __init__(
        self,
        root: Path,
        name: str,
        git_base: str,
        refresh: str = "1h",
        tls: TlsMaterial | None = None,
    ) -> None:
        self.name = name
        self.tls = tls
        self.folder = root / name
        self.folder.mkdir(parents=True, exist_ok=True)
        self.config = self.folder / "registry.yaml"
        self.config.write_text(
            f"cache_dir: cache\nrefresh_interval: {refresh}\nfresh_reads: 0\n"
            f"webhooks: {{secret_env: {SECRET_ENV}}}\n"
            f"state:\n  postgres: {{dsn_env: {DSN_ENV}}}\n"
            f"modules:\n  - {{namespace: org, name: repo, system: x, repo: '{git_base}/org/repo.git'}}\n"
        )
        self.port = free_port()
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        self.verify: ssl.SSLContext | bool = trusting(tls.ca_cert) if tls else public_cas()
        self.process: subprocess.Popen[str] | None = None
        self._log: IO[str] | None = None

    def start(self, dsn: str) -> Replica:
        self.launch(dsn)
        return self.ready()

    def launch(self, dsn: str) -> None:
        """The process started; `ready` waits for it to serve (`start_all` starts several, then
        waits for each, as an orchestrator starts replicas)."""
        os.environ[DSN_ENV] = dsn
        os.environ[SECRET_ENV] = SECRET
        log = (self.folder / "serve.log").open("a")
        self._log = log
        tls_args = []
        if self.tls is not None:
            tls_args = ["--certfile", str(self.tls.certfile), "--keyfile", str(self.tls.keyfile)]
        self.process = start_gitreg(
            "serve",
            "--config",
            str(self.config),
            "--listen",
            f"127.0.0.1:{self.port}",
            *tls_args,
            output=log,
        )

    def ready(self) -> Replica:
        wait_until(
            lambda: answers(f"{self.url}/readyz", self.verify), 30, f"replica {self.name} to serve"
        )
        # Listening to the others (until then, it says it is degraded).
        wait_until(lambda: self.readiness()[1]["degraded"] is False, 30, f"{self.name} to listen")
        return self

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        self._close_log()

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self.process = None
        self._close_log()

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    def output(self) -> str:
        return (self.folder / "serve.log").read_text()

    def versions(self) -> list[str]:
        try:
            answer = httpx.get(
                f"{self.url}/v1/modules/org/repo/x/versions", timeout=5, verify=self.verify
            )
        except httpx.HTTPError:
            return []
        if answer.status_code != 200:
            return []
        return sorted(v["version"] for v in answer.json()["modules"][0]["versions"])

    def archive(self, version: str) -> bytes:
        download = httpx.get(
            f"{self.url}/v1/modules/org/repo/x/{version}/download", timeout=10, verify=self.verify
        )
        location = download.headers["x-terraform-get"]
        archive = httpx.get(f"{self.url}{location}", timeout=30, verify=self.verify)
        assert archive.status_code == 200, archive.text
        return archive.content

    def fetched(self) -> bool:
        """Whether it has fetched the repository: until then, a replica started with no clone
        lists what the others read, and answers its archives with a 503 (its clone is made)."""
        try:
            answer = httpx.get(f"{self.url}/v1/status", timeout=5, verify=self.verify)
        except httpx.HTTPError:
            return False
        return answer.status_code == 200 and answer.json()["repositories"][0]["state"] == "ok"

    def webhook(self) -> int:
        body, headers = FORGES["generic-hmac"].request("127.0.0.1", "org/repo", "", SECRET)
        posted = httpx.post(
            f"{self.url}/v1/webhooks/generic",
            content=body,
            headers=headers,
            timeout=10,
            verify=self.verify,
        )
        return posted.status_code

    def readiness(self) -> tuple[int, dict[str, object]]:
        answer = httpx.get(f"{self.url}/readyz", timeout=5, verify=self.verify)
        body: dict[str, object] = answer.json()
        return answer.status_code, body


def start_all(group: Sequence[Replica], dsn: str) -> None:
    """Every replica started at once, then each waited for until it serves and has fetched the
    repository's first version (one that starts late lists it from another's read at once)."""
    for replica in group:
        replica.launch(dsn)
    for replica in group:
        replica.ready()
        wait_until(
            lambda r=replica: r.versions() == ["1.0.0"] and r.fetched(),  # type: ignore[misc]
            30,
            "the first sync",
        )


@contextlib.contextmanager
def replicas(
    root: Path, git_base: str, count: int, refresh: str = "1h", tls: TlsMaterial | None = None
) -> Iterator[list[Replica]]:
    made = [Replica(root, f"replica{i}", git_base, refresh, tls) for i in range(count)]
    try:
        yield made
    finally:
        for replica in made:
            replica.stop()
