"""A module version's provenance (a signed in-toto statement), and the public key it verifies with.

`GET /v1/modules/NS/NAME/SYSTEM/VERSION/provenance` answers the DSSE envelope, through the gate
the version's download goes through; `GET /v1/provenance/key.pem` the public key, to anyone.
Without `provenance.key` in registry.yaml, both are 404s that say which key to set."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from gitreg.attestations.envelopes import MEDIA_TYPE
from gitreg.attestations.keys import registry_key
from gitreg.attestations.provenance import provenance_of
from gitreg.errors import NotFound
from gitreg.web.modules import admitted, normalised, release_of
from gitreg.web.state import state_of, world_of

_OFF = (
    "this registry signs no provenance: its operator sets provenance.key in registry.yaml"
    " (an Ed25519 or ECDSA P-256 private key) to sign it"
)


async def provenance(request: Request) -> Response:
    snapshot, entry, _ = await admitted(request)  # before anything is looked up
    if world_of(request).catalog.provenance is None:
        raise NotFound(_OFF)
    text = request.path_params["version"]
    release = release_of(entry, text)
    if release is None:
        raise NotFound(f"{entry.spec.address} has no version {normalised(text)}")
    ledger = snapshot.ledgers[entry.spec.repo]
    archives = state_of(request).archives
    envelope = await provenance_of(archives, snapshot.catalog, ledger, entry, release)
    if envelope is None:  # not reached: the request reads one world, whose catalog signs
        raise NotFound(_OFF)
    return Response(envelope, media_type=MEDIA_TYPE)


async def public_key(request: Request) -> Response:
    """The key provenance is signed with, as PEM (SubjectPublicKeyInfo); its key id, the one
    each signature names, in `X-Key-Id`."""
    settings = world_of(request).catalog.provenance
    if settings is None:
        raise NotFound(_OFF)
    key = registry_key(settings)
    return Response(
        key.public_pem, media_type="application/x-pem-file", headers={"X-Key-Id": key.keyid}
    )
