"""What gitreg made of one webhook request (`Delivery`): judged from its body, headers and the
catalog, then answered, logged and counted, so that a misconfigured forge hook is visible."""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, get_args

from gitreg.catalog.model import Catalog
from gitreg.catalog.secrets import SecretRef
from gitreg.catalog.specs import ProviderSpec, SourceSpec
from gitreg.errors import ClientError
from gitreg.freshness.webhooks import (
    PARSERS,
    Headers,
    Push,
    authorised,
    event_of,
    matching_providers,
    matching_repositories,
    matching_sources,
    parse_body,
    releases_key,
    repo_key,
    verifier,
)
from gitreg.git.location import RepoLocation, redact

log = logging.getLogger(__name__)

Outcome = Literal[
    "accepted", "duplicate", "unauthorized", "no_repository", "ignored_event", "bad_request"
]

# Where each forge says which delivery this is; a redelivery repeats it.
DELIVERY_ID_HEADERS = (
    "x-github-delivery",
    "x-gitlab-event-uuid",
    "x-gitea-delivery",
    "x-forgejo-delivery",
    "x-request-uuid",  # Bitbucket Cloud
    "x-request-id",  # Bitbucket Server and Data Center
    "x-gitreg-delivery",  # the generic endpoint, for scripts that want the same
)
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)


@dataclass(frozen=True)
class Delivery:
    """What gitreg made of one webhook request, for the answer, the log and /metrics."""

    forge: str
    outcome: Outcome
    event: str = ""
    named: tuple[str, ...] = ()  # the URLs the payload gave, shown without credentials
    refresh: tuple[RepoLocation, ...] = ()  # catalogued and authenticated: to refresh
    survey: tuple[SourceSpec, ...] = ()  # sources named and authenticated: to survey
    releases: tuple[ProviderSpec, ...] = ()  # providers whose release list is to be read again
    why: str = ""  # for the log (the server's operator): what was wrong; never a secret


def judge(catalog: Catalog, forge: str, headers: Headers, body: bytes) -> Delivery:
    """Parse, authenticate and match one request to `forge`'s endpoint (a key of PARSERS)."""
    try:
        push = PARSERS[forge](headers, parse_body(body))
    except ClientError as exc:
        why = str(exc)
        if body.startswith(b"payload="):
            why += " (it is form-encoded: set the hook's content type to application/json)"
        return Delivery(forge, "bad_request", event_of(forge, headers), why=why)
    named = tuple(dict.fromkeys(shown_url(u) for u in push.urls))
    check = verifier(forge, headers, body)
    # An event about a repository's being, in a group a source lists, is the sources'; in any
    # other, it is judged as today's events that are no push are: ignored when signed.
    sources = matching_sources(catalog, forge, push) if push.asks_survey else []
    if sources:
        return _judge_sources(catalog, forge, push, named, sources, check)
    candidates = matching_repositories(catalog, push.urls)
    # A push (a tag) or a release event for the repository a provider's releases are read from.
    providers = matching_providers(catalog, push.urls) if push.triggers else []
    verified, known = authorised(catalog, candidates, catalog.webhook_secret_for, check)
    readable: list[ProviderSpec] = []
    if providers:
        secret = _provider_secret(catalog)
        readable, read_known = authorised(catalog, providers, secret, check)
        known = (known and bool(candidates)) or read_known
    if not known:
        why = _which_secret(catalog, candidates, providers)
        return Delivery(forge, "unauthorized", push.event, named, why=why)
    if not push.triggers:
        return Delivery(forge, "ignored_event", push.event, named)
    if not candidates and not providers:
        return Delivery(forge, "no_repository", push.event, named)
    return Delivery(forge, "accepted", push.event, named, tuple(verified), releases=tuple(readable))


def _provider_secret(catalog: Catalog) -> Callable[[ProviderSpec], SecretRef | None]:
    """A provider's webhook secret: its `releases:` entry's own `webhook:`; else that of the
    `modules:` entries of its releases' repository, when they give one of their own (one hook
    signs both); else the global one."""
    modules = {
        repo_key: m.webhook_secret
        for m in catalog.modules
        if m.webhook_secret is not None
        for repo_key in _keys_of(m.repo.url, m.git_url)
    }

    def secret(spec: ProviderSpec) -> SecretRef | None:
        own = spec.releases.webhook_secret if spec.releases is not None else None
        return own or modules.get(releases_key(spec)) or catalog.freshness.webhook_secret

    return secret


def _keys_of(*urls: str | None) -> list[str]:
    return [repo_key(u) for u in urls if u]


def _judge_sources(
    catalog: Catalog,
    forge: str,
    push: Push,
    named: tuple[str, ...],
    sources: list[SourceSpec],
    check: Callable[[str], bool],
) -> Delivery:
    """An event about a repository's being: the `sources` it names, surveyed again when the
    request is signed with a secret that applies (the source's `webhook:`, else the global)."""
    verified, known = authorised(catalog, sources, lambda s: _source_secret(catalog, s), check)
    if not known:
        listed = "; ".join(
            f"{s.key_path}: "
            + ("its own `webhook:` secret" if s.webhook_secret else "the global `webhooks:` secret")
            for s in sources
        )
        why = f"the signature matches no secret that applies ({listed})"
        return Delivery(forge, "unauthorized", push.event, named, why=why)
    return Delivery(forge, "accepted", push.event, named, survey=tuple(verified))


def _source_secret(catalog: Catalog, spec: SourceSpec) -> SecretRef | None:
    return spec.webhook_secret or catalog.freshness.webhook_secret


