"""The hsts: key of registry.yaml: on by default, off with `false`, shaped by a mapping; each
mistake refused with its key path and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.catalog.settings import HstsPolicy
from tests.conftest import WriteCatalog
from tests.support.refused_catalogs import refusal

MODULE = "modules:\n  - {namespace: infra, name: vpc, system: aws, repo: https://git.example.com/x.git}\n"


@pytest.mark.parametrize(
    ("section", "policy", "header"),
    [
        ("", HstsPolicy(), "max-age=31536000"),
        ("hsts: true\n", HstsPolicy(), "max-age=31536000"),
        ("hsts:\n", HstsPolicy(), "max-age=31536000"),
        ("hsts: false\n", None, None),
        ("hsts: {max_age: 2y}\n", HstsPolicy(max_age=63072000), "max-age=63072000"),
        ("hsts: {max_age: 180d}\n", HstsPolicy(max_age=15552000), "max-age=15552000"),
        ("hsts: {max_age: 3600s}\n", HstsPolicy(max_age=3600), "max-age=3600"),
        ("hsts: {max_age: 0}\n", HstsPolicy(max_age=0), "max-age=0"),
        (
            "hsts: {include_subdomains: true}\n",
            HstsPolicy(include_subdomains=True),
            "max-age=31536000; includeSubDomains",
        ),
    ],
)
def test_hsts_shapes(
    write_catalog: WriteCatalog, section: str, policy: HstsPolicy | None, header: str | None
) -> None:
    catalog = write_catalog(MODULE + section)
    assert catalog.server.hsts == policy
    assert (catalog.server.hsts.header() if catalog.server.hsts else None) == header


@pytest.mark.parametrize(
    ("section", "path", "line", "reason"),
    [
        ("hsts: yes please\n", "hsts", 4, "must be false, or a mapping like {max_age: 1y"),
        ("hsts: {max_age: -1}\n", "hsts.max_age", 4, "must be a positive duration"),
        ("hsts: {max_age: forever}\n", "hsts.max_age", 4, "must be a positive duration"),
        ("hsts:\n  include_subdomains: 1\n", "hsts.include_subdomains", 5, "true or false"),
        ("hsts:\n  preload: true\n", "hsts.preload", 5, "unknown key"),
        ("hsts: {max_age: }\n", "hsts.max_age", 4, "has no value"),
    ],
)
def test_a_bad_hsts_is_refused_with_its_path_and_line(
    tmp_path: Path, section: str, path: str, line: int, reason: str
) -> None:
    (problem,) = refusal(tmp_path, MODULE + section).problems
    assert (problem.path, problem.line) == (path, line)
    assert reason in problem.reason
