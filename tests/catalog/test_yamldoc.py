"""Whether a key path has a problem at it or below it, as the reader answers it by lookup."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.catalog.yamldoc import Reader

PROBLEMS = ("modules[3].repo", "mirror.origins.registry.example.com", "", "auth.tokens[0]")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("modules[3].repo", True),
        ("modules[3]", True),
        ("modules", True),
        ("modules[3].re", False),
        ("modules[30]", False),
        ("modules[", False),
        ("module", False),
        ("mirror.origins.registry.example.com", True),
        ("mirror.origins.registry.example", True),  # a key with dots reads as nested keys
        ("mirror.origins.registry.example.co", False),
        ("mirror", True),
        ("(document)", True),
        ("auth.tokens[0]", True),
        ("auth.tokens", True),
        ("auth.tokens[0].name", False),
        ("tls", False),
    ],
)
def test_problems_at(path: str, expected: bool) -> None:
    reader = Reader(Path("/"))
    for where in PROBLEMS:
        reader.problem(where, 1, "wrong")
    searched = any(
        p.path == path or p.path.startswith((f"{path}.", f"{path}[")) for p in reader.problems
    )
    assert reader.problems_at(path) is searched is expected
