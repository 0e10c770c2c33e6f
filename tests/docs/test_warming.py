"""The serving app warms the docs of each module's latest version in the background, at start
and after each snapshot swap, so that lists find descriptions in memory (`known`)."""

from __future__ import annotations

from pathlib import Path

from gitreg.modules.index import ModuleEntry
from tests.conftest import WriteCatalog
from tests.support.gitrepo import GitRepo
from tests.support.servers import RegistryServer, wait_until


def test_the_latest_versions_are_warmed_at_start_and_after_a_swap(
    tmp_path: Path, write_catalog: WriteCatalog
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.release("v1.0.0", {"README.md": "First.\n", "main.tf": 'variable "a" {}\n'})
    catalog = write_catalog(
        f"modules:\n  - {{namespace: a, name: m, system: x, repo: {repo.path}}}\n"
    )
    with RegistryServer(catalog) as server:
        docs, sync = server.state.docs, server.sync

        def latest_description() -> str | None:
            entry = sync.snapshot.index.get("a", "m", "x")
            assert isinstance(entry, ModuleEntry)
            return docs.description(entry, entry.versions.releases[0])

        wait_until(lambda: latest_description() == "First.", what="the start-up warming")
        repo.release("v1.1.0", {"README.md": "Second.\n"})
        sync.sync_repo(next(iter(sync.snapshot.clones)), "cli")
        wait_until(lambda: latest_description() == "Second.", what="the warming after a swap")
    assert docs.builds == 2
