"""What the forge listers share: one HTTP client per source, the token in a header and nowhere
else, pages followed on the forge's own origin within a bound, and every answer that is not a
page turned into a fault that names the source."""

from __future__ import annotations

import ssl
import time
from collections.abc import Callable, Mapping, Sequence

import httpx

from gitreg.sources.forge_faults import ForgeSite, fault_of, rate_limited
from gitreg.sources.forge_json import Item, Malformed, NotJson, PageShape
from gitreg.sources.found import FoundRepository, SourceRefused, SourceUnavailable
from gitreg.sources.stats import SourceStats

TIMEOUT = httpx.Timeout(30.0, connect=10.0)
MAX_PAGES = 1000  # 100,000 repositories at GitLab's and GitHub's 100 a page
MAX_REDIRECTS = 5
_DEFAULT_PORTS = {"http": 80, "https": 443}

# What comes after a page (its answer, its JSON, its items): the next page's URL, relative to
# the page's, or None at the end.
Following = Callable[[httpx.Response, object, Sequence[Item]], str | httpx.URL | None]


def forge_url(url: str) -> httpx.URL:
    """A configured forge URL, checked: http(s), a host, no query; any user and password in
    it dropped (the token goes in a header; a URL ends up in messages)."""
    parsed = httpx.URL(url)
    if parsed.scheme not in _DEFAULT_PORTS or not parsed.host:
        raise ValueError(f"{url!r} is not an http(s) URL with a host")
    if parsed.query or parsed.fragment:
        raise ValueError(f"{url!r} has a query or fragment: a forge's URL is its address alone")
    return parsed.copy_with(userinfo=b"")


def origin(url: httpx.URL) -> tuple[str, str, int]:
    return url.scheme, url.host, url.port or _DEFAULT_PORTS.get(url.scheme, 0)


class ForgeApi:
    """A forge's API as listers read it. `headers` carry the token; `token` itself is kept only
    to be struck from any text that leaves (a message, a log line)."""

    def __init__(
        self,
        site: ForgeSite,
        root: httpx.URL,
        headers: Mapping[str, str],
        token: str | None,
        verify: ssl.SSLContext | bool,
        client: httpx.Client | None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.site = site
        self.stats = SourceStats()
        self._origin = origin(root)
        self._headers = dict(headers)
        self._token = token
        self._clock = clock
        self._own_client = client is None
        self._client = client or httpx.Client(timeout=TIMEOUT, verify=verify)

    def close(self) -> None:
        if self._own_client:
            self._client.close()

    def collect(
        self,
        first: httpx.URL,
        shape: PageShape,
        page_items: Callable[[object], Sequence[Item]],
        found: Callable[[Item], FoundRepository],
        following: Following,
    ) -> list[FoundRepository]:
        """Every repository of every page from `first` on, each once (a repository listed
        again on a later page, as offset paging does when one is added meanwhile, is kept
        once), in the forge's order. Raises SourceUnavailable or SourceRefused, never returns
        part of a listing."""
        listed: dict[str, FoundRepository] = {}
        url: httpx.URL | None = first
        asked: set[str] = set()
        try:
            for _ in range(MAX_PAGES):
                if url is None:
                    return list(listed.values())
                if str(url) in asked:
                    raise Malformed(f"its pages come back to {url} again")
                asked.add(str(url))
                response, body = self._get(url, shape)
                items = page_items(body)
                for item in items:
                    repository = found(item)
                    listed.setdefault(repository.path, repository)
                after = following(response, body, items)
                url = None if after is None else self._on_origin(response.url.join(after))
            raise Malformed(f"more than {MAX_PAGES:,} pages: the listing was not finished")
        except Malformed as exc:
            self.stats.errors += 1
            raise SourceUnavailable(f"{self.site}: {self._redacted(str(exc))}") from None

    def _get(self, url: httpx.URL, shape: PageShape) -> tuple[httpx.Response, object]:
        """One page's answer and its JSON, redirects followed on the forge's origin only."""
        for _ in range(MAX_REDIRECTS + 1):
            try:
                response = self._client.get(url, headers=self._headers, follow_redirects=False)
            except httpx.TimeoutException as exc:
                self.stats.errors += 1
                why = f"no answer in time ({type(exc).__name__})"
                raise SourceUnavailable(f"{self.site}: {why}") from None
            except httpx.HTTPError as exc:
                self.stats.errors += 1
                why = self._redacted(str(exc) or type(exc).__name__)
                raise SourceUnavailable(f"{self.site}: cannot be reached: {why}") from None
            finally:
                self.stats.api_calls += 1
            if response.is_redirect:
                url = self._on_origin(response.url.join(response.headers["location"]))
                continue
            fault = fault_of(response, self.site, self._token is not None, self._clock)
            if fault is not None:
                if rate_limited(response):
                    self.stats.rate_limit_waits += 1
                else:
                    self.stats.errors += 1
                raise fault
            try:
                return response, shape.decode(response.content)
            except NotJson:
                self.stats.errors += 1
                why = f"an answer that is not JSON ({response.headers.get('content-type', '')})"
                raise SourceUnavailable(f"{self.site}: {why}") from None
        self.stats.errors += 1
        raise SourceUnavailable(f"{self.site}: more than {MAX_REDIRECTS} redirects")

    def _on_origin(self, url: httpx.URL) -> httpx.URL:
        """`url`, if it is on the forge's own scheme, host and port: a Link header or a
        redirect that leads elsewhere would take the token there, so it is refused."""
        if origin(url) != self._origin:
            self.stats.errors += 1
            elsewhere = f"{url.scheme}://{url.host}:{origin(url)[2]}"
            raise SourceRefused(
                f"{self.site}: its next page is on {elsewhere}, not on the forge's own "
                "address; not followed, so the token is not sent there (is the source's URL "
                "the one the forge calls itself?)"
            )
        return url

    def _redacted(self, text: str) -> str:
        return text.replace(self._token, "[token]") if self._token else text
