"""What a source's listings cost and met, counted for `/v1/status` and `/metrics`: API calls,
rate-limit waits, errors."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class SourceStats:
    """Counters a lister moves as it works (one discovery at a time, in one thread); readers in
    other threads see each count whole. A rate-limited answer counts as a wait, not an error:
    every other fault that ends a listing (down, refused, a malformed answer) is one error."""

    api_calls: int = 0
    rate_limit_waits: int = 0
    errors: int = 0
