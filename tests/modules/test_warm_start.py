"""A start serves from the persisted index (cache_dir/index.jsonl) what its clones still hold,
before it reads or fetches anything; a repository whose refs moved while the server was
stopped, whose module changed in registry.yaml, or whose line is damaged is read from its
clone instead, and never served from the index as current."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from gitreg.git.location import RepoLocation
from gitreg.modules.index_keeper import FILE_NAME
from gitreg.modules.persisted import FORMAT, decode
from gitreg.modules.sync import ModuleSync
from gitreg.state.ledger import DiskLedger
from tests.support.gitrepo import GitRepo, git, module_files
from tests.support.listeners import SilentListener
from tests.support.servers import RegistryServer, git_daemon, wait_until

ADDRESS = "/v1/modules/org/repo/x/versions"


@dataclass
class Setup:
    work: GitRepo
    root: Path
    url: str  # where the Git server was; a silent listener after the first start
    silent: SilentListener | None = None

    def catalog(self, module: str = "", extra: str = "") -> Path:
        path = self.root / "registry.yaml"
        path.write_text(
            # No fresh reads: a request would read the repository itself. A short fetch timeout:
            # the fetches to the silent listener end within the test.
            f"cache_dir: cache\nrefresh_interval: 1h\nfresh_reads: 0\nfetch_timeout: 5s\n{extra}"
            f"modules:\n  - {{namespace: org, name: repo, system: x, repo: '{self.url}'{module}}}\n"
        )
        return path

    @property
    def index(self) -> Path:
        return self.root / "cache" / FILE_NAME

    @property
    def port(self) -> int:
        return int(self.url.split(":")[2].split("/")[0])


def versions(client: httpx.Client) -> list[str] | int:
    """The versions listed, or the status when it is not 200."""
    response = client.get(ADDRESS)
    if response.status_code != 200:
        return response.status_code
    return [v["version"] for v in response.json()["modules"][0]["versions"]]


def first_start(setup: Setup, config: Path) -> ModuleSync:
    """A start that fetches the repository, then stops: the index is written as it stops."""
    with (
        RegistryServer(load_catalog(config), fetch_first=None) as server,
        httpx.Client(base_url=server.url, timeout=10) as client,
    ):
        wait_until(lambda: versions(client) == ["1.0.0"])
    assert setup.index.is_file()
    return server.sync


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[Setup]:
    work = GitRepo(tmp_path / "work")
    work.release("v1.0.0", module_files("1.0.0"))
    git(tmp_path, "clone", "--bare", "-q", str(work.path), str(tmp_path / "server" / "repo.git"))
    with git_daemon(tmp_path / "server") as base:
        done = Setup(work, tmp_path, f"{base}/repo.git")
        first_start(done, done.catalog())
    # From now on the Git server accepts connections and never answers: nothing is fetched.
    with SilentListener(port=done.port) as done.silent:
        yield done


class HeldRead:
    """`ModuleSync.read_clones` held until `go_on`: what a start serves before it reads a clone."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.reading, self.go_on = threading.Event(), threading.Event()
        self.asked: list[list[RepoLocation]] = []
        read_clones = ModuleSync.read_clones

        def held(sync: ModuleSync, locations: Iterable[RepoLocation] | None = None) -> int:
            self.asked.append(list(locations or []))
            self.reading.set()
            self.go_on.wait(30)
            return read_clones(sync, locations)

        monkeypatch.setattr(ModuleSync, "read_clones", held)


@contextlib.contextmanager
def started(setup: Setup, config: Path) -> Iterator[httpx.Client]:
    """A server of `config` that starts as `gitreg serve` does; the silent Git server closed
    before it stops, so that the fetch held there fails then, not after the test."""
    with (
        RegistryServer(load_catalog(config), fetch_first=None) as server,
        httpx.Client(base_url=server.url, timeout=10) as client,
    ):
        try:
            yield client
        finally:
            assert setup.silent is not None
            setup.silent.close()


@contextlib.contextmanager
def second_start(setup: Setup, held: HeldRead) -> Iterator[httpx.Client]:
    with started(setup, setup.catalog()) as client:
        try:
            assert held.reading.wait(10)
            yield client
        finally:
            held.go_on.set()


def test_a_warm_start_serves_the_index_before_any_read_or_fetch(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = HeldRead(monkeypatch)
    with second_start(setup, held) as client:
        assert versions(client) == ["1.0.0"]  # no clone read, no fetch: from the index
        assert held.asked == [[]]  # no repository is left to read from its clone
        assert client.get("/readyz").status_code in (200, 503)  # answers, whatever it says
    # Written again as it stops: what it served from the index stays in it.
    assert [decode(line).url for line in setup.index.read_text().splitlines()] == [setup.url]


def test_refs_moved_while_stopped_are_read_from_the_clone(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    setup.work.release("v1.1.0", module_files("1.1.0"))
    clone = next((setup.root / "cache" / "git").glob("*.git"))
    git(
        setup.root,
        "--git-dir",
        str(clone),
        "fetch",
        "-q",
        str(setup.work.path),
        "v1.1.0:refs/tags/v1.1.0",
    )
    held = HeldRead(monkeypatch)
    with second_start(setup, held) as client:
        assert versions(client) == 503  # the index's 1.0.0 alone would be stale: not served
        held.go_on.set()
        wait_until(lambda: versions(client) == ["1.1.0", "1.0.0"])


def test_a_ledger_changed_while_stopped_is_read_anew(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    (ledger,) = (setup.root / "cache" / "ledgers").glob("*.json")
    DiskLedger(ledger).accept("v1.0.0", "0" * 40)  # as `gitreg accept` would, say
    held = HeldRead(monkeypatch)
    with second_start(setup, held) as client:
        assert versions(client) == 503  # read with the ledger as it was: not used
        held.go_on.set()
        wait_until(lambda: versions(client) != 503)


def test_a_module_changed_in_registry_yaml_is_read_anew(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = setup.catalog(module=", tags: 'release-{version}'")
    held = HeldRead(monkeypatch)
    with started(setup, config) as client:
        try:
            assert held.reading.wait(10)
            assert versions(client) == 503  # the line was read for the old template: not used
        finally:
            held.go_on.set()
        wait_until(lambda: versions(client) == [])  # its clone holds no release-* tag


@pytest.mark.parametrize("damage", ["garbage", "cut short", "another format", "empty"])
def test_a_damaged_index_is_ignored_and_written_anew(
    setup: Setup, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, damage: str
) -> None:
    line = setup.index.read_text().splitlines()[0]
    damaged = {
        "garbage": "\x00\xffnot an index at all\n",
        "cut short": line[: len(line) // 2],
        "another format": _reformatted(line, 99),
        "empty": "",
    }[damage]
    setup.index.write_text(damaged)
    held = HeldRead(monkeypatch)
    caplog.set_level(logging.WARNING, "gitreg")
    with second_start(setup, held) as client:
        if damage != "empty":
            assert versions(client) == 503  # read from the clone, never from a damaged line
        held.go_on.set()
        wait_until(lambda: versions(client) == ["1.0.0"])
    if damage != "empty":
        assert "cannot be used" in caplog.text
    assert decode(setup.index.read_text().splitlines()[0]).url == setup.url  # written anew


def _reformatted(line: str, version: int) -> str:
    """The line as another format would write it, digest and all."""
    text = line.partition(" ")[2].replace(f"[{FORMAT},", f"[{version},", 1)
    return f"{hashlib.sha256(text.encode()).hexdigest()} {text}\n"
