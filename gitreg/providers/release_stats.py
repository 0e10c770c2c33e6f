"""What one provider's release-list reads cost and met, counted for `/v1/status` and `/metrics`:
reads, API calls (downloads too), rate-limit waits, errors, releases fetched and refused."""

from __future__ import annotations

from dataclasses import dataclass

from gitreg.sources.stats import SourceStats


@dataclass
class ReleaseStats:
    """Counters one provider's fetcher moves, one read at a time; readers in other threads see
    each count whole. A rate-limited answer is a wait, not an error, as for sources."""

    reads: int = 0
    api_calls: int = 0
    rate_limit_waits: int = 0
    errors: int = 0
    fetched: int = 0  # releases fetched whole into cache_dir (again, after a refusal: counted)
    refused: int = 0  # of those, the ones the check refused (a checksum, a signature, a file)

    def add(self, listing: SourceStats) -> None:
        """What one read's requests counted."""
        self.api_calls += listing.api_calls
        self.rate_limit_waits += listing.rate_limit_waits
        self.errors += listing.errors
