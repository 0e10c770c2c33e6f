"""Which repository is asked, with auth.git, for a module or provider that does not exist."""

from __future__ import annotations

from pathlib import Path

from gitreg.auth.gate import GitQuestion
from gitreg.auth.stand_ins import StandIns
from gitreg.catalog.auth_settings import GitCheck
from tests.conftest import WriteCatalog
from tests.support.gitrepo import GitRepo, module_files

GIT = "https://git.example.test"


def test_the_first_repository_of_the_namespace_stands_in(
    write_catalog: WriteCatalog, tmp_path: Path
) -> None:
    local = GitRepo(tmp_path / "local")
    local.release("v1.0.0", module_files("1.0.0"))
    (tmp_path / "releases").mkdir()
    catalog = write_catalog(f"""
        modules:
          - {{namespace: Team, name: zeta, system: aws, repo: "{GIT}/team/zeta.git"}}
          - {{namespace: team, name: alpha, system: aws, repo: "{GIT}/team/alpha.git"}}
          - {{namespace: alpha, name: x, system: aws, repo: "{GIT}/alpha/x.git"}}
          - {{namespace: local, name: x, system: aws, repo: {local.path}}}
        providers:
          - {{namespace: tools, type: widget, artifacts: releases, repo: "{GIT}/tools/w.git"}}
        """)
    stand_ins = StandIns.of(catalog, GitCheck())
    assert stand_ins.question("TEAM") == GitQuestion(f"{GIT}/team/alpha.git")
    assert stand_ins.question("tools") == GitQuestion(f"{GIT}/tools/w.git")
    # A namespace the catalog does not hold: the catalog's first, whose yes opens nothing.
    assert stand_ins.question("made-up") == GitQuestion(f"{GIT}/alpha/x.git", opens=False)
    # A namespace whose repositories are never asked (not https) asks nothing for any.
    assert stand_ins.question("local") is None
    assert StandIns.of(write_catalog("mirror: {}\n"), GitCheck()).question("team") is None
