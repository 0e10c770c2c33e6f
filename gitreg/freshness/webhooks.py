"""Push webhooks from the forges: who sent one, which repositories it names, whether it is signed.

Each forge has its own headers, payload and secret scheme (`verifier`; the table is in
docs/reference/http-api.md). A push names repositories to sync. An event about a repository's
being (created, deleted, archived, renamed, its topics edited) names its group, organization or
project, whose `sources:` entry of that forge is surveyed again (docs/sources.md). A release
event, or a push, naming a repository whose releases a provider reads (`providers[].releases`)
has that provider's release list read again (`matching_providers`, docs/providers.md)."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

from gitreg.catalog.model import Catalog
from gitreg.catalog.secrets import SecretRef
from gitreg.catalog.specs import ProviderSpec, SourceSpec
from gitreg.errors import ClientError
from gitreg.git.location import RepoLocation, is_scp_like

Headers = Mapping[str, str]  # lower-case names
Named = TypeVar("Named", RepoLocation, SourceSpec, ProviderSpec)  # what a delivery may name


@dataclass(frozen=True)
class Push:
    """What a webhook told us: the event, and every URL it gives for the repository."""

    forge: str
    event: str
    urls: tuple[str, ...]
    triggers: bool  # a push (of tags or anything): worth a refresh
    # An event about a repository's being, and the paths of the groups, organizations or
    # projects it names (both sides of a rename or a transfer): worth a survey of them.
    asks_survey: bool = False
    owners: tuple[str, ...] = ()
    releases: bool = False  # a release published, edited or deleted: its tag may be new too


def parse_body(body: bytes) -> dict[str, Any]:
    try:
        payload = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise ClientError("the body is not JSON") from exc
    if not isinstance(payload, dict):
        raise ClientError("the body is not a JSON object")
    return payload


def _get(payload: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(payload, dict):
            return None
        payload = payload.get(key)
    return payload


def _strings(*values: Any) -> tuple[str, ...]:
    return tuple(v for v in values if isinstance(v, str) and v)


# Where each forge names the event; generic requests are always a push.
_EVENT_HEADERS = {
    "github": ("x-github-event",),
    "gitlab": ("x-gitlab-event",),
    "gitea": ("x-forgejo-event", "x-gitea-event", "x-gogs-event"),
    "bitbucket": ("x-event-key",),
}


def event_of(forge: str, headers: Headers) -> str:
    """The event the forge says this is (cut short: it comes from anyone who can connect)."""
    if forge == "generic":
        return "push"
    names = _EVENT_HEADERS.get(forge, ())
    return next((headers[n] for n in names if headers.get(n)), "")[:100]


def github(headers: Headers, payload: dict[str, Any]) -> Push:
    event = event_of("github", headers)
    repo = _get(payload, "repository")
    urls = _strings(
        *(_get(repo, k) for k in ("clone_url", "ssh_url", "git_url", "html_url", "url"))
    )
    if event == "repository":  # created, deleted, archived, renamed, transferred, edited...
        owners = _strings(_get(payload, "organization", "login"), _get(repo, "owner", "login"))
        return Push("github", event, urls, False, True, owners[:1])
    if event == "release":  # published, released, created, edited, deleted...
        return Push("github", event, urls, True, releases=True)
    return Push("github", event, urls, event in ("push", "create"))


def gitlab(headers: Headers, payload: dict[str, Any]) -> Push:
    event = event_of("gitlab", headers)
    urls = _strings(
        *(_get(payload, "project", k) for k in ("git_http_url", "git_ssh_url", "web_url")),
        *(
            _get(payload, "repository", k)
            for k in ("git_http_url", "git_ssh_url", "homepage", "url")
        ),
    )
    kind = _get(payload, "event_name") or _get(payload, "object_kind")
    if event == "Release Hook" or kind == "release":  # create, update, delete
        return Push("gitlab", event, urls, True, releases=True)
    if isinstance(kind, str) and kind in _GITLAB_PROJECT_EVENTS:
        paths = _strings(
            _get(payload, "path_with_namespace"),
            _get(payload, "old_path_with_namespace"),
            _get(payload, "project", "path_with_namespace"),
        )
        owners = tuple(dict.fromkeys(p.rpartition("/")[0] for p in paths if "/" in p))
        return Push("gitlab", event, urls, False, True, owners)
    return Push("gitlab", event, urls, event in ("Push Hook", "Tag Push Hook", "System Hook"))


# GitLab's system hooks' `event_name`s for a project's being, and a group hook's project events
# (`object_kind: project`, `event_name: project_created | project_deleted`).
_GITLAB_PROJECT_EVENTS = frozenset(
    (
        "project_create",
        "project_destroy",
        "project_rename",
        "project_transfer",
        "project_update",
        "project_created",
        "project_deleted",
        "project",
    )
)


def gitea(headers: Headers, payload: dict[str, Any]) -> Push:
    event = event_of("gitea", headers)
    repo = _get(payload, "repository")
    urls = _strings(*(_get(repo, k) for k in ("clone_url", "ssh_url", "html_url")))
    if event == "repository":  # created, deleted (Gitea and Forgejo send no others)
        full_name = _get(repo, "full_name")
        owners = _strings(
            _get(payload, "organization", "username"),
            _get(payload, "organization", "login"),
            _get(repo, "owner", "username"),
            _get(repo, "owner", "login"),
            full_name.partition("/")[0] if isinstance(full_name, str) else None,
        )
        return Push("gitea", event, urls, False, True, owners[:1])
    if event == "release":  # published, updated, deleted
        return Push("gitea", event, urls, True, releases=True)
    return Push("gitea", event, urls, event in ("push", "create"))


def bitbucket(headers: Headers, payload: dict[str, Any]) -> Push:
    event = event_of("bitbucket", headers)
    repo = _get(payload, "repository")
    clone = _get(repo, "links", "clone")
    urls = _strings(
        _get(repo, "links", "html", "href"),  # Cloud
        *(link.get("href") for link in clone if isinstance(link, dict))
        if isinstance(clone, list)
        else (),
    )
    if not urls and isinstance(_get(repo, "full_name"), str):
        urls = (f"https://bitbucket.org/{repo['full_name']}",)
    if event == "repo:modified":  # Data Center: a rename, or a move to another project
        owners = _strings(
            _get(payload, "new", "project", "key"), _get(payload, "old", "project", "key")
        )
        links = _get(payload, "new", "links", "clone")
        urls = _strings(
            *(link.get("href") for link in links if isinstance(link, dict))
            if isinstance(links, list)
            else ()
        )
        return Push("bitbucket", event, urls, False, True, tuple(dict.fromkeys(owners)))
    return Push("bitbucket", event, urls, event in ("repo:push", "repo:refs_changed"))


def generic(headers: Headers, payload: dict[str, Any]) -> Push:
    named = payload.get("repository") or payload.get("url")
    many = payload.get("repositories")
    urls = _strings(named, *(many if isinstance(many, list) else ()))
    if not urls:
        raise ClientError('give the repository as {"repository": "<its URL>"}')
    return Push("generic", "push", urls, True)


def _hmac_hex(secret: str, body: bytes) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def _signed(header: str | None, secret: str, body: bytes, prefix: str) -> bool:
    if not header or not header.startswith(prefix):
        return False
    return hmac.compare_digest(header[len(prefix) :].strip().lower(), _hmac_hex(secret, body))


def verifier(forge: str, headers: Headers, body: bytes) -> Callable[[str], bool]:
    """A check of the request against one secret, by the forge's own scheme."""

    def check(secret: str) -> bool:
        if forge == "github":
            return _signed(headers.get("x-hub-signature-256"), secret, body, "sha256=")
        if forge == "gitlab":
            token = headers.get("x-gitlab-token", "")
            return hmac.compare_digest(token.encode(), secret.encode())
        if forge == "gitea":
            for name in ("x-forgejo-signature", "x-gitea-signature", "x-gogs-signature"):
                if headers.get(name):
                    return _signed(headers[name], secret, body, "")
            return _signed(headers.get("x-hub-signature-256"), secret, body, "sha256=")
        if forge == "bitbucket":
            return _signed(headers.get("x-hub-signature"), secret, body, "sha256=")
        bearer = headers.get("authorization", "")
        if bearer.startswith("Bearer "):
            return hmac.compare_digest(bearer[7:].strip().encode(), secret.encode())
        return _signed(headers.get("x-gitreg-signature"), secret, body, "sha256=")

    return check


