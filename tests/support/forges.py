"""Stand-in forges on 127.0.0.1, over TLS with a test CA: GitLab v4, Gitea/Forgejo v1, GitHub
REST and Bitbucket Data Center 1.0, each answering its repository listing as its documents say
(JSON shapes, paging, auth, error statuses), from a list of repositories a test may change while
it runs, with faults a test injects; every request and connection is counted.

    with StandInForge("gitlab", [ForgeRepository("platform/terraform-aws-vpc")], token="t",
                      tls=tls) as forge:
        forge.lister("platform").repositories()

The repositories' clone URLs are the forge's own unless a ForgeRepository names others (a real
`git http-backend`, for tests that clone what they discover)."""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from socket import socket
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import httpx

from gitreg.process.tlscert import TlsMaterial
from gitreg.sources.bitbucket import BitbucketLister
from gitreg.sources.gitea import GiteaLister
from gitreg.sources.github import GitHubLister
from gitreg.sources.gitlab import GitLabLister
from tests.support.forge_release_shapes import (
    ForgeRelease,
    asset_id,
    download_path,
    release_json,
    repository_file,
)
from tests.support.forge_shapes import (
    ForgeKind,
    ForgeRepository,
    not_found,
    repository_json,
    unauthorized,
)
from tests.support.tls_clients import trusting

# The most each forge answers a page, whatever is asked (Gitea's MAX_RESPONSE_ITEMS default).
MOST_A_PAGE: dict[ForgeKind, int] = {"gitlab": 100, "gitea": 50, "github": 100, "bitbucket": 1000}
# What a listing asked with no page size gets.
DEFAULT_A_PAGE: dict[ForgeKind, int] = {"gitlab": 20, "gitea": 30, "github": 30, "bitbucket": 25}

Lister = GitLabLister | GiteaLister | GitHubLister | BitbucketLister


def lister_of(
    kind: ForgeKind,
    url: str,
    owner: str,
    token: str | None,
    verify: ssl.SSLContext | bool = True,
    client: httpx.Client | None = None,
) -> Lister:
    """gitreg's lister of `owner` on the forge of `kind` at `url` (GitHub's: its API root)."""
    if kind == "gitlab":
        return GitLabLister(url, owner, token, verify, client)
    if kind == "gitea":
        return GiteaLister(url, owner, token, verify, client)
    if kind == "github":
        return GitHubLister(owner, token, url, verify, client)
    return BitbucketLister(url, owner, token, verify, client)


@dataclass
class Fault:
    """An answer the forge gives instead of a listing page: every page's (`page` None) or only
    that page's (1 is the first); of every listing (`owner` None) or only that group's."""

    status: int
    body: bytes = b'{"message": "fault"}'
    headers: dict[str, str] = field(default_factory=dict)
    page: int | None = None
    owner: str | None = None


@dataclass(frozen=True)
class Asked:
    """A request the forge received: its path and query as sent, and its headers."""

    target: str
    headers: dict[str, str]


@dataclass(frozen=True)
class _Listing:
    owner: str  # the group, organization or project asked for
    page: int  # 1 is the first
    size: int
    subgroups: bool
    start: int  # the first repository shown: Bitbucket's `start` as asked, another's page's


