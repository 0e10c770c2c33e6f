"""Whether a principal installed a version before: what revocation asks of the download ledger.

The tally's last batches are looked at first (a `terraform init` right after a first install
finds it there before the store holds it), then answers kept a while, then the store. A yes
stays true for the retention's days, so it is kept longer than a no, which another replica's
install can turn into a yes."""

from __future__ import annotations

import time
from collections.abc import Callable

from gitreg.state.download_counts import Kind
from gitreg.usage.tally import DownloadTally

YES_KEPT = 600.0  # seconds an answer "installed" is kept
NO_KEPT = 30.0  # seconds an answer "never installed" is kept
MOST_KEPT = 50_000  # answers kept; past it, all are let go at once
_Key = tuple[Kind, str, str, str]  # kind, address, version, principal


class InstalledBefore:
    """The ledger's word on "did this principal install this version", with its answers kept."""

    def __init__(self, tally: DownloadTally, clock: Callable[[], float] = time.monotonic) -> None:
        self.tally = tally
        self.clock = clock
        self._kept: dict[_Key, tuple[bool, float]] = {}  # answer, until when

    def known(self, kind: Kind, address: str, version: str, principal: str) -> bool | None:
        """The answer without a look at the store (never blocks), or None: `ask` it."""
        if self.tally.lately(kind, address, version, principal):
            return True
        kept = self._kept.get((kind, address, version, principal))
        if kept is None or kept[1] < self.clock():
            return None
        return kept[0]

    def ask(self, kind: Kind, address: str, version: str, principal: str) -> bool:
        """The store's answer, kept for the next asks. Blocks; StateUnavailable when the store
        cannot be read now (nothing is kept then)."""
        installed = self.tally.store.downloaded(kind, address, version, principal)
        if len(self._kept) >= MOST_KEPT:
            self._kept = {}
        until = self.clock() + (YES_KEPT if installed else NO_KEPT)
        self._kept[(kind, address, version, principal)] = (installed, until)
        return installed
