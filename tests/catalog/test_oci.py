"""The oci: key of registry.yaml: off by default, on with `enabled: true`; each mistake refused
with its key path and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.catalog.settings import OciSettings
from tests.conftest import WriteCatalog
from tests.support.refused_catalogs import refusal

MODULE = "modules:\n  - {namespace: infra, name: vpc, system: aws, repo: https://git.example.com/x.git}\n"


@pytest.mark.parametrize(
    ("section", "settings"),
    [
        ("", OciSettings()),
        ("oci:\n", OciSettings()),
        ("oci: {enabled: true}\n", OciSettings(enabled=True)),
        ("oci: {enabled: false}\n", OciSettings()),
        (
            "oci: {enabled: true, module_locations: true}\n",
            OciSettings(enabled=True, module_locations=True),
        ),
    ],
)
def test_oci_shapes(write_catalog: WriteCatalog, section: str, settings: OciSettings) -> None:
    assert write_catalog(MODULE + section).oci == settings


@pytest.mark.parametrize(
    ("section", "path", "line", "reason"),
    [
        ("oci: true\n", "oci", 4, "mapping"),
        ("oci: {enabled: yes please}\n", "oci.enabled", 4, "true or false"),
        ("oci:\n  enable: true\n", "oci.enable", 5, "unknown key"),
        ("oci:\n  module_locations: true\n", "oci.module_locations", 5, "needs oci.enabled"),
        ("oci: {enabled: }\n", "oci.enabled", 4, "has no value"),
    ],
)
def test_a_bad_oci_is_refused_with_its_path_and_line(
    tmp_path: Path, section: str, path: str, line: int, reason: str
) -> None:
    (problem,) = refusal(tmp_path, MODULE + section).problems
    assert (problem.path, problem.line) == (path, line)
    assert reason in problem.reason
