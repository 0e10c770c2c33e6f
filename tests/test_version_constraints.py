"""Version constraints as Terraform writes them: a table of versions each admits, and of
constraints refused with the reason."""

from __future__ import annotations

import pytest

from gitreg.version_constraints import VersionConstraint


@pytest.mark.parametrize(
    ("constraint", "admitted", "refused"),
    [
        ("< 2.0.0", ["1.9.9", "0.1.0", "2.0.0-rc.1"], ["2.0.0", "3.1.0"]),
        (">= 1.2, < 1.4", ["1.2.0", "1.3.9"], ["1.1.9", "1.4.0"]),
        ("~> 1.4", ["1.4.0", "1.9.0"], ["1.3.0", "2.0.0"]),
        ("~> 1.4.2", ["1.4.2", "1.4.9"], ["1.4.1", "1.5.0"]),
        ("1.0.0", ["1.0.0", "1.0.0+build"], ["1.0.1"]),
        ("= 1.0", ["1.0.0"], ["1.0.1"]),
        ("!= 1.2.3", ["1.2.4"], ["1.2.3"]),
        ("<= v1.2.3", ["1.2.3"], ["1.2.4"]),
        ("> 0.1.0-rc.1", ["0.1.0"], ["0.1.0-rc.1"]),
    ],
)
def test_a_constraint_admits_what_terraform_would(
    constraint: str, admitted: list[str], refused: list[str]
) -> None:
    parsed = VersionConstraint.parse(constraint)
    assert [v for v in admitted if parsed.admits(v)] == admitted
    assert [v for v in refused if parsed.admits(v)] == []


def test_text_that_is_no_version_is_admitted_by_nothing() -> None:
    assert not VersionConstraint.parse(">= 0.0.0").admits("latest")


@pytest.mark.parametrize(
    ("constraint", "reason"),
    [
        ("", "is not a version constraint clause"),
        ("< 2.0.0,", "is not a version constraint clause"),
        ("about 2", "is not a version constraint clause"),
        ("=> 1.0.0", "is not a version constraint clause"),
        ("~> 1", "~> needs at least a major and a minor"),
    ],
)
def test_a_wrong_constraint_is_refused_with_the_reason(constraint: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        VersionConstraint.parse(constraint)