class StandInForge:
    def __init__(
        self,
        kind: ForgeKind,
        repositories: Sequence[ForgeRepository] = (),
        token: str | None = None,
        page_size: int | None = None,
        tls: TlsMaterial | None = None,
        groups: Sequence[str] = (),
        faults: Sequence[Fault] = (),
        link_header: bool = True,
        render_each_time: bool = False,
        prefix: str = "",
        releases: Sequence[ForgeRelease] = (),
    ) -> None:
        """`page_size`: the most it answers a page (the forge's own by default); `groups`:
        groups or organizations that exist without repositories; `link_header` False: no Link
        header (Gitea behind a proxy that drops it; GitLab's X-Next-Page is then all there is);
        `render_each_time`: each repository's JSON made for every page that shows it, as a
        forge does, rather than once (the default, which keeps large listings fast); `prefix`:
        the path the API is under (`/gitlab` for a GitLab served there, `/api/v3` for a GitHub
        Enterprise Server); `releases`: the projects' releases, listed and their files served
        (tests/support/forge_release_shapes.py)."""
        self.kind = kind
        self.releases = list(releases)  # a test may change them while the forge runs
        # Where GitHub's asset API sends a download: the forge itself unless a test says.
        self.asset_storage: str | None = None
        self.release_faults: list[Fault] = []  # answered, in turn, to the next release lists
        self.token = token
        self.page_size = page_size or MOST_A_PAGE[kind]
        self.tls = tls
        self.groups = set(groups)
        self.faults = list(faults)
        self.link_header = link_header
        self.render_each_time = render_each_time
        self.prefix = prefix
        self.next_link: str | None = None  # when set, every Link rel=next leads here instead
        # GitLab leaves its totals and rel="last" out past 10,000 projects (a test may lower it).
        self.counted_up_to = 10_000
        self.asked: list[Asked] = []
        self.connections = 0
        self._lock = threading.Lock()
        self._repositories = list(repositories)
        self._rendered: dict[ForgeRepository, bytes] = {}
        self._listers: list[Lister] = []
        self._owned_now: dict[tuple[str, bool], list[tuple[int, ForgeRepository]]] = {}
        self.server = _CountingServer(("127.0.0.1", 0), self._handler(), self)
        if tls is not None:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(tls.certfile, tls.keyfile)
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The forge's address, `https://127.0.0.1:PORT` (GitHub's API root too)."""
        scheme = "https" if self.tls else "http"
        return f"{scheme}://127.0.0.1:{self.server.server_address[1]}"

    @property
    def verify(self) -> ssl.SSLContext | bool:
        if self.tls is None:
            return True
        return trusting(self.tls.ca_cert)

    @property
    def repositories(self) -> list[ForgeRepository]:
        with self._lock:
            return list(self._repositories)

    @repositories.setter
    def repositories(self, repositories: Sequence[ForgeRepository]) -> None:
        with self._lock:
            self._repositories = list(repositories)
            self._owned_now.clear()

    def lister(
        self, owner: str, token: str | None = "", client: httpx.Client | None = None
    ) -> Lister:
        """The gitreg lister of `owner` (group, organization, project) on this forge, with the
        forge's token unless another is given (None: none); closed when the forge stops."""
        used = self.token if token == "" else token
        lister = lister_of(self.kind, self.url + self.prefix, owner, used, self.verify, client)
        self._listers.append(lister)
        return lister

    def __enter__(self) -> StandInForge:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for lister in self._listers:
            lister.close()
        self.server.shutdown()
        self.server.server_close()

    # What a request is answered with: status, body, headers.

    @contextmanager
    def held(self) -> Iterator[None]:
        """Every request that arrives meanwhile waits for its answer until this ends (a listing
        kept under way while a test sends what must coalesce with it)."""
        with self._lock:
            yield

    def answer(self, target: str, headers: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
        with self._lock:
            self.asked.append(Asked(target, headers))
        if not self._authorized(headers):
            return 401, unauthorized(self.kind), {}
        released = self._release_answer(target, headers)
        if released is not None:
            return released
        listing = self._listing(target)
        if listing is None:
            return 404, b'{"message": "404 Not Found"}', {}
        for fault in self.faults:
            if fault.page in (None, listing.page) and fault.owner in (None, listing.owner):
                return fault.status, fault.body, fault.headers
        owned = self._owned(listing)
        if not owned and listing.owner not in self.groups and not self._is_group(listing.owner):
            return 404, not_found(self.kind, listing.owner), {}
        start = listing.start
        shown = owned[start : start + listing.size]
        body = b"[" + b",".join(self._rendering(n, r) for n, r in shown) + b"]"
        more = start + listing.size < len(owned)
        last_page = max(1, -(-len(owned) // listing.size))
        if self.kind == "bitbucket":
            return 200, self._bitbucket_page(body, listing, start, len(shown), more), {}
        return 200, body, self._paging_headers(target, listing, more, last_page, len(owned))

    def _release_answer(
        self, target: str, headers: dict[str, str]
    ) -> tuple[int, bytes, dict[str, str]] | None:
        """A project's release list (one page: a handful of releases), one of a release's files,
        or None: not a release request. GitHub's asset API answers only `Accept:
        application/octet-stream`, with a redirect to the file, as github.com does."""
        path = unquote(urlsplit(target).path)
        if not path.startswith(self.prefix):
            return None
        path = path[len(self.prefix) :]
        octets = {"Content-Type": "application/octet-stream"}
        for release in list(self.releases):
            for name, data in release.files:
                if path == unquote(download_path(release, name)):
                    return 200, data, octets
                github_asset = f"/repos/{release.project}/releases/assets/{asset_id(release, name)}"
                if self.kind == "github" and path == github_asset:
                    if headers.get("accept") != "application/octet-stream":
                        return 415, b'{"message": "Unsupported Media Type"}', {}
                    storage = self.asset_storage or self.url + self.prefix
                    return 302, b"", {"Location": storage + download_path(release, name)}
        ref = parse_qs(urlsplit(target).query).get("ref", [""])[-1]
        accept = headers.get("accept", "")
        file = repository_file(self.kind, self.releases, path, ref, accept)
        if file is not None:
            return file
        routes = {
            "gitlab": ("/api/v4/projects/", "/releases"),
            "gitea": ("/api/v1/repos/", "/releases"),
            "github": ("/repos/", "/releases"),
        }
        if self.kind not in routes:
            return None
        before, after = routes[self.kind]
        if not path.startswith(before) or not path.endswith(after):
            return None
        project = path[len(before) : -len(after)]
        if self.release_faults:  # a rate limit, say, for the next release lists asked
            fault = self.release_faults.pop(0)
            return fault.status, fault.body, fault.headers
        mine = [r for r in self.releases if r.project == project]
        if not mine and not any(r.path == project for r in self.repositories):
            return 404, not_found(self.kind, project), {}
        numbered = list(enumerate(mine, 1))[::-1]  # newest first, as forges list them
        base = self.url + self.prefix
        body = b"[" + b",".join(release_json(self.kind, r, n, base) for n, r in numbered) + b"]"
        return 200, body, {}

    def _authorized(self, headers: dict[str, str]) -> bool:
        if self.token is None:
            return True
        schemes = {
            "gitlab": ("Bearer",),
            "gitea": ("token", "Bearer"),
            "github": ("Bearer", "token"),
        }
        offered = {f"{scheme} {self.token}" for scheme in schemes.get(self.kind, ("Bearer",))}
        if self.kind == "gitlab" and headers.get("private-token") == self.token:
            return True
        return headers.get("authorization", "") in offered

    def _listing(self, target: str) -> _Listing | None:
        """The listing a request asks for, read as the forge reads it; None: not one."""
        parts = urlsplit(target)
        query = {name: values[-1] for name, values in parse_qs(parts.query).items()}
        routes = {
            "gitlab": ("/api/v4/groups/", "/projects"),
            "gitea": ("/api/v1/orgs/", "/repos"),
            "github": ("/orgs/", "/repos"),
            "bitbucket": ("/rest/api/1.0/projects/", "/repos"),
        }
        before, after = routes[self.kind]
        if not parts.path.startswith(self.prefix):
            return None
        path = parts.path[len(self.prefix) :]
        if not path.startswith(before) or not path.endswith(after):
            return None
        owner = unquote(path[len(before) : -len(after)])
        if not owner or (self.kind != "gitlab" and "/" in owner):
            return None
        asked = {"gitlab": "per_page", "gitea": "limit", "github": "per_page"}.get(
            self.kind, "limit"
        )
        size = min(int(query.get(asked, DEFAULT_A_PAGE[self.kind])), self.page_size)
        size = max(size, 1)
        if self.kind == "bitbucket":
            start = max(int(query.get("start", "0")), 0)
            page = start // size + 1
        else:
            page = max(int(query.get("page", "1")), 1)
            start = (page - 1) * size
        subgroups = query.get("include_subgroups") == "true"
        return _Listing(owner, page, size, subgroups, start)

    def _owned(self, listing: _Listing) -> list[tuple[int, ForgeRepository]]:
        """The repositories a listing shows, with their ids; kept until the list changes."""
        key = (listing.owner, listing.subgroups)
        with self._lock:
            if key not in self._owned_now:
                numbered = enumerate(self._repositories, 1)
                self._owned_now[key] = [(n, r) for n, r in numbered if self._owns(listing, r)]
            return self._owned_now[key]

    def _owns(self, listing: _Listing, repository: ForgeRepository) -> bool:
        if repository.owner == listing.owner:
            return True
        return listing.subgroups and repository.owner.startswith(listing.owner + "/")

    def _is_group(self, owner: str) -> bool:
        """GitLab: a group whose subgroups alone hold projects."""
        if self.kind != "gitlab":
            return False
        return any(r.owner.startswith(owner + "/") for r in self.repositories)

    def _rendering(self, number: int, repository: ForgeRepository) -> bytes:
        rendered = None if self.render_each_time else self._rendered.get(repository)
        if rendered is None:
            rendered = repository_json(self.kind, repository, number, self.url)
            self._rendered[repository] = rendered
        return rendered

    def _paging_headers(
        self, target: str, listing: _Listing, more: bool, last_page: int, total: int
    ) -> dict[str, str]:
        def page_url(page: int) -> str:
            parts = urlsplit(target)
            query = {name: values[-1] for name, values in parse_qs(parts.query).items()}
            query["page"] = str(page)
            encoded = "&".join(f"{name}={value}" for name, value in query.items())
            return f"{self.url}{parts.path}?{encoded}"

        links = []
        if more:
            links.append(f'<{self.next_link or page_url(listing.page + 1)}>; rel="next"')
        if listing.page > 1:
            links.append(f'<{page_url(listing.page - 1)}>; rel="prev"')
        links.append(f'<{page_url(1)}>; rel="first"')
        counted = self.kind != "gitlab" or total <= self.counted_up_to
        if counted:
            links.append(f'<{page_url(last_page)}>; rel="last"')
        headers = {"Link": ", ".join(links)} if self.link_header else {}
        if self.kind == "gitlab":
            headers |= {
                "X-Page": str(listing.page),
                "X-Per-Page": str(listing.size),
                "X-Next-Page": str(listing.page + 1) if more else "",
                "X-Prev-Page": str(listing.page - 1) if listing.page > 1 else "",
            }
            if counted:
                headers |= {"X-Total": str(total), "X-Total-Pages": str(last_page)}
        elif self.kind == "gitea":
            headers["X-Total-Count"] = str(total)
        elif self.kind == "github":
            headers |= {"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "4999"}
        return headers

    def _bitbucket_page(
        self, values: bytes, listing: _Listing, start: int, count: int, more: bool
    ) -> bytes:
        head: dict[str, Any] = {"size": count, "limit": listing.size, "isLastPage": not more}
        head["start"] = start
        if more:
            head["nextPageStart"] = start + count
        return json.dumps(head).encode()[:-1] + b', "values": ' + values + b"}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        forge = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms stall

            def do_GET(self) -> None:
                headers = {name.lower(): value for name, value in self.headers.items()}
                status, body, extra = forge.answer(self.path, headers)
                self.send_response(status)
                if "Content-Type" not in extra:
                    self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                for name, value in extra.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


class _CountingServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        handler: Callable[..., BaseHTTPRequestHandler],
        forge: StandInForge,
    ) -> None:
        super().__init__(address, handler)
        self.forge = forge

    def get_request(self) -> tuple[socket, Any]:
        connection = super().get_request()
        self.forge.connections += 1
        return connection
