"""Download counts of replicas on one real PostgreSQL (real `gitreg serve` processes): each adds
its installs to the one table, so that the sums agree whichever replica answers; with the
database down, installs are answered and their counts lost, said in /v1/status."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.gitrepo import GitRepo, module_files
from tests.support.postgres import PostgresServer
from tests.support.replicas import Replica, replicas, start_all
from tests.support.servers import bare_clone, git_daemon, wait_until

MODULE = "/v1/modules/org/repo/x"
TERRAFORM = {"User-Agent": "Terraform/1.11.4"}


@pytest.fixture
def git_base(tmp_path: Path) -> Iterator[str]:
    work = GitRepo(tmp_path / "work")
    work.release("v1.0.0", module_files("1.0.0"))
    bare_clone(work.path, tmp_path / "server" / "org" / "repo.git")
    with git_daemon(tmp_path / "server") as base:
        yield base


def install(replica: Replica) -> None:
    answer = httpx.get(f"{replica.url}{MODULE}/1.0.0/download", headers=TERRAFORM, timeout=10)
    assert answer.status_code == 200, answer.text


def total(replica: Replica) -> int:
    answer = httpx.get(f"{replica.url}{MODULE}/downloads/summary", timeout=10)
    if answer.status_code != 200:
        return -1
    count: int = answer.json()["data"]["attributes"]["total"]
    return count


def counting(replica: Replica) -> dict[str, object]:
    status: dict[str, object] = httpx.get(f"{replica.url}/v1/status", timeout=10).json()
    downloads: dict[str, object] = status["downloads"]  # type: ignore[assignment]
    return downloads


def test_replicas_add_to_one_count_and_lose_counts_not_requests_when_it_is_down(
    tmp_path: Path, git_base: str, postgres: PostgresServer, database_url: str
) -> None:
    with replicas(tmp_path, git_base, 2) as (first, second):
        start_all((first, second), database_url)
        for _ in range(3):
            install(first)
        for _ in range(2):
            install(second)
        # Each writes its batch within a few seconds; the deadline bounds a busy machine's wait.
        wait_until(lambda: total(first) == total(second) == 5, 30, "both replicas to say 5")

        postgres.stop()
        try:
            install(first)
            install(first)
            wait_until(lambda: counting(first)["lost_events"] == 2, 30, "the loss to be counted")
            assert counting(first)["lost_batches"] == 1
            assert counting(first)["problem"]
            assert postgres.password not in str(counting(first))
        finally:
            postgres.start()
        install(second)
        wait_until(lambda: total(first) == total(second) == 6, 60, "both replicas to say 6")