def _which_secret(
    catalog: Catalog, candidates: list[RepoLocation], providers: list[ProviderSpec]
) -> str:
    """Which secret a refused request had to match, told to the operator (the log), never to
    the sender: a sender without the secret learns nothing of the catalog."""
    if candidates or providers:
        own = {m.repo for m in catalog.modules if m.webhook_secret}
        none = "" if catalog.freshness.webhook_secret else ", and none is configured"
        kinds = [
            f"{loc}: its own `webhook:` secret"
            if loc in own
            else f"{loc}: the global `webhooks:` secret{none}"
            for loc in candidates
        ]
        secret = _provider_secret(catalog)
        kinds += [
            f"the releases of provider {spec}: "
            + (
                "their own `webhook:` secret (or their repository module's)"
                if secret(spec) is not catalog.freshness.webhook_secret
                else f"the global `webhooks:` secret{none}"
            )
            for spec in providers
        ]
        return f"the signature matches no secret that applies ({'; '.join(kinds)})"
    if catalog.freshness.webhook_secret is None:
        return (
            "no repository it names is in the catalog, so only the global `webhooks:` secret "
            "could apply, and none is configured"
        )
    return (
        "no repository it names is in the catalog, and the signature does not match the "
        "global `webhooks:` secret"
    )


def delivery_id(headers: Headers) -> str | None:
    """The forge's id of this delivery, when it sends one (at most 200 characters kept)."""
    for name in DELIVERY_ID_HEADERS:
        value = headers.get(name, "").strip()
        if value:
            return value[:200]
    return None


class SeenDeliveries:
    """The ids of the deliveries accepted in the last `ttl` seconds (at most `most` of them): a
    delivery seen again (a forge's redelivery, or a replay of a captured request) is answered
    without a new fetch. Only accepted deliveries are remembered, so an unsigned request cannot
    use up an id before the real one arrives."""

    def __init__(
        self, ttl: float = 3600.0, most: int = 10_000, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.ttl = ttl
        self.most = most
        self.clock = clock
        self._seen: OrderedDict[tuple[str, str], float] = OrderedDict()

    def first_time(self, forge: str, headers: Headers) -> bool:
        """Whether this delivery is new; remembers it. True when the forge sends no id."""
        found = delivery_id(headers)
        if found is None:
            return True
        now = self.clock()
        while self._seen and (
            len(self._seen) >= self.most or next(iter(self._seen.values())) < now - self.ttl
        ):
            self._seen.popitem(last=False)
        key = (forge, found)
        if key in self._seen:
            return False
        self._seen[key] = now
        return True


def shown_url(url: str) -> str:
    """`url` as it may appear in a log line or an answer: no password, and no user name on
    http(s) either (a token is often given as one)."""
    text = url.strip()
    if "://" in text:
        scheme, _, rest = text.partition("://")
        authority, slash, path = rest.partition("/")
        if "@" in authority and scheme.lower() in ("http", "https"):
            authority = "***@" + authority.rpartition("@")[2]
        text = f"{scheme}://{authority}{slash}{path}"
    return redact(text)


class DeliveryLog:
    """One log line per delivery. Refusals (401, 400) come from anyone who can connect: at most
    one line per forge and outcome every `interval` seconds, with a count of those held back,
    so that a flood of them cannot flood the log (/metrics counts every one)."""

    def __init__(self, interval: float = 10.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = interval
        self.clock = clock
        self._last: dict[tuple[str, str], float] = {}
        self._held: dict[tuple[str, str], int] = {}

    def record(self, delivery: Delivery) -> None:
        d = delivery
        urls = _listed(d.named)
        if d.outcome == "accepted" and d.survey:
            sources = ", ".join(s.key_path for s in d.survey)
            log.info("%s webhook (%r) for %s: discovering %s", d.forge, d.event, urls, sources)
        elif d.outcome == "accepted":
            what = ", ".join([*map(str, d.refresh), *(f"the releases of {s}" for s in d.releases)])
            log.info("%s webhook (%r) for %s: refreshing %s", d.forge, d.event, urls, what)
        elif d.outcome == "duplicate":
            log.info(
                "%s webhook (%r) for %s: delivery %r was handled before; nothing refreshed",
                d.forge,
                d.event,
                urls,
                d.why,
            )
        elif d.outcome == "ignored_event":
            log.info("%s webhook: event %r refreshes nothing (it names %s)", d.forge, d.event, urls)
        elif d.outcome == "no_repository":
            log.warning(
                "%s webhook (%r) names no repository in the catalog: %s; nothing refreshed "
                "(an organisation-wide hook does this for every repository gitreg does not "
                "serve; if this one should be served, its URL in registry.yaml differs)",
                d.forge,
                d.event,
                urls,
            )
        elif (held := self._allowed((d.forge, d.outcome))) is not None:
            more = f" ({held} more like it in the last {self.interval:.0f} s)" if held else ""
            status = 401 if d.outcome == "unauthorized" else 400
            log.warning(
                "%s webhook (%r) for %s refused with %d: %s%s",
                d.forge,
                d.event,
                urls,
                status,
                d.why,
                more,
            )

    def _allowed(self, key: tuple[str, str]) -> int | None:
        """None to hold this line back; else how many were held back since the last one."""
        now = self.clock()
        last = self._last.get(key)
        if last is not None and now - last < self.interval:
            self._held[key] = self._held.get(key, 0) + 1
            return None
        self._last[key] = now
        return self._held.pop(key, 0)


def _listed(urls: tuple[str, ...], most: int = 5) -> str:
    """URLs for a log line: quoted (a newline in a payload cannot forge a line), cut short."""
    if not urls:
        return "no repository URL"
    shown = ", ".join(repr(u[:200]) for u in urls[:most])
    return shown + (f" and {len(urls) - most} more" if len(urls) > most else "")
