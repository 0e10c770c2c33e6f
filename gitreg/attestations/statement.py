"""A version's provenance as an in-toto Statement v1 with a SLSA provenance v1 predicate.

Its subject is the archive clients download (named by the SHA-256 the ledger records, the one
`?checksum=` carries), or for a `download: git` module the commit itself. It names the
repository (never its credentials), tag, folder, commit, tree and tag object, the tag's signer
when it was verified, and gitreg as the builder. Written one way only, compact JSON with sorted
keys and no time in it, so that the same version gives the same bytes (docs/verifying.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from gitreg.git.location import is_scp_like

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://slsa.dev/provenance/v1"
BUILD_TYPE = "urn:gitreg:buildtype:module-archive:v1"


@dataclass(frozen=True, kw_only=True)
class ReleaseFacts:
    """What a statement says of one module version; `archive_sha256` "" when it has no archive
    (downloaded with git), `tag_object` "" for a lightweight tag, `signer` "" when unverified."""

    address: str  # NAMESPACE/NAME/SYSTEM
    version: str
    archive_sha256: str
    repository: str  # as gitreg clones it; credentials are dropped here
    tag: str
    path: str  # the module's folder in the repository, "" for its root
    commit: str
    tree: str
    tag_object: str
    signer: str
    signer_kind: str  # "ssh" or "openpgp" when `signer` is given
    builder: str  # the registry's own URL
    gitreg_version: str


def statement(facts: ReleaseFacts) -> dict[str, object]:
    """The statement, as a JSON value."""
    repository = without_credentials(facts.repository)
    if facts.archive_sha256:
        subject = {
            "name": f"{facts.address}/{facts.version}.tar.gz",
            "digest": {"sha256": facts.archive_sha256},
        }
    else:
        subject = {
            "name": f"{facts.address}/{facts.version}",
            "digest": {"gitCommit": facts.commit},
        }
    digest = {"gitCommit": facts.commit, "gitTree": facts.tree}
    if facts.tag_object:
        digest["gitTag"] = facts.tag_object
    internal: dict[str, object] = {"download": "archive" if facts.archive_sha256 else "git"}
    if facts.signer:
        internal["signer"] = {"kind": facts.signer_kind, "identity": facts.signer}
    return {
        "_type": STATEMENT_TYPE,
        "subject": [subject],
        "predicateType": PREDICATE_TYPE,
        "predicate": {
            "buildDefinition": {
                "buildType": BUILD_TYPE,
                "externalParameters": {
                    "repository": repository,
                    "tag": facts.tag,
                    "path": facts.path,
                },
                "internalParameters": internal,
                "resolvedDependencies": [
                    {"uri": f"git+{repository}@refs/tags/{facts.tag}", "digest": digest}
                ],
            },
            "runDetails": {
                "builder": {"id": facts.builder, "version": {"gitreg": facts.gitreg_version}},
                "metadata": {"invocationId": f"{facts.address}@{facts.version}"},
            },
        },
    }


def payload(facts: ReleaseFacts) -> bytes:
    """The statement's one serialisation: compact JSON, keys sorted, UTF-8."""
    text = json.dumps(statement(facts), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode()


def without_credentials(url: str) -> str:
    """`url` with no user part: `https://TOKEN@host/x` and `ssh://git@host/x` lose it, and git's
    short form `git@host:path` becomes `ssh://host/path`. A local path is a `file://` URL."""
    if is_scp_like(url):
        host, _, path = url.rpartition("@")[2].partition(":")
        return f"ssh://{host}/{path}"
    if "://" not in url:
        return f"file://{url}"
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port is not None:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))
