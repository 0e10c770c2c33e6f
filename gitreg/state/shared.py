"""What the sync service needs of the state it may share with other replicas (`SharedState`),
and the default that shares nothing: the ledger on local disk (`LocalState`). Browser
sign-outs are recorded there too (`end_session`), for every worker and replica to honour, the
tokens people were issued at sign-in (`issued`), and download counts (`download_store`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol

from gitreg.git.location import RepoLocation
from gitreg.state.download_counts import DownloadStore
from gitreg.state.ended_sessions import EndedSessionFiles
from gitreg.state.issued_tokens import IssuedTokenFiles, IssuedTokens
from gitreg.state.ledger import DiskLedger, TagLedger, recorded_digests
from gitreg.state.sqlite_downloads import SqliteDownloads

# Called with a repository's URL when another replica says it changed, and with None when the
# replica may have missed such notices (it reconnected): then every repository is due a sync.
OnChange = Callable[[str | None], None]


class SharedState(Protocol):
    @property
    def issued(self) -> IssuedTokens:
        """Tokens issued to people who signed in (auth.login), and codes spent."""
        ...

    def ledger(self, location: RepoLocation, name: str) -> TagLedger:
        """The ledger of one repository (`name`: its clone's, unique in cache_dir)."""
        ...

    def announce(self, location: RepoLocation) -> None:
        """Tell the other replicas that what this one serves of `location` changed."""
        ...

    def may_poll(self, location: RepoLocation, lease: float) -> bool:
        """Whether this replica polls `location` this round; others hold it for `lease` s."""
        ...

    def listen(self, on_change: OnChange) -> None:
        """Start hearing other replicas' announcements (in a thread of its own)."""
        ...

    def saved_reads(self) -> dict[str, str]:
        """The reads replicas shared: repository URL → its line of the persisted index
        (blocks; StateUnavailable when out of reach)."""
        ...

    def save_reads(self, lines: Mapping[str, str]) -> None:
        """Share these reads (repository URL → line) with the other replicas (blocks;
        StateUnavailable when out of reach)."""
        ...

    def archive_digests(self) -> dict[str, dict[str, str]]:
        """Every archive digest recorded: clone name → archive file name → SHA-256 (hex), for
        `gitreg verify` (blocks; SourceError when they cannot be read, StateUnavailable when
        the shared state is out of reach)."""
        ...

    def problem(self) -> str | None:
        """Why the shared state cannot be used now (the registry is degraded), or None."""
        ...

    def end_session(self, session: str, expires: int) -> None:
        """Record a browser session as signed out, until its cookie `expires` (blocks)."""
        ...

    def session_ended(self, session: str, expires: int) -> bool:
        """Whether a browser session was signed out, here or on another replica (blocks)."""
        ...

    def download_store(self) -> DownloadStore:
        """Where download counts are kept: a store of its own, opened at first use."""
        ...

    def close(self) -> None: ...


class LocalState:
    """No sharing: one ledger file per repository in cache_dir/ledgers."""

    def __init__(self, cache_dir: Path) -> None:
        self.cache_dir = cache_dir
        self.directory = cache_dir / "ledgers"
        self.ended = EndedSessionFiles(cache_dir)
        self.issued: IssuedTokens = IssuedTokenFiles(cache_dir)

    def ledger(self, location: RepoLocation, name: str) -> TagLedger:
        return DiskLedger(self.directory / f"{name}.json")

    def announce(self, location: RepoLocation) -> None:
        pass

    def may_poll(self, location: RepoLocation, lease: float) -> bool:
        return True

    def listen(self, on_change: OnChange) -> None:
        pass

    def saved_reads(self) -> dict[str, str]:
        return {}  # no other replica: cache_dir's own index is all there is

    def save_reads(self, lines: Mapping[str, str]) -> None:
        pass

    def archive_digests(self) -> dict[str, dict[str, str]]:
        return recorded_digests(self.directory)

    def problem(self) -> str | None:
        return None

    def end_session(self, session: str, expires: int) -> None:
        self.ended.end_session(session, expires)

    def session_ended(self, session: str, expires: int) -> bool:
        return self.ended.session_ended(session, expires)

    def download_store(self) -> DownloadStore:
        return SqliteDownloads(self.cache_dir / "downloads.sqlite3")

    def close(self) -> None:
        pass
