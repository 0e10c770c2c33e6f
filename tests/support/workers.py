"""A real `gitreg serve --workers N` for tests: its workers told apart by the X-Gitreg-Worker
header of their answers, and found as the parent's child processes."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx

from tests.support.servers import answers, free_port, public_cas, start_gitreg, wait_until

WORKER_HEADER = "x-gitreg-worker"


class Workers:
    """`gitreg serve --workers N --config CATALOG` on a free port; its output in `log`."""

    def __init__(self, catalog: Path, workers: int = 2, *extra: str) -> None:
        self.workers = workers
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = catalog.parent / f"gitreg-{self.port}.log"
        self._output = open(self.log, "w")  # noqa: SIM115 (closed in stop)
        self.process = start_gitreg(
            "serve",
            "--config",
            str(catalog),
            "--listen",
            f"127.0.0.1:{self.port}",
            "--workers",
            str(workers),
            *extra,
            output=self._output,
        )

    def output(self) -> str:
        return self.log.read_text()

    def pids(self) -> set[int]:
        """The workers' process ids (the parent's children)."""
        found: set[int] = set()
        with contextlib.suppress(OSError):  # the parent ended
            for task in Path(f"/proc/{self.process.pid}/task").iterdir():
                with contextlib.suppress(OSError):
                    found |= {int(pid) for pid in (task / "children").read_text().split()}
        return found

    def by_worker(self, path: str, rounds: int = 100) -> dict[str, httpx.Response]:
        """An answer to GET `path` from every worker: bursts of requests on new connections
        (which the workers share) until each has answered one."""
        seen: dict[str, httpx.Response] = {}

        async def burst() -> list[httpx.Response]:
            limits = httpx.Limits(max_keepalive_connections=0)
            async with httpx.AsyncClient(
                base_url=self.url, limits=limits, timeout=30, verify=public_cas()
            ) as client:
                return list(await asyncio.gather(*(client.get(path) for _ in range(8))))

        for _ in range(rounds):
            for response in asyncio.run(burst()):
                seen[response.headers[WORKER_HEADER]] = response
            if len(seen) == self.workers:
                return seen
        raise AssertionError(f"only workers {sorted(seen)} answered {path}")

    @contextlib.contextmanager
    def client_of(self, worker: int, tries: int = 500) -> Iterator[httpx.Client]:
        """A client whose one keep-alive connection the worker `worker` accepted: what it
        sends reaches that worker."""
        for _ in range(tries):
            one = httpx.Limits(max_connections=1)
            with httpx.Client(base_url=self.url, limits=one, verify=public_cas()) as c:
                if c.get("/healthz").headers[WORKER_HEADER] == str(worker):
                    yield c
                    return
        raise AssertionError(f"worker {worker} accepted none of {tries} connections")

    def wait_ready(self) -> None:
        wait_until(lambda: answers(f"{self.url}/readyz"), 30, "the workers to serve")
        wait_until(
            lambda: all(r.status_code == 200 for r in self.by_worker("/readyz").values()),
            30,
            "every worker to be ready",
        )

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout=60)
        finally:
            self._output.close()


@contextlib.contextmanager
def serving(catalog: Path, workers: int = 2, *extra: str) -> Iterator[Workers]:
    """Workers serving `catalog` and ready, stopped (SIGTERM, then SIGKILL) when the block ends."""
    server = Workers(catalog, workers, *extra)
    try:
        server.wait_ready()
        yield server
    finally:
        if server.process.poll() is None:
            server.process.send_signal(signal.SIGTERM)
            try:
                server.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.process.kill()
        server._output.close()
