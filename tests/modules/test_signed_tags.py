"""What `require_signed_tags` makes of a module's versions without a new verdict: a release
served keeps its signer (no git is run for it), one the ledger published stays, a lightweight
tag is refused without git. The verdicts themselves are in tests/git/test_tag_signatures.py."""

from __future__ import annotations

from pathlib import Path

from gitreg.address import ModuleAddress
from gitreg.catalog.specs import ModuleSpec, TagSigners
from gitreg.git.location import RepoLocation
from gitreg.modules.resolve import IgnoredTag, ModuleVersions, Release
from gitreg.modules.signed_tags import held_to_signers, refused

_SIGNERS = TagSigners("ssh", Path("/nonexistent/allowed_signers"), "0" * 64)
_SPEC = ModuleSpec(
    ModuleAddress.parse("infra", "vpc", "aws"),
    RepoLocation.parse("https://git.example.com/vpc.git", Path("/")),
    signed_tags=_SIGNERS,
)
_NO_CLONE = Path("/nonexistent/clone.git")  # git run here would refuse every tag


def _versions(*releases: Release) -> ModuleVersions:
    return ModuleVersions(releases, (), 0)


def test_a_served_signer_is_kept_and_a_published_tag_stays() -> None:
    served = Release("1.1.0", "v1.1.0", "b" * 40)
    published = Release("1.0.0", "v1.0.0", "a" * 40)  # before the requirement
    held = held_to_signers(
        _SPEC,
        _versions(served, published),
        {"v1.1.0": "b" * 40, "v1.0.0": "a" * 40},
        {("v1.1.0", "b" * 40): "alice@example.com (ED25519 key SHA256:x)"},
        {"v1.1.0": ("c" * 40, "b" * 40), "v1.0.0": ("a" * 40, "a" * 40)},
        _NO_CLONE,
    )
    assert [(r.version, r.signer) for r in held.releases] == [
        ("1.1.0", "alice@example.com (ED25519 key SHA256:x)"),
        ("1.0.0", ""),
    ]
    assert refused(held) == []


def test_a_new_lightweight_tag_is_refused_as_unsigned() -> None:
    held = held_to_signers(
        _SPEC,
        _versions(Release("1.2.0", "v1.2.0", "d" * 40)),
        {},
        {},
        {"v1.2.0": ("d" * 40, "d" * 40)},
        _NO_CLONE,
    )
    assert held.releases == ()
    assert refused(held) == [
        IgnoredTag(
            "v1.2.0",
            "not published: missing signature (require_signed_tags wants an SSH signature)",
        )
    ]


def test_without_the_requirement_nothing_changes() -> None:
    versions = _versions(Release("1.2.0", "v1.2.0", "d" * 40))
    held = held_to_signers(ModuleSpec(_SPEC.address, _SPEC.repo), versions, {}, {}, {}, _NO_CLONE)
    assert held is versions
