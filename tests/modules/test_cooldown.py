"""`publish_when: {min_age}` over real HTTP, with real Git and a clock the test moves: a young
version is pending, published when its time comes (no push), and stays published."""

from __future__ import annotations

from pathlib import Path

import httpx

from gitreg.catalog.load import load_catalog
from gitreg.git.clone import PUBLISHED_REFS
from tests.support.clock import Clock
from tests.support.gitrepo import GitRepo, git, module_files
from tests.support.servers import RegistryServer, wait_until

TAGGED = 1_700_000_000.0  # the tagger date of the helper's annotated tags
HOUR = 3600.0


def _catalog(tmp_path: Path, repo: GitRepo, min_age: str) -> Path:
    path = tmp_path / "registry.yaml"
    path.write_text(
        "cache_dir: cache\nmodules:\n"
        f"  - {{namespace: infra, name: vpc, system: aws, repo: {repo.path},\n"
        f"     publish_when: {{min_age: {min_age}}}}}\n"
    )
    return path


def _versions(client: httpx.Client) -> list[str]:
    answer = client.get("/v1/modules/infra/vpc/aws/versions")
    assert answer.status_code == 200, answer.text
    return [v["version"] for v in answer.json()["modules"][0]["versions"]]


def test_young_versions_wait_then_publish_and_stay_published(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "vpc")
    repo.release("v1.0.0", module_files("1.0.0"), annotated=True)  # tagged at TAGGED
    repo.release("v1.1.0", module_files("1.1.0"))  # lightweight: first seen by gitreg
    clock = Clock(TAGGED + 3 * HOUR)
    path = _catalog(tmp_path, repo, "2h")
    server = RegistryServer(load_catalog(path), refresh=True, clock=clock)
    server.state.background.cooldown_every = 0.05  # the timer's bound: a test's clock jumps
    with server, httpx.Client(base_url=server.url) as client:
        # v1.0.0's tag is 3 h old; v1.1.0 was first seen now, and waits 2 h.
        assert _versions(client) == ["1.0.0"]
        assert client.get("/v1/modules/infra/vpc/aws/1.1.0/download").status_code == 404
        entry = server.sync.snapshot.index.get("infra", "vpc", "aws")
        assert entry is not None
        assert [(p.release.version, p.due) for p in entry.pending] == [("1.1.0", TAGGED + 5 * HOUR)]
        # Recorded tags, the pending one too, are held in the clone as published ones are.
        held = server.sync.snapshot.clones[entry.spec.repo].path
        refs = git(held, "for-each-ref", "--format=%(refname)", PUBLISHED_REFS).split()
        assert refs == [f"{PUBLISHED_REFS}v1.0.0", f"{PUBLISHED_REFS}v1.1.0"]
        clock.now = TAGGED + 5 * HOUR  # its time comes: no push, no poll
        wait_until(lambda: _versions(client) == ["1.1.0", "1.0.0"], what="v1.1.0 published")
        assert client.get("/v1/modules/infra/vpc/aws/1.1.0/download").status_code == 200
        location = entry.spec.repo
        ledger = server.sync.snapshot.ledgers[location]
        assert not ledger.read()["v1.1.0"].pending
        # A longer min_age never takes back what was published; a new tag waits for it.
        _catalog(tmp_path, repo, "30d")
        repo.release("v1.2.0", module_files("1.2.0"))
        assert server.reload()
        server.sync.sync_repo(location, "cli")
        assert _versions(client) == ["1.1.0", "1.0.0"]
        assert ledger.read()["v1.2.0"].pending


def test_removing_min_age_publishes_what_waited(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "vpc")
    repo.release("v1.0.0", module_files("1.0.0"))
    path = _catalog(tmp_path, repo, "1d")
    with (
        RegistryServer(load_catalog(path), clock=Clock(TAGGED)) as server,
        httpx.Client(base_url=server.url) as client,
    ):
        assert _versions(client) == []
        _catalog(tmp_path, repo, "0s")  # 0: off
        assert server.reload()
        assert _versions(client) == ["1.0.0"]