PARSERS = {
    "github": github,
    "gitlab": gitlab,
    "gitea": gitea,
    "bitbucket": bitbucket,
    "generic": generic,
}


def repo_key(url: str) -> str:
    """`host/path` without scheme, user, port, `.git` or trailing slash, lower case: the forms
    a forge gives (https clone URL, ssh URL, web URL) of one repository compare equal."""
    text = url.strip()
    if "://" in text:
        parts = urlsplit(text)
        key = f"{(parts.hostname or '')}{parts.path}"
    elif is_scp_like(text):
        host, _, path = text.partition(":")
        key = f"{host.rpartition('@')[2]}/{path}"
    else:
        key = text
    key = re.sub(r"/+$", "", key)
    return key.removesuffix(".git").lower()


def matching_repositories(catalog: Catalog, urls: Iterable[str]) -> list[RepoLocation]:
    """The catalogued repositories (modules', and providers' that gate versions) named by `urls`."""
    wanted = {repo_key(u) for u in urls}
    aliases: dict[RepoLocation, set[str]] = {
        loc: {repo_key(loc.url)} for loc in catalog.repositories
    }
    for spec in catalog.modules:
        if spec.git_url:
            aliases[spec.repo].add(repo_key(spec.git_url))
    return [location for location, names in aliases.items() if names & wanted]


