"""`gitreg serve --workers N` as a real process: every worker serves the one socket; SIGTERM
stops them all (exit 0), SIGHUP reloads every one, a worker that dies is started again, and
workers that keep dying stop the server (exit 1)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from gitreg.process.workers import MAX_DEATHS
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import run_gitreg, wait_until
from tests.support.workers import serving

VPC = "/v1/modules/infra/vpc/aws/versions"
DNS = "/v1/modules/infra/dns/aws/versions"
MODULES = "modules:\n  - {namespace: infra, name: vpc, system: aws, repo: repo}\n"


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    GitRepo(tmp_path / "repo").release("v1.0.0", module_files("1.0.0"))
    # Not watched: SIGHUP alone makes the workers read it again.
    path = tmp_path / "registry.yaml"
    path.write_text(f"cache_dir: cache\nwatch_catalog: false\n{MODULES}")
    return path


def test_every_worker_serves_and_sigterm_stops_them_all(catalog: Path) -> None:
    with serving(catalog, 3) as server:
        answers = server.by_worker(VPC)
        assert sorted(answers) == ["0", "1", "2"]
        assert all(
            r.json()["modules"][0]["versions"] == [{"version": "1.0.0"}] for r in answers.values()
        )
        workers = server.pids()
        assert len(workers) == 3
        assert server.stop() == 0
    assert not any(Path(f"/proc/{pid}").exists() for pid in workers)
    assert server.output().count("gitreg.server: stopped") == 3


def test_sighup_reloads_every_worker(catalog: Path) -> None:
    with serving(catalog) as server:
        assert {r.status_code for r in server.by_worker(DNS).values()} == {404}
        catalog.write_text(
            catalog.read_text() + "  - {namespace: infra, name: dns, system: aws, repo: repo}\n"
        )
        os.kill(server.process.pid, signal.SIGHUP)
        wait_until(
            lambda: {r.status_code for r in server.by_worker(DNS).values()} == {200},
            30,
            "every worker to serve the module added",
        )
        # Each logs it once the reload's fetch of the new repository ended, after it is served.
        wait_until(lambda: server.output().count("catalog reloaded") == 2, 30, "two summaries")
        assert server.stop() == 0


def test_a_worker_that_dies_is_started_again(catalog: Path) -> None:
    with serving(catalog) as server:
        before = server.pids()
        os.kill(min(before), signal.SIGKILL)
        wait_until(lambda: len(server.pids() - before) == 1, 30, "a new worker")
        server.wait_ready()
        assert sorted(server.by_worker(VPC)) == ["0", "1"]
        assert server.stop() == 0
    assert "restarting it" in server.output()


def test_workers_that_keep_dying_stop_the_server(catalog: Path) -> None:
    killed: set[int] = set()

    def two_alive() -> bool:
        return len(server.pids() - killed) == 2

    with serving(catalog) as server:
        for _ in range(MAX_DEATHS):
            wait_until(two_alive, 30, "two workers")
            victim = min(server.pids() - killed)
            survivors = server.pids() - {victim}
            os.kill(victim, signal.SIGKILL)
            killed.add(victim)
        assert server.process.wait(timeout=60) == 1
    assert not any(Path(f"/proc/{pid}").exists() for pid in survivors)  # stopped, not left
    assert f"{MAX_DEATHS} workers ended within" in server.output()


@pytest.mark.parametrize("workers", ["0", "65", "two"])
def test_a_worker_count_out_of_bounds_is_refused(catalog: Path, workers: str) -> None:
    done = run_gitreg("serve", "--config", str(catalog), "--workers", workers)
    assert done.returncode == 2
    assert "--workers" in done.stderr
