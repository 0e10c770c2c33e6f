"""A forge's answer that is not a page, as a fault naming the source.

Down or rate-limiting is unavailable now (with how long it asked to be left alone); a token it
refuses or a group it does not have is refused."""

from __future__ import annotations

import email.utils
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from gitreg.sources.found import SourceRefused, SourceUnavailable

# A rate limit's reset is an epoch time on GitHub and GitLab, seconds from now in the IETF
# draft's RateLimit-Reset: a value this large can only be the former.
_EPOCH_AFTER = 1_000_000_000
_REMAINING = ("x-ratelimit-remaining", "ratelimit-remaining")
_RESET = ("x-ratelimit-reset", "ratelimit-reset")


@dataclass(frozen=True)
class ForgeSite:
    """The source as its messages name it: `GitLab https://gitlab.example.com, group
    platform/terraform`. `url` never carries credentials."""

    kind: str
    url: str
    what: str

    def __str__(self) -> str:
        return f"{self.kind} {self.url}, {self.what}"


def rate_limited(response: httpx.Response) -> bool:
    """429, or a 403 that says it is a rate limit: none of its calls left, or a Retry-After
    (GitHub's secondary limits)."""
    if response.status_code == 429:
        return True
    if response.status_code != 403:
        return False
    exhausted = any(response.headers.get(name, "").strip() == "0" for name in _REMAINING)
    return exhausted or "retry-after" in response.headers


def retry_after(response: httpx.Response, clock: Callable[[], float]) -> float | None:
    """Seconds the forge asked to be left alone: Retry-After (seconds or an HTTP date), else a
    rate limit's reset; None when it said nothing usable."""
    said = response.headers.get("retry-after", "").strip()
    if said:
        if said.isdigit():
            return float(said)
        try:
            when = email.utils.parsedate_to_datetime(said)
        except (TypeError, ValueError):
            when = None
        if when is not None and when.tzinfo is not None:
            return max(0.0, when.timestamp() - clock())
    for name in _RESET:
        reset = response.headers.get(name, "").strip()
        if reset.isdigit():
            value = float(reset)
            return max(0.0, value - clock()) if value > _EPOCH_AFTER else value
    return None


def fault_of(
    response: httpx.Response, site: ForgeSite, has_token: bool, clock: Callable[[], float]
) -> SourceUnavailable | SourceRefused | None:
    """The fault a listing answer is, or None for a 2xx."""
    status = response.status_code
    if 200 <= status < 300:
        return None
    said = f"HTTP {status}"
    if rate_limited(response):
        wait = retry_after(response, clock)
        asked = f"; it asks for {wait:.0f} s" if wait is not None else ""
        return SourceUnavailable(f"{site}: rate-limited ({said}){asked}", wait)
    if status == 401:
        if not has_token:
            return SourceRefused(f"{site}: it asks for a token ({said}), and none is configured")
        return SourceRefused(f"{site}: the token is not accepted ({said})")
    if status == 403:
        return SourceRefused(f"{site}: the token may not read it ({said})")
    if status == 404:
        return SourceRefused(f"{site}: there is no {site.what}, or not one the token sees ({said})")
    if status >= 500:
        return SourceUnavailable(f"{site}: the forge fails ({said})", retry_after(response, clock))
    if 400 <= status < 500:
        return SourceRefused(f"{site}: the forge refuses the listing ({said})")
    return SourceUnavailable(f"{site}: an answer that is not a page ({said})")