def matching_providers(catalog: Catalog, urls: Iterable[str]) -> list[ProviderSpec]:
    """The providers whose releases are read from a repository `urls` name (by its web or clone
    URL, on the forge's host)."""
    wanted = {repo_key(u) for u in urls}
    return [
        spec
        for spec in catalog.providers
        if spec.releases is not None and releases_key(spec) in wanted
    ]


def releases_key(spec: ProviderSpec) -> str:
    """The repo_key of the repository a provider's releases are read from: its project under
    the forge's address (GitHub's API root is not where its repositories are)."""
    assert spec.releases is not None
    root = spec.releases.url.rstrip("/")
    if spec.releases.kind == "github":
        root = root.removesuffix("/api/v3").replace("://api.github.com", "://github.com")
    return repo_key(f"{root}/{spec.releases.project}")


def matching_sources(catalog: Catalog, forge: str, push: Push) -> list[SourceSpec]:
    """The catalog's sources of `forge` whose group, organization or project is one the event
    names (for GitLab, one of its subgroups too), on the host its URLs give, if any."""
    owners = [o.strip("/").lower() for o in push.owners]
    hosts = {urlsplit(u).hostname for u in push.urls if "://" in u}
    return [
        spec
        for spec in catalog.sources
        if spec.kind == forge
        and any(_within(owner, spec) for owner in owners)
        and (not hosts or _api_host(spec) in hosts)
    ]


def _within(owner: str, spec: SourceSpec) -> bool:
    scope = spec.scope.strip("/").lower()
    return owner == scope or (spec.kind == "gitlab" and owner.startswith(scope + "/"))


def _api_host(spec: SourceSpec) -> str | None:
    host = urlsplit(spec.where).hostname
    # GitHub's API is api.github.com; a repository's URLs are github.com's.
    return "github.com" if host == "api.github.com" else host


def authorised(
    catalog: Catalog,
    candidates: Sequence[Named],
    secret_of: Callable[[Named], SecretRef | None],
    check: Callable[[str], bool],
) -> tuple[list[Named], bool]:
    """The candidates (repositories, or sources) whose secret the request proves it knows; and
    whether any secret did.

    A repository or source with a secret of its own is only acted on by a request signed with
    it; the global secret covers the rest, and a payload naming nothing of ours: such a payload
    has nothing whose secret could apply (an organisation-wide hook signs with the global one).
    """

    def proves(secret: SecretRef | None) -> bool:
        value = secret.value() if secret else None
        return value is not None and check(value)

    if not candidates:
        return [], proves(catalog.freshness.webhook_secret)
    verified = [c for c in candidates if proves(secret_of(c))]
    return verified, bool(verified)
