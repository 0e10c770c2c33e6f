"""`deprecated:` on modules and providers, in registry.yaml and a repository's `.gitreg.yaml`:
read into constraints and reasons, and refused with key path and line when wrong."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

from gitreg.catalog.declaration import EntryDefaults, read_declaration, version_deprecation
from gitreg.catalog.load import load_catalog
from gitreg.catalog.specs import ForgeReleases, deprecation_of
from gitreg.errors import ConfigError
from gitreg.git.location import RepoLocation
from gitreg.web.providers import deprecation_warnings
from tests.conftest import WriteCatalog
from tests.support.refused_catalogs import assert_refused, refusal
from tests.support.site_snippets import claimed


def test_modules_and_providers_say_which_versions_are_deprecated(
    write_catalog: WriteCatalog, tmp_path: Path
) -> None:
    (tmp_path / "dist").mkdir()
    catalog = write_catalog(
        """
        modules:
          - namespace: infra
            name: vpc
            system: aws
            repo: https://git.example.com/infra/vpc.git
            deprecated:
              - versions: "< 2.0.0"
                reason: "1.x keeps state in the old bucket;
                  use 2.x."
              - {versions: "2.1.0", reason: "Breaks IPv6."}
        providers:
          - namespace: infra
            type: widget
            artifacts: dist
            deprecated: [{versions: "~> 0.9", reason: "Use 1.x."}]
        """
    )
    vpc = catalog.modules[0].deprecated
    assert [str(d.versions) for d in vpc] == ["< 2.0.0", "2.1.0"]
    assert deprecation_of(vpc, "1.4.0") == "1.x keeps state in the old bucket; use 2.x."
    assert deprecation_of(vpc, "2.1.0") == "Breaks IPv6."
    assert deprecation_of(vpc, "2.0.0") is None
    widget = catalog.providers[0].deprecated
    assert deprecation_of(widget, "0.9.3") == "Use 1.x." and deprecation_of(widget, "1.0.0") is None


@pytest.mark.parametrize(
    ("entry", "path", "line", "reason"),
    [
        ("deprecated: yes", "modules[0].deprecated", 7, "must be a list"),
        ("deprecated: [{versions: '< 2'}]", "modules[0].deprecated[0].reason", 7, "is required"),
        ("deprecated: [{reason: old}]", "modules[0].deprecated[0].versions", 7, "is required"),
        (
            "deprecated: [{versions: 'before 2', reason: old}]",
            "modules[0].deprecated[0].versions",
            7,
            "'before 2' is not a version constraint clause",
        ),
        (
            "deprecated: [{versions: '< 2', reason: old, since: 1}]",
            "modules[0].deprecated[0].since",
            7,
            "unknown key",
        ),
        (
            "deprecated: [{versions: '< 2', reason: ''}]",
            "modules[0].deprecated[0].reason",
            7,
            "empty",
        ),
        (
            f"deprecated: [{{versions: '< 2', reason: {'x' * 501}}}]",
            "modules[0].deprecated[0].reason",
            7,
            "at most 500",
        ),
    ],
)
def test_a_wrong_deprecation_is_refused_with_its_key_path_and_line(
    tmp_path: Path, entry: str, path: str, line: int, reason: str
) -> None:
    refused = refusal(
        tmp_path,
        "modules:\n  - namespace: infra\n    name: vpc\n    system: aws\n"
        f"    repo: https://git.example.com/infra/vpc.git\n    {entry}\n",
    )
    assert_refused(refused, path, line, reason)


def _repository() -> EntryDefaults:
    return EntryDefaults(
        RepoLocation.parse("https://gitlab.example.com/platform/tools.git", Path("/")),
        "acme",
        lambda namespace: False,
        (),
        releases=ForgeReleases("gitlab", "https://gitlab.example.com", "platform/tools"),
        cache_dir=Path("/var/cache/gitreg"),
    )


def test_a_repository_s_own_file_deprecates_its_modules_and_providers() -> None:
    text = (
        b"modules:\n  - name: vpc\n    system: aws\n"
        b"    deprecated: [{versions: '< 1.0.0', reason: 'Pre-releases of the API.'}]\n"
        b"providers:\n  - type: widget\n"
        b"    deprecated: [{versions: '<= 1.2.0', reason: 'Use 2.x.'}]\n"
    )
    declared = read_declaration(text, "platform/tools", _repository())
    assert deprecation_of(declared.modules[0].deprecated, "0.4.0") == "Pre-releases of the API."
    assert deprecation_of(declared.providers[0].deprecated, "1.2.0") == "Use 2.x."


def test_the_page_s_catalog_deprecates_what_it_says(tmp_path: Path) -> None:
    with claimed("deprecations.md", "test_the_page_s_catalog_deprecates_what_it_says") as page:
        text = page.take("yaml", "hostname:")
    (tmp_path / "widget").mkdir()
    path = tmp_path / "registry.yaml"
    path.write_text("cache_dir: cache\n" + text.replace("/srv/provider-releases/widget", "widget"))
    catalog = load_catalog(path)
    vpc, widget = catalog.modules[0].deprecated, catalog.providers[0].deprecated
    assert "retired bucket" in (deprecation_of(vpc, "1.9.0") or "")
    assert "IPv6" in (deprecation_of(vpc, "2.1.0") or "")
    assert deprecation_of(vpc, "2.1.1") is None
    assert deprecation_of(widget, "0.9.0") == "0.9 mangles tags on update; use 1.0.0 or later."
    # What the page says terraform init prints, as the versions answer words it.
    assert deprecation_warnings(partial(deprecation_of, widget), ["1.0.0", "0.9.0"]) == [
        "Version 0.9.0 is deprecated: 0.9 mangles tags on update; use 1.0.0 or later."
    ]


def test_the_page_s_repository_file_deprecates_what_it_says() -> None:
    with claimed(
        "deprecations.md", "test_the_page_s_repository_file_deprecates_what_it_says"
    ) as page:
        text = page.take("yaml", "- name: vpc")
    declared = read_declaration(text.encode(), "platform/tools", _repository())
    assert "1.0.0 or later" in (deprecation_of(declared.modules[0].deprecated, "0.3.0") or "")
    assert deprecation_of(declared.providers[0].deprecated, "1.2.0") == "Use 2.x."


def test_a_repository_s_file_may_carry_a_deprecated_line() -> None:
    """Read at each version's commit (by the docs); at the default branch only checked."""
    text = b"deprecated: Retired.\nmodules:\n  - {name: vpc, system: aws}\n"
    assert read_declaration(text, "platform/tools", _repository()).modules
    assert version_deprecation(text) == "Retired."
    for wrong in (b"deprecated: [a]\nmodules: [{name: vpc, system: aws}]\n", b"deprecated:\n"):
        with pytest.raises(ConfigError, match="deprecated"):
            read_declaration(wrong, "platform/tools", _repository())
    for unread in (b"deprecated: [a]\n", b"\xff", b"a: [", b"- x\n", b""):
        assert version_deprecation(unread) == ""


def test_the_page_s_version_line_deprecates_its_version() -> None:
    with claimed("deprecations.md", "test_the_page_s_version_line_deprecates_its_version") as page:
        text = page.take("yaml", 'deprecated: "The last').encode()
    assert read_declaration(text, "platform/tools", _repository()).modules
    assert version_deprecation(text) == "The last 1.x release: 1.x ends in June; move to 2.x."
