"""Namespace scopes narrowed by another (what a token issued at sign-in still reads when
registry.yaml's claim rules give less now): a namespace is in the result exactly when both
scopes cover it, whatever mix of names and patterns each holds, and case does not matter."""

from __future__ import annotations

import pytest

from gitreg.catalog.namespace_scope import NamespaceScope

NAMESPACES = ("platform", "Platform", "team-a", "team-b", "team-a-prod", "shared-net", "x", "")


@pytest.mark.parametrize(
    ("given", "still"),
    [
        (("platform", "shared-*"), ("shared-*",)),
        (("platform", "shared-*"), ("platform",)),
        (("team-*",), ("*-prod",)),
        (("team-*",), ("team-a", "team-b")),
        (("*",), ("team-*", "x")),
        (("PLATFORM",), ("platform",)),
        (("team-?",), ("team-a*",)),
        (("platform",), ()),
        ((), ("*",)),
        (("[tp]*",), ("t*",)),
    ],
)
def test_a_namespace_is_read_when_both_scopes_cover_it(
    given: tuple[str, ...], still: tuple[str, ...]
) -> None:
    a, b = NamespaceScope(given), NamespaceScope(still)
    for both in (a.narrowed(b), b.narrowed(a)):
        for namespace in NAMESPACES:
            expected = a.covers(namespace) and b.covers(namespace)
            assert both.covers(namespace) is expected, (given, still, namespace)


def test_narrowing_again_keeps_every_scope() -> None:
    once = NamespaceScope(("team-*",)).narrowed(NamespaceScope(("*-prod", "*-dev")))
    twice = once.narrowed(NamespaceScope(("*-a-*",)))
    assert twice.covers("team-a-prod") and not twice.covers("team-b-prod")
    assert not twice.covers("team-a-test") and not twice.covers("other-a-prod")
    assert twice.narrowed(NamespaceScope(("team-a-prod", "x"))) == NamespaceScope(("team-a-prod",))


@pytest.mark.parametrize(
    ("given", "still", "result"),
    [
        (("platform", "shared-net"), ("shared-*",), ("shared-net",)),
        (("platform", "team-a"), ("team-*",), ("team-a",)),
        (("team-*",), ("team-a", "other"), ("team-a",)),
        (("platform",), (), ()),
    ],
)
def test_names_on_one_side_give_names(
    given: tuple[str, ...], still: tuple[str, ...], result: tuple[str, ...]
) -> None:
    narrowed = NamespaceScope(given).narrowed(NamespaceScope(still))
    assert narrowed == NamespaceScope(result) and narrowed.within is None


def test_a_narrowed_scope_says_both() -> None:
    narrowed = NamespaceScope(("team-*",)).narrowed(NamespaceScope(("*-prod",)))
    assert str(narrowed) == "team-*, within *-prod"
    assert str(NamespaceScope(("x",)).narrowed(NamespaceScope(("y",)))) == "no namespace"
