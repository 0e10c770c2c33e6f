"""A module's release tags held to its `require_signed_tags`: each tag object verified once.

A tag the ledger has not published is served only when `git verify-tag` accepts its signature;
one refused is left out, with the reason, for `gitreg list`, `check` and `/v1/status`. A version
once published stays published: its signer is the one read when it was, and a tag published
before the requirement (or whose key left the file since) serves without a signer. Verdicts are
kept by tag object and file content: a poll runs no git, and a file changed has the tags it
refused checked again. See docs/new-tags.md."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from gitreg.catalog.specs import ModuleSpec, TagSigners
from gitreg.git.tag_signatures import Verdict, verify_tag
from gitreg.modules.resolve import IgnoredTag, ModuleVersions

REFUSED = "not published: "  # how an ignored tag's reason says its signature was refused

_verdicts: dict[tuple[str, str, str], Verdict] = {}  # (tag object, kind, file digest) → verdict
_lock = threading.Lock()


def held_to_signers(
    spec: ModuleSpec,
    versions: ModuleVersions,
    published: Mapping[str, str],
    served: Mapping[tuple[str, str], str],
    objects: Mapping[str, tuple[str, str | None]],
    git_dir: Path,
) -> ModuleVersions:
    """`versions` under `spec`'s signers: each release signed, published already, or left out.
    `published` is the ledger's tag → commit, `served` the signers of the releases served by
    (tag, commit), `objects` the clone's tag name → its object and the commit it peels to."""
    signers = spec.signed_tags
    if signers is None:
        return versions
    releases, ignored = [], list(versions.ignored)
    for release in versions.releases:
        signer = served.get((release.tag, release.commit), "")
        was_published = published.get(release.tag) == release.commit
        tag_object, peeled = objects.get(release.tag, ("", None))
        if signer:
            releases.append(release._replace(signer=signer))
            continue
        if was_published and peeled != release.commit:
            # Pinned after the tag moved: the tag object there now says nothing of this commit.
            releases.append(release)
            continue
        verdict = _verdict(git_dir, tag_object, release.commit, signers)
        if verdict.signer:
            releases.append(release._replace(signer=verdict.signer))
        elif was_published:
            releases.append(release)
        else:
            ignored.append(IgnoredTag(release.tag, REFUSED + verdict.refusal))
    return replace(
        versions, releases=tuple(releases), ignored=tuple(sorted(ignored, key=lambda i: i.tag))
    )


def refused(versions: ModuleVersions) -> list[IgnoredTag]:
    """The tags left out because their signature was refused."""
    return [i for i in versions.ignored if i.reason.startswith(REFUSED)]


def _verdict(git_dir: Path, tag_object: str, commit: str, signers: TagSigners) -> Verdict:
    if not tag_object or tag_object == commit:  # a lightweight tag: nothing to run git on
        wanted = "an SSH signature" if signers.kind == "ssh" else "an OpenPGP signature"
        return Verdict("", f"missing signature (require_signed_tags wants {wanted})")
    key = (tag_object, signers.kind, signers.digest)
    with _lock:
        known = _verdicts.get(key)
    if known is None:
        known = verify_tag(git_dir, tag_object, signers.kind, signers.file)
        with _lock:
            _verdicts[key] = known
    return known
