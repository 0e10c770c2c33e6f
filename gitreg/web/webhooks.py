"""Webhook endpoints: the signature verified, answered at once, the work done in the background.

A delivery refreshes only the catalogued repositories the payload names (and reads again the
release lists of providers whose releases are in one), or discovers again the sources whose group
an event about a repository's being (created, deleted, renamed...) names. The answer is what the
forge's delivery log shows: 202 when work started; 200 when the delivery was understood and there
is nothing to do (no push, or no catalogued repository: an organisation-wide hook delivers those
for every repository, and a forge counts a 4xx as a failure, GitLab disabling the hook after a
few); 401 and 400 for a refused one. A 2xx body says which URLs the payload named.
See docs/new-tags.md."""

from __future__ import annotations

from dataclasses import replace

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from gitreg.errors import ClientError, NotFound, Unauthorized
from gitreg.freshness.deliveries import delivery_id, judge
from gitreg.freshness.webhooks import PARSERS
from gitreg.web.state import state_of, world_of


async def receive(request: Request) -> Response:
    forge = request.path_params["forge"]
    if forge not in PARSERS:
        raise NotFound(f"no webhook for {forge!r}; known: {', '.join(PARSERS)}")
    body = await request.body()  # bounded by BufferedBodies
    headers = {k.lower(): v for k, v in request.headers.items()}
    state = state_of(request)
    delivery = judge(world_of(request).catalog, forge, headers, body)
    if delivery.outcome == "accepted" and not state.seen_deliveries.first_time(forge, headers):
        delivery = replace(delivery, outcome="duplicate", why=delivery_id(headers) or "")
    state.webhook_counts[(forge, delivery.outcome)] += 1
    state.webhook_log.record(delivery)
    named = list(delivery.named)
    if delivery.outcome == "bad_request":
        raise ClientError(delivery.why)
    if delivery.outcome == "unauthorized":
        raise Unauthorized(
            f"the {forge} webhook's signature does not match a configured secret "
            "(the server's log says which secret applies)"
        )
    if delivery.outcome == "duplicate":
        again = f"delivery {delivery.why!r} was handled before: nothing refreshed"
        return JSONResponse({"refreshing": [], "named": named, "duplicate": again})
    if delivery.outcome == "ignored_event":
        ignored = f"event {delivery.event!r} refreshes nothing"
        return JSONResponse({"refreshing": [], "named": named, "ignored": ignored})
    if delivery.outcome == "no_repository":
        warning = "none of the repositories named is in the registry's catalog: nothing to refresh"
        return JSONResponse({"refreshing": [], "named": named, "warning": warning})
    if delivery.survey:
        for spec in delivery.survey:
            state.background.surveys.request(spec)  # coalesced, as syncs are
        discovering = [spec.key_path for spec in delivery.survey]
        return JSONResponse({"discovering": discovering, "refreshing": [], "named": named}, 202)
    for location in delivery.refresh:
        state.syncs.request(location, "webhook")  # coalesced: a flood costs one fetch or two
    for provider in delivery.releases:
        state.background.release_reads.request(provider.key)  # coalesced too: one read or two
    refreshing = [str(loc) for loc in delivery.refresh]
    if not delivery.releases:
        return JSONResponse({"refreshing": refreshing, "named": named}, 202)
    releases = [str(provider) for provider in delivery.releases]
    return JSONResponse({"refreshing": refreshing, "releases": releases, "named": named}, 202)
