"""`revoked:` on modules and providers, in registry.yaml and a repository's `.gitreg.yaml`: read
as `deprecated:` is, refused with key path and line when wrong; a version both deprecated and
revoked is revoked; `downloads.revoked_for_anonymous` read and checked."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

from gitreg.catalog.declaration import read_declaration
from gitreg.catalog.load import load_catalog
from gitreg.catalog.specs import deprecation_of
from gitreg.errors import ConfigError
from gitreg.modules.index import ModuleEntry
from gitreg.modules.resolve import ModuleVersions, Release
from gitreg.providers.hosted import ProviderEntry
from gitreg.web.providers import deprecation_warnings
from tests.catalog.test_deprecations import _repository
from tests.conftest import WriteCatalog
from tests.support.refused_catalogs import assert_refused, refusal
from tests.support.site_snippets import claimed

ENTRY = "    repo: https://git.example.com/infra/vpc.git\n"


def test_modules_and_providers_say_which_versions_are_revoked(
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
            deprecated: [{versions: "< 2.0.0", reason: "Use 2.x."}]
            revoked: [{versions: "1.0.0", reason: "Leaks a secret."}]
        providers:
          - namespace: infra
            type: widget
            artifacts: dist
            revoked: [{versions: "~> 0.9", reason: "Corrupts state."}]
        downloads: {revoked_for_anonymous: kept}
        """
    )
    vpc = catalog.modules[0]
    assert deprecation_of(vpc.revoked, "1.0.0") == "Leaks a secret."
    assert deprecation_of(vpc.revoked, "1.1.0") is None
    assert deprecation_of(catalog.providers[0].revoked, "0.9.4") == "Corrupts state."
    assert catalog.downloads.revoked_for_anonymous == "kept"
    # Both deprecated and revoked: revoked.
    releases = tuple(Release(v, f"v{v}", "0" * 40) for v in ("1.1.0", "1.0.0"))
    entry = ModuleEntry(vpc, Path("/nonexistent"), ModuleVersions(releases, (), 0))
    assert entry.revoked == {"1.0.0"}
    assert (
        entry.revocation(releases[1]) == "Leaks a secret."
        and entry.deprecation(releases[1]) is None
    )
    assert entry.deprecation(releases[0]) == "Use 2.x." and entry.revocation(releases[0]) is None
    provider = ProviderEntry(catalog.providers[0], (), ())
    assert (
        provider.revocation("0.9.0") == "Corrupts state." and provider.deprecation("0.9.0") is None
    )


@pytest.mark.parametrize(
    ("entry", "path", "line", "reason"),
    [
        ("revoked: yes", "modules[0].revoked", 7, "must be a list"),
        ("revoked: [{versions: '1.0.0'}]", "modules[0].revoked[0].reason", 7, "is required"),
        ("revoked: [{reason: leaks}]", "modules[0].revoked[0].versions", 7, "is required"),
        (
            "revoked: [{versions: 'one', reason: leaks}]",
            "modules[0].revoked[0].versions",
            7,
            "'one' is not a version constraint clause",
        ),
        ("revoked: [{versions: '1', reason: ''}]", "modules[0].revoked[0].reason", 7, "empty"),
        (
            f"revoked: [{{versions: '1', reason: {'x' * 501}}}]",
            "modules[0].revoked[0].reason",
            7,
            "at most 500",
        ),
    ],
)
def test_a_wrong_revocation_is_refused_with_its_key_path_and_line(
    tmp_path: Path, entry: str, path: str, line: int, reason: str
) -> None:
    text = f"modules:\n  - namespace: infra\n    name: vpc\n    system: aws\n{ENTRY}    {entry}\n"
    assert_refused(refusal(tmp_path, text), path, line, reason)


def test_a_wrong_setting_for_anonymous_readers_is_refused(tmp_path: Path) -> None:
    refused = refusal(tmp_path, "downloads:\n  revoked_for_anonymous: shown\n")
    assert_refused(
        refused, "downloads.revoked_for_anonymous", 3, "must be one of hidden, kept, not 'shown'"
    )


def test_a_repository_s_own_file_revokes_its_modules_and_providers() -> None:
    text = (
        b"modules:\n  - name: vpc\n    system: aws\n"
        b"    revoked: [{versions: '0.1.0', reason: 'Deletes the VPC.'}]\n"
        b"providers:\n  - type: widget\n"
        b"    revoked: [{versions: '1.2.0', reason: 'Corrupts state.'}]\n"
    )
    declared = read_declaration(text, "platform/tools", _repository())
    assert deprecation_of(declared.modules[0].revoked, "0.1.0") == "Deletes the VPC."
    assert deprecation_of(declared.providers[0].revoked, "1.2.0") == "Corrupts state."
    wrong = b"modules:\n  - name: vpc\n    system: aws\n    revoked: [{versions: '0.1.0'}]\n"
    with pytest.raises(ConfigError, match=r"modules\[0\]\.revoked\[0\]\.reason \(line 4\)"):
        read_declaration(wrong, "platform/tools", _repository())


def test_the_page_s_catalog_revokes_what_it_says(tmp_path: Path) -> None:
    with claimed("deprecations.md", "test_the_page_s_catalog_revokes_what_it_says") as page:
        text = page.take("yaml", "hostname:")
        setting = page.take("yaml", "downloads:")
    (tmp_path / "widget").mkdir()
    path = tmp_path / "registry.yaml"
    text = text.replace("/srv/provider-releases/widget", "widget")
    path.write_text(f"cache_dir: cache\n{text}{setting}")
    catalog = load_catalog(path)
    vpc, widget = catalog.modules[0], catalog.providers[0]
    assert "subnets" in (deprecation_of(vpc.revoked, "1.4.0") or "")
    assert deprecation_of(vpc.revoked, "1.4.1") is None
    assert deprecation_of(vpc.deprecated, "1.4.0") is not None  # and said revoked, not deprecated
    assert deprecation_of(widget.revoked, "0.9.2") == "0.9.2 deletes tags on update; use 0.9.3."
    assert catalog.downloads.revoked_for_anonymous == "hidden"
    # What the page says terraform init prints, as the versions answer words it.
    warned = deprecation_warnings(partial(deprecation_of, widget.revoked), ["0.9.2"], "revoked")
    assert warned == ["Version 0.9.2 is revoked: 0.9.2 deletes tags on update; use 0.9.3."]
