"""docs/reference/configuration.md names every key registry.yaml accepts, as the loader itself
says it knows them (tests/docs_site/catalog_keys.py), and no key it would refuse; and each of
its examples is a catalog the loader accepts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from gitreg.catalog.load import load_catalog
from gitreg.errors import ConfigError
from tests.docs_site.catalog_keys import accepted_keys
from tests.docs_site.site_pages import first_cells, page
from tests.support.provider_releases import new_key, write_key


def test_every_key_the_loader_accepts_is_on_the_page(tmp_path: Path) -> None:
    keys = set(accepted_keys(tmp_path))
    assert {"hostname", "modules[].repo", "auth.git.cache", "mirror.origins.HOST.url"} <= keys
    rows = first_cells(page("reference/configuration.md"), "key")
    missing = sorted(keys - rows.keys())
    assert not missing, f"keys registry.yaml accepts, not in a key table: {missing}"


def test_every_key_on_the_page_is_one_the_loader_accepts(tmp_path: Path) -> None:
    keys = set(accepted_keys(tmp_path)) | {"mirror.origins.HOST"}  # a host's URL, written alone
    rows = first_cells(page("reference/configuration.md"), "key")
    unknown = sorted(rows.keys() - keys)
    assert not unknown, f"keys on the page that registry.yaml refuses: {unknown}"


def test_every_row_gives_a_type_a_default_and_what_the_key_does(tmp_path: Path) -> None:
    for key, row in first_cells(page("reference/configuration.md"), "key").items():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        assert len(cells) == 4, f"{key}: a row of key, type, default, what it does: {row}"
        assert cells[1] and cells[3], f"{key}: no type or no description: {row}"


def _folder_for_the_examples(root: Path) -> Path:
    """A folder holding what the page's examples name: key files, CAs, a release folder, a
    mirror folder; the secrets they name by environment variable are not asked for."""
    for name in (
        "tls/server.pem",
        "tls/server.key",
        "certs/internal-ca.pem",
        "certs/proxy-ca.pem",
        "keys/id_ed25519",
        "keys/known_hosts",
        "secrets/metrics-token",
    ):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("stand-in: the loader checks that it is a readable file\n")
    (root / "releases/terraform-provider-widget").mkdir(parents=True)
    (root / "terraform-mirror").mkdir()
    (root / "git").mkdir()
    (root / "keys/allowed_signers").write_text(
        'alice@example.com namespaces="git" ssh-ed25519'
        " AAAAC3NzaC1lZDI1NTE5AAAAIPd8owtzPfOcvkFivPJ4Akhs1ce97SUx8Gzq/i+4uNFh\n"
    )
    write_key(new_key("release-2026"), root / "keys/release-2026.asc")
    write_key(new_key("ci-2025"), root / "keys/ci-2025.asc", public=True)
    return root


def test_every_example_on_the_page_is_a_catalog_gitreg_accepts(tmp_path: Path) -> None:
    root = _folder_for_the_examples(tmp_path)
    examples = re.findall(r"^```yaml\n(.*?)^```$", page("reference/configuration.md"), re.M | re.S)
    assert len(examples) >= 8, "an example for each part of the catalog"
    for example in examples:
        serves = re.search(r"^(modules|providers|mirror):", example, re.M)
        text = example if serves else f"{example}mirror: {{}}\n"
        (root / "registry.yaml").write_text(text)
        try:
            load_catalog(root / "registry.yaml", secrets=())
        except ConfigError as exc:
            pytest.fail(f"this example is refused:\n{example}\n{exc}")


# The least each list's item needs, to read one key of it; not what the page says.
_ITEMS: dict[str, dict[str, object]] = {
    "credentials": {"url": "https://git.example.com/", "token_env": "GIT_TOKEN"},
    "modules": {"namespace": "infra", "name": "vpc", "system": "aws", "repo": "repo"},
    "providers": {"namespace": "acme", "type": "widget", "artifacts": "repo"},
    "auth.tokens": {"name": "ci", "token_sha256": "0" * 64},
    "auth.oidc": {"issuer": "https://issuer.example", "audience": "registry"},
    "auth.login": {
        "issuer": "https://sso.example",
        "client_id": "gitreg",
        "claims": [{"read": ["x"]}],
    },
    "auth.login.claims": {"read": ["x"]},
    "sources": {},
    # A source's own keys, under its list's item: the least each kind needs.
    "sources.gitlab": {"url": "https://gitlab.example.com", "group": "platform"},
    "sources.gitea": {"url": "https://git.example.com", "org": "infra"},
    "sources.github": {"org": "acme"},
    "sources.bitbucket": {"url": "https://bb.example.com", "project": "TF", "namespace": "tf"},
    "sources.folder": {"path": "repo", "namespace": "local"},
    "consumers": {},  # an entry holds `repo` or one source kind
}
# A consumer's source kinds need what a source's do.
_ITEMS |= {
    f"consumers.{key.removeprefix('sources.')}": item
    for key, item in _ITEMS.items()
    if key.startswith("sources.")
}


def _with(key: str, value: object | None) -> dict[str, object]:
    """A catalog that serves the mirror alone and holds `key` (a page's key path, like
    `modules[].download`) set to `value`, or, with None, the least around it without it."""
    document: dict[str, object] = {"mirror": {}}
    here: dict[str, object] = document
    path = ""
    parts = key.split(".")
    for i, part in enumerate(parts):
        name, listed = part.removesuffix("[]"), part.endswith("[]")
        path = f"{path}.{name}".removeprefix(".")
        if i == len(parts) - 1:
            if value is not None:
                here[name] = value
        elif listed:
            item = dict(_ITEMS[path])
            here[name] = [item]
            here = item
        else:
            inner = here.setdefault(name, dict(_ITEMS.get(path, {})))
            assert isinstance(inner, dict)
            here = inner
    return document


def test_every_default_on_the_page_is_what_leaving_the_key_out_gives(tmp_path: Path) -> None:
    """Where the page gives a default as a value (`60s`, `archive`), a catalog that writes that
    value is the catalog that leaves the key out."""
    (tmp_path / "repo").mkdir()
    checked = []
    for key, row in first_cells(page("reference/configuration.md"), "key").items():
        default = [c.strip() for c in row.strip().strip("|").split("|")][2]
        value = re.fullmatch(r"`([^`]+)`", default)
        if value is None:  # words: "none: plain HTTP", "the `listen` address"
            continue
        catalogs = []
        for document in (_with(key, None), _with(key, yaml.safe_load(value[1]))):
            (tmp_path / "registry.yaml").write_text(json.dumps(document))
            catalogs.append(load_catalog(tmp_path / "registry.yaml", secrets=()))
        assert catalogs[0] == catalogs[1], f"{key}: the page says the default is {default}"
        checked.append(key)
    assert len(checked) >= 30, f"defaults checked: {checked}"
