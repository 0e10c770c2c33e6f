"""Modules of one repository with different readers: archives narrowed to their folder when
`archive` is left out, `archive: repository` and a folder holding another's refused with the key
path and line; what `gitreg check` and `serve` say of it."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from gitreg.catalog.archive_scopes import narrowed_notices
from gitreg.catalog.load import load_catalog
from gitreg.catalog.model import Catalog
from tests.support.gitrepo import GitRepo, module_files
from tests.support.refused_catalogs import refused
from tests.support.servers import answers, free_port, run_gitreg, start_serve, wait_until

AUTH = 'auth:\n  public: [open, "shared-*"]\n'


def _write(root: Path, modules: str, auth: str = AUTH) -> Path:
    for name in ("mono", "other"):
        if not (root / name).exists():
            GitRepo(root / name)
    (root / "registry.yaml").write_text(f"cache_dir: cache\nmodules:\n{modules}{auth}")
    return root / "registry.yaml"


def _load(root: Path, modules: str, auth: str = AUTH) -> Catalog:
    return load_catalog(_write(root, modules, auth))


def _scopes(catalog: Catalog) -> list[tuple[str, tuple[str, ...]]]:
    return [(m.archive, m.archive_narrowed_by) for m in catalog.modules]


NARROWED = ("folder", ("secret",))
WHOLE: tuple[str, tuple[str, ...]] = ("repository", ())


@pytest.mark.parametrize(
    ("second", "expected"),
    [
        # A private neighbour: both narrowed (each has readers the other lacks).
        ("{namespace: secret, name: b, system: x, repo: mono, path: modules/b}",
         [NARROWED, ("folder", ("open",))]),
        # Namespaces compare without case, as they are looked up.
        ("{namespace: Open, name: b, system: x, repo: mono, path: modules/b}", [WHOLE, WHOLE]),
        # Both public (a pattern covers the other): the same readers.
        ("{namespace: shared-net, name: b, system: x, repo: mono, path: modules/b}",
         [WHOLE, WHOLE]),
        # The same repository written another way (its .git folder): still one repository.
        ("{namespace: secret, name: b, system: x, repo: mono/.git, path: modules/b}",
         [NARROWED, ("folder", ("open",))]),
        # Another repository.
        ("{namespace: secret, name: b, system: x, repo: other, path: modules/b}", [WHOLE, WHOLE]),
        # A git-mode neighbour's code is in the repository all the same; it gets no archive.
        ("{namespace: secret, name: b, system: x, repo: mono, path: modules/b, download: git,"
         " archive: repository}", [NARROWED, WHOLE]),
        # The same folder under two names: the same code, each narrowed to it.
        ("{namespace: secret, name: b, system: x, repo: mono, path: modules/a}",
         [NARROWED, ("folder", ("open",))]),
        # A private module at the root holds the public one's folder: that is public code.
        ("{namespace: secret, name: b, system: x, repo: mono}", [NARROWED, WHOLE]),
    ],
)  # fmt: skip
def test_who_gets_an_archive_of_its_folder_only(
    tmp_path: Path, second: str, expected: list[tuple[str, tuple[str, ...]]]
) -> None:
    modules = (
        f"  - {{namespace: open, name: a, system: x, repo: mono, path: modules/a}}\n  - {second}\n"
    )
    assert _scopes(_load(tmp_path, modules)) == expected


def test_without_auth_everything_is_public_and_nothing_changes(tmp_path: Path) -> None:
    modules = (
        "  - {namespace: open, name: a, system: x, repo: mono, path: modules/a}\n"
        "  - {namespace: secret, name: b, system: x, repo: mono, path: modules/b}\n"
    )
    assert _scopes(_load(tmp_path, modules, auth="")) == [WHOLE, WHOLE]


def test_an_archive_written_as_folder_stays_and_is_not_warned_of(tmp_path: Path) -> None:
    modules = (
        "  - {namespace: open, name: a, system: x, repo: mono, path: modules/a, archive: folder}\n"
        "  - {namespace: secret, name: b, system: x, repo: mono, path: modules/b}\n"
    )
    assert _scopes(_load(tmp_path, modules)) == [("folder", ()), ("folder", ("open",))]


def test_archive_repository_written_on_such_a_module_is_refused(tmp_path: Path) -> None:
    modules = (
        "  - {namespace: secret, name: b, system: x, repo: mono, path: modules/b}\n"
        "  - namespace: open\n"
        "    name: a\n"
        "    system: x\n"
        "    repo: mono\n"
        "    path: modules/a\n"
        "    archive: repository\n"
    )
    refusal = refused(_write(tmp_path, modules))
    assert [(p.path, p.line) for p in refusal.problems] == [("modules[1].archive", 9)]
    assert "'repository' would put the code of namespace 'secret' in this module's archive" in str(
        refusal
    )


@pytest.mark.parametrize(
    ("outer", "where"),
    [
        ("{namespace: open, name: a, system: x, repo: mono}", ("modules[0]", 3)),
        ("{namespace: open, name: a, system: x, repo: mono, download: git}", ("modules[0]", 3)),
        ("{namespace: shared-x, name: a, system: x, repo: mono, path: modules}",
         ("modules[0].path", 3)),
    ],
)  # fmt: skip
def test_a_folder_that_holds_a_module_of_other_readers_is_refused(
    tmp_path: Path, outer: str, where: tuple[str, int]
) -> None:
    """Its folder's archive, and its docs (modules/*), would show the inner module's code."""
    modules = (
        f"  - {outer}\n  - {{namespace: secret, name: b, system: x, repo: mono, path: modules/b}}\n"
    )
    refusal = refused(_write(tmp_path, modules))
    assert [(p.path, p.line) for p in refusal.problems] == [where]
    assert "holds module secret/b/x (modules/b), which has other readers" in str(refusal)


@pytest.fixture
def shared_repository(tmp_path: Path) -> Path:
    mono = GitRepo(tmp_path / "mono")
    mono.write(module_files("secret", "modules/b"))
    mono.release("v1.0.0", module_files("open", "modules/a"))
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\nmodules:\n"
        "  - {namespace: open, name: a, system: x, repo: mono, path: modules/a}\n"
        "  - {namespace: secret, name: b, system: x, repo: mono, path: modules/b}\n"
        "  - {namespace: secret, name: c, system: x, repo: mono, path: modules/b, archive: folder}\n"
        f"{AUTH}"
    )
    return tmp_path / "registry.yaml"


def test_check_warns_of_each_narrowed_module_and_its_neighbours(shared_repository: Path) -> None:
    done = run_gitreg("check", "--config", str(shared_repository))
    assert done.returncode == 0, done.stdout + done.stderr
    warnings = [line for line in done.stdout.splitlines() if ".archive:" in line]
    assert warnings == [
        "warning: modules[0].archive: open/a/x's archives hold only its folder modules/a, not the"
        " whole repository: the repository also holds modules of namespace 'secret', whose"
        " readers differ (write archive: folder to say so)",
        "warning: modules[1].archive: secret/b/x's archives hold only its folder modules/b, not"
        " the whole repository: the repository also holds modules of namespace 'open', whose"
        " readers differ (write archive: folder to say so)",
    ]


def test_check_refuses_archive_repository_with_its_key_path_and_line(
    shared_repository: Path,
) -> None:
    text = shared_repository.read_text()
    shared_repository.write_text(
        text.replace("path: modules/a}", "path: modules/a, archive: repository}")
    )
    done = run_gitreg("check", "--config", str(shared_repository))
    assert done.returncode == 2
    assert "modules[0].archive (line 3): 'repository' would put the code of namespace 'secret'" in (
        done.stderr
    )


def test_serve_says_so_once_per_repository_at_start(shared_repository: Path) -> None:
    catalog = load_catalog(shared_repository)
    notices = narrowed_notices(catalog)
    assert len(notices) == 1  # one repository, two narrowed modules
    port = free_port()
    process = start_serve(shared_repository, port)
    try:
        wait_until(lambda: answers(f"http://127.0.0.1:{port}/readyz"), 60, "gitreg serving")
    finally:
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=30)
    assert process.returncode == 0, output
    assert output.count(notices[0]) == 1, output
    assert "open/a/x, secret/b/x hold only their own folder" in notices[0]
    assert "namespaces 'open', 'secret', whose readers differ" in notices[0]
