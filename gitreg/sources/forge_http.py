"""What the forge listers share: one HTTP client per source.

The token goes in a header and nowhere else, pages are followed on the forge's own origin within
a bound, and every answer that is not a page becomes a fault that names the source."""

from __future__ import annotations

import ssl
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from enum import Enum
from typing import BinaryIO, Protocol, TypeVar

import httpx

from gitreg.pacing import collector_paused
from gitreg.sources.forge_faults import ForgeSite, fault_of, rate_limited
from gitreg.sources.forge_json import WHOLE, Item, Malformed, NotJson
from gitreg.sources.forge_pages import PagesAhead
from gitreg.sources.found import FoundRepository, SourceRefused, SourceUnavailable
from gitreg.sources.stats import SourceStats

TIMEOUT = httpx.Timeout(30.0, connect=10.0)
MAX_PAGES = 1000  # 100,000 repositories at GitLab's and GitHub's 100 a page
MAX_REDIRECTS = 5
T = TypeVar("T")
PageT = TypeVar("PageT")
ItemT = TypeVar("ItemT")
PageT_co = TypeVar("PageT_co", covariant=True)
_DEFAULT_PORTS = {"http": 80, "https": 443}

# What comes after a page (its answer, its JSON, its items): the next page's URL, relative to
# the page's, or None at the end.
Following = Callable[[httpx.Response, PageT, Sequence[ItemT]], str | httpx.URL | None]


class Decoding(Protocol[PageT_co]):
    """How a page's JSON is read (forge_json: `Shaped`, `WHOLE`)."""

    def decode(self, content: bytes) -> PageT_co: ...


class Unsaid(Enum):
    """A page's headers do not say what comes after it: its JSON does."""

    BODY = "its body"


BODY = Unsaid.BODY
# What comes after a page, read from its answer's headers alone (a Link, GitLab's X-Next-Page),
# so that the next page is asked while this one is decoded: its URL, None at the end, or BODY.
Ahead = Callable[[httpx.Response], str | httpx.URL | Unsaid | None]


def _body_says(response: httpx.Response) -> Unsaid:
    return BODY


def _no_next(response: httpx.Response, body: object, page: Sequence[object]) -> None:
    return None


def forge_url(url: str) -> httpx.URL:
    """A configured forge URL, checked: http(s), a host, no query; any user and password in
    it dropped (the token goes in a header; a URL ends up in messages)."""
    parsed = httpx.URL(url)
    if parsed.scheme not in _DEFAULT_PORTS or not parsed.host:
        raise ValueError(f"{url!r} is not an http(s) URL with a host")
    if parsed.query or parsed.fragment:
        raise ValueError(f"{url!r} has a query or fragment: a forge's URL is its address alone")
    return parsed.copy_with(userinfo=b"")


def endpoint(root: httpx.URL, path: str, params: Mapping[str, str]) -> httpx.URL:
    """`path` (already quoted) under the forge's address `root`, which may itself have a path
    (a GitLab served under `/gitlab`), with `params` as its query."""
    under = root.raw_path.decode().rstrip("/")
    return root.copy_with(raw_path=f"{under}{path}".encode()).copy_merge_params(params)


def token_headers(kind: str, token: str | None) -> dict[str, str]:
    """The headers a forge's API takes a token in, and for GitHub the version of its API asked
    for: GitLab's `PRIVATE-TOKEN`, Gitea's `token`, GitHub's and Bitbucket's `Bearer`."""
    headers: dict[str, str] = {}
    if kind == "github":
        headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
    if not token:
        return headers
    if kind == "gitlab":
        return headers | {"PRIVATE-TOKEN": token}
    if kind == "gitea":
        return headers | {"Authorization": f"token {token}"}
    return headers | {"Authorization": f"Bearer {token}"}


class OnForgeApi:
    """What a lister of a forge is through its API: the requests it made counted (`stats`), its
    connection closed after a survey."""

    _api: ForgeApi

    @property
    def stats(self) -> SourceStats:
        return self._api.stats

    def close(self) -> None:
        self._api.close()


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
        shape: Decoding[PageT],
        page_items: Callable[[PageT], Sequence[ItemT]],
        found: Callable[[ItemT], FoundRepository],
        following: Following[PageT, ItemT] = _no_next,
        ahead: Ahead = _body_says,
        offset: str | None = None,
    ) -> list[FoundRepository]:
        """Every repository of every page from `first` on, each once (a repository listed
        again on a later page, as offset paging does when one is added meanwhile, is kept
        once), in the forge's order. `offset`: the query parameter pages are numbered by, whose
        step the first page's next one says (Bitbucket's `start`, GitLab's `page`), for pages
        the first does not count. Raises
        SourceUnavailable or SourceRefused, never returns part of a listing."""
        listed: dict[str, FoundRepository] = {}
        for page in self.pages(first, shape, page_items, following, ahead, offset):
            with collector_paused():
                for repository in self._read_all(found, page):
                    listed.setdefault(repository.path, repository)
        return list(listed.values())

    def every_item(
        self,
        first: httpx.URL,
        page_items: Callable[[object], Sequence[Item]],
        following: Following[object, Item] = _no_next,
        ahead: Ahead = _body_says,
    ) -> list[Item]:
        """Every item of every page from `first` on, in the forge's order (a release), each
        page decoded whole. Raises SourceUnavailable or SourceRefused, never returns part of a
        listing."""
        pages = self.pages(first, WHOLE, page_items, following, ahead)
        return [item for page in pages for item in page]

    def pages(
        self,
        first: httpx.URL,
        shape: Decoding[PageT],
        page_items: Callable[[PageT], Sequence[ItemT]],
        following: Following[PageT, ItemT],
        ahead: Ahead,
        offset: str | None = None,
    ) -> Iterator[Sequence[ItemT]]:
        """Each page's items from `first` on, in turn, the pages after it asked ahead of their
        reading (forge_pages.py): as soon as a page's headers name the next (`ahead`), else once
        its JSON does (`following`); a few at once where the first page's headers say how many
        there are, or its next one the step of `offset`."""
        pages = PagesAhead(self._answer, self._on_origin, MAX_PAGES)
        try:
            pages.ask(first)
            for number in range(MAX_PAGES):
                response = pages.next_answer()
                if response is None:
                    return
                if number == 0:
                    pages.plan(response)
                after = ahead(response)
                if after is not BODY:
                    if number == 0 and offset is not None and after is not None:
                        pages.plan_strides(response.url, after, offset)
                    pages.follow(response, after)
                with collector_paused():
                    body = self._decoded(response, shape)
                    items = page_items(body)
                if after is BODY:
                    said = following(response, body, items)
                    if number == 0 and offset is not None and said is not None:
                        pages.plan_strides(response.url, said, offset)
                    pages.follow(response, said)
                yield items  # read while the next are asked
            if pages.pending():
                raise Malformed(f"more than {MAX_PAGES:,} pages: the listing was not finished")
        except Malformed as exc:
            self.stats.count(errors=1)
            raise SourceUnavailable(f"{self.site}: {self._redacted(str(exc))}") from None
        finally:
            pages.close()

    def _read_all(self, found: Callable[[ItemT], T], page: Sequence[ItemT]) -> list[T]:
        """`found` of each item of a page: a malformed item is the forge's fault, named."""
        try:
            return [found(item) for item in page]
        except Malformed as exc:
            self.stats.count(errors=1)
            raise SourceUnavailable(f"{self.site}: {self._redacted(str(exc))}") from None

    def download(
        self,
        url: httpx.URL,
        into: BinaryIO,
        most: int,
        deadline: float,
        headers: Mapping[str, str] = {},
        hosts_after_redirect: frozenset[str] = frozenset(),
        *,
        absent_ok: bool = False,
    ) -> bool:
        """The file at `url`, on the forge's own origin, written into `into`: at most `most`
        bytes, within `deadline` seconds. Redirects on the forge's origin are followed with the
        token; a redirect to one of `hosts_after_redirect` (https only: a forge's storage, as
        GitHub's release assets) without it; any other is refused, never asked. With
        `absent_ok`, a 404 is False (a repository's file that is not there), not a fault."""
        self._on_origin(url, "a release file")
        send = {**self._headers, **headers}
        ends = self._clock() + deadline
        for _ in range(MAX_REDIRECTS + 1):
            try:
                with self._client.stream("GET", url, headers=send, follow_redirects=False) as got:
                    self.stats.count(api_calls=1)
                    if got.is_redirect:
                        url = got.url.join(got.headers["location"])
                        if origin(url) != self._origin:
                            if url.scheme != "https" or url.host not in hosts_after_redirect:
                                self._on_origin(url, "a release file")
                            send = dict(headers)  # no token off the forge's origin
                        continue
                    if absent_ok and got.status_code == 404:
                        return False
                    fault = fault_of(got, self.site, self._token is not None, self._clock)
                    if fault is not None:
                        self.stats.count(errors=1)
                        raise fault
                    said = got.headers.get("content-length", "")
                    if said.isdigit() and int(said) > most:
                        raise SourceRefused(f"{self.site}: {url.path} is over {most:,} bytes")
                    written = 0
                    for chunk in got.iter_bytes(1 << 20):
                        written += len(chunk)
                        if written > most:
                            raise SourceRefused(f"{self.site}: {url.path} is over {most:,} bytes")
                        if self._clock() > ends:
                            raise SourceUnavailable(
                                f"{self.site}: {url.path} not downloaded in {deadline:.0f} s"
                            )
                        into.write(chunk)
                    return True
            except httpx.HTTPError as exc:
                self.stats.count(errors=1)
                why = self._redacted(str(exc) or type(exc).__name__)
                raise SourceUnavailable(f"{self.site}: {url.path} cannot be read: {why}") from None
        self.stats.count(errors=1)
        raise SourceUnavailable(f"{self.site}: more than {MAX_REDIRECTS} redirects")

    def _answer(self, url: httpx.URL) -> httpx.Response:
        """One page's answer, read whole, redirects followed on the forge's origin only."""
        for _ in range(MAX_REDIRECTS + 1):
            try:
                response = self._client.get(url, headers=self._headers, follow_redirects=False)
            except httpx.TimeoutException as exc:
                self.stats.count(errors=1)
                why = f"no answer in time ({type(exc).__name__})"
                raise SourceUnavailable(f"{self.site}: {why}") from None
            except httpx.HTTPError as exc:
                self.stats.count(errors=1)
                why = self._redacted(str(exc) or type(exc).__name__)
                raise SourceUnavailable(f"{self.site}: cannot be reached: {why}") from None
            finally:
                self.stats.count(api_calls=1)
            if response.is_redirect:
                url = self._on_origin(response.url.join(response.headers["location"]))
                continue
            fault = fault_of(response, self.site, self._token is not None, self._clock)
            if fault is not None:
                if rate_limited(response):
                    self.stats.count(rate_limit_waits=1)
                else:
                    self.stats.count(errors=1)
                raise fault
            return response
        self.stats.count(errors=1)
        raise SourceUnavailable(f"{self.site}: more than {MAX_REDIRECTS} redirects")

    def _decoded(self, response: httpx.Response, shape: Decoding[PageT]) -> PageT:
        try:
            return shape.decode(response.content)
        except NotJson:
            self.stats.count(errors=1)
            why = f"an answer that is not JSON ({response.headers.get('content-type', '')})"
            raise SourceUnavailable(f"{self.site}: {why}") from None

    def _on_origin(self, url: httpx.URL, what: str = "its next page") -> httpx.URL:
        """`url`, if it is on the forge's own scheme, host and port: a Link header or a
        redirect that leads elsewhere would take the token there, so it is refused."""
        if origin(url) != self._origin:
            self.stats.count(errors=1)
            elsewhere = f"{url.scheme}://{url.host}:{origin(url)[2]}"
            raise SourceRefused(
                f"{self.site}: {what} is on {elsewhere}, not on the forge's own "
                "address; not followed, so the token is not sent there (is the source's URL "
                "the one the forge calls itself?)"
            )
        return url

    def _redacted(self, text: str) -> str:
        return text.replace(self._token, "[token]") if self._token else text
