"""Keys given no value: refused with their key path and line, never read as if left out (a module
whose `system: null` YAML read as nothing was once dropped without a word); empty catalogs."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.catalog.load import load_catalog
from gitreg.catalog.secrets import SecretUse
from gitreg.errors import ConfigError, ConfigProblem
from tests.support.refused_catalogs import refusal, refused

# Each document has one value written as @: the key under test, at the path given with it.
MODULE = """\
modules:
  - namespace: {namespace}
    name: {name}
    system: {system}
    repo: {repo}
"""
MODULE_KEYS = {
    "namespace": "infra",
    "name": "vpc",
    "system": "aws",
    "repo": "https://git.example.com/infra/vpc.git",
}
PROVIDER = """\
providers:
  - namespace: {namespace}
    type: {type}
    artifacts: {artifacts}
"""
PROVIDER_KEYS = {"namespace": "acme", "type": "widget", "artifacts": "releases"}


def _module(key: str) -> str:
    return MODULE.format(**(MODULE_KEYS | {key: "@"}))


def _provider(key: str) -> str:
    return PROVIDER.format(**(PROVIDER_KEYS | {key: "@"}))


REQUIRED = [
    *[(_module(key), f"modules[0].{key}") for key in MODULE_KEYS],
    *[(_provider(key), f"providers[0].{key}") for key in PROVIDER_KEYS],
    ("credentials:\n  - url: @\n    token_file: token\nmirror: {}\n", "credentials[0].url"),
    ("tls:\n  certfile: @\n  keyfile: token\nmirror: {}\n", "tls.certfile"),
    ("tls:\n  certfile: token\n  keyfile: @\nmirror: {}\n", "tls.keyfile"),
]
OPTIONAL = [
    ("mirror:\n  origins:\n    registry.example.test: @\n", "mirror.origins.registry.example.test"),
    (
        "mirror:\n  origins:\n    registry.example.test:\n      url: @\n",
        "mirror.origins.registry.example.test.url",
    ),
    ("webhooks:\n  secret_env: @\nmirror: {}\n", "webhooks.secret_env"),
    ("webhooks:\n  secret_file: @\nmirror: {}\n", "webhooks.secret_file"),
    (
        MODULE.format(**MODULE_KEYS) + "    webhook: {secret_env: @}\n",
        "modules[0].webhook.secret_env",
    ),
    ("hostname: @\nmirror: {}\n", "hostname"),
    ("listen: @\nmirror: {}\n", "listen"),
    ("cache_dir: @\nmirror: {}\n", "cache_dir"),
    ("refresh_interval: @\nmirror: {}\n", "refresh_interval"),
    ("poll_concurrency: @\nmirror: {}\n", "poll_concurrency"),
    ("watch_catalog: @\nmirror: {}\n", "watch_catalog"),
    *[
        (MODULE.format(**MODULE_KEYS) + f"    {key}: @\n", f"modules[0].{key}")
        for key in ("path", "tags", "download", "git_url", "archive", "moved_tags", "deleted_tags")
    ],
    (PROVIDER.format(**PROVIDER_KEYS) + "    repo: @\n", "providers[0].repo"),
    (PROVIDER.format(**PROVIDER_KEYS) + "    tags: @\n", "providers[0].tags"),
    (
        "credentials:\n  - url: https://x/\n    token_env: @\nmirror: {}\n",
        "credentials[0].token_env",
    ),
    ("credentials:\n  - url: https://x/\n    ssh_key: @\nmirror: {}\n", "credentials[0].ssh_key"),
    ("mirror:\n  read_through: @\n", "mirror.read_through"),
    ("mirror:\n  ca_file: @\n", "mirror.ca_file"),
    (
        "mirror:\n  origins:\n    registry.example.test: {url: 'https://x/', token_env: @}\n",
        "mirror.origins.registry.example.test.token_env",
    ),
]
# What YAML reads as no value (or an empty string), and what gitreg says about it.
NO_VALUES = [
    ("null", 'is null; write "null" in quotes if you mean the name null'),
    ("NULL", 'is null; write "null" in quotes if you mean the name null'),
    ("~", "is ~, which YAML reads as no value"),
    ("", "has no value"),
    ('""', "is an empty string"),
    ("'  '", "is an empty string"),
]


def _load(tmp_path: Path, text: str) -> ConfigError:
    (tmp_path / "releases").mkdir(exist_ok=True)
    (tmp_path / "token").write_text("t\n")
    return refusal(tmp_path, text)


def _line_of_marker(text: str) -> int:
    first = 1 if "cache_dir:" in text else 2  # _load writes cache_dir first when it is not given
    return first + next(i for i, line in enumerate(text.splitlines()) if "@" in line)


@pytest.mark.parametrize(("value", "reason"), NO_VALUES)
@pytest.mark.parametrize(("text", "path"), REQUIRED)
def test_required_key_without_a_value_is_refused(
    tmp_path: Path, text: str, path: str, value: str, reason: str
) -> None:
    error = _load(tmp_path, text.replace("@", value))
    line = _line_of_marker(text)
    expected = reason if reason.startswith("is null") else f"{reason} (it is required)"
    assert ConfigProblem(path, line, expected) in error.problems, error.problems


@pytest.mark.parametrize(("value", "reason"), NO_VALUES)
@pytest.mark.parametrize(("text", "path"), OPTIONAL)
def test_optional_key_without_a_value_is_refused_not_defaulted(
    tmp_path: Path, text: str, path: str, value: str, reason: str
) -> None:
    error = _load(tmp_path, text.replace("@", value))
    line = _line_of_marker(text)
    expected = (
        reason if reason.startswith("is null") else f"{reason}; give one, or leave the key out"
    )
    assert ConfigProblem(path, line, expected) in error.problems, error.problems


def test_the_message_for_an_unquoted_null(tmp_path: Path) -> None:
    error = _load(tmp_path, _module("system").replace("@", "null"))
    assert error.problems == [
        ConfigProblem(
            "modules[0].system", 5, 'is null; write "null" in quotes if you mean the name null'
        )
    ]
    assert 'modules[0].system (line 5): is null; write "null" in quotes' in str(error)


def test_each_key_without_a_value_is_reported_once(tmp_path: Path) -> None:
    text = "modules:\n  - {namespace: ~, name: '', system: null, repo:}\n"
    paths = [p.path for p in _load(tmp_path, text).problems]
    assert paths == [f"modules[0].{key}" for key in ("name", "namespace", "repo", "system")]


def test_the_name_null_in_quotes_is_a_name(tmp_path: Path) -> None:
    (tmp_path / "releases").mkdir()
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\nmodules:\n"
        "  - {namespace: hashicorp, name: 'null', system: \"null\", repo: 'https://x/null.git'}\n"
        "providers:\n  - {namespace: hashicorp, type: 'null', artifacts: releases}\n"
    )
    catalog = load_catalog(tmp_path / "registry.yaml")
    assert [str(m.address) for m in catalog.modules] == ["hashicorp/null/null"]
    assert [str(p) for p in catalog.providers] == ["hashicorp/null"]


@pytest.mark.parametrize(
    ("text", "path", "line", "reason"),
    [
        ("tls:\nmirror: {}\n", "tls.certfile", 2, "is required"),
        ("webhooks:\nmirror: {}\n", "webhooks", 2, "give secret_env or secret_file"),
        (
            MODULE.format(**MODULE_KEYS) + "    webhook:\n",
            "modules[0].webhook",
            7,
            "give secret_env or secret_file",
        ),
        ("credentials:\n  -\nmirror: {}\n", "credentials[0]", 3, "must be a mapping, not nothing"),
        ("mirror:\n  folders: [~]\n", "mirror.folders[0]", 3, "must be the path of a folder"),
    ],
)
def test_a_section_given_alone_asks_for_what_it_needs(
    tmp_path: Path, text: str, path: str, line: int, reason: str
) -> None:
    error = _load(tmp_path, text)
    assert any(p.path == path and p.line == line and reason in p.reason for p in error.problems), (
        error.problems
    )


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("listen: 127.0.0.1:1\n", 1),
        ("modules: []\n", 2),
        ("modules:\nproviders: []\n", 2),
        ("providers:\nsigning:\n", 1),
    ],
)
def test_a_catalog_with_nothing_to_serve_is_refused(tmp_path: Path, text: str, line: int) -> None:
    error = _load(tmp_path, text)
    assert [(p.path, p.line) for p in error.problems] == [("modules", line)]
    assert "there is nothing to serve" in error.problems[0].reason
    assert "mirror: {}" in error.problems[0].reason


@pytest.mark.parametrize(
    ("mirror", "read_through"),
    [("mirror: {}", False), ("mirror:", False), ("mirror: {read_through: true}", True)],
)
def test_a_registry_of_the_network_mirror_alone_says_so(
    tmp_path: Path, mirror: str, read_through: bool
) -> None:
    (tmp_path / "registry.yaml").write_text(f"cache_dir: cache\nmodules:\n{mirror}\n")
    catalog = load_catalog(tmp_path / "registry.yaml")
    assert catalog.modules == () and catalog.providers == ()
    assert catalog.mirror.read_through is read_through  # off unless registry.yaml turns it on


@pytest.mark.parametrize("secret", ["secret_env: GITREG_TEST_UNSET", "secret_file: absent"])
def test_a_secret_is_checked_only_for_the_commands_that_use_it(tmp_path: Path, secret: str) -> None:
    (tmp_path / "registry.yaml").write_text(
        f"cache_dir: cache\nwebhooks: {{{secret}}}\n"
        "credentials:\n  - {url: 'https://x/', token_env: GITREG_TEST_UNSET}\n"
        "mirror:\n  origins:\n    registry.example.test: {token_file: absent}\n"
    )
    path = tmp_path / "registry.yaml"
    catalog = load_catalog(path, secrets=())
    assert catalog.freshness.webhook_secret and catalog.freshness.webhook_secret.value() is None
    assert catalog.credentials[0].token_env == "GITREG_TEST_UNSET"
    every_use = refused(path)  # serve, demo and check
    assert [p.path for p in every_use.problems] == [
        "credentials[0].token_env",
        f"webhooks.{secret.split(':')[0]}",
        "mirror.origins.registry.example.test.token_file",
    ]
    uses: list[tuple[SecretUse, str]] = [
        ("git", "credentials[0]"),
        ("webhook", "webhooks"),
        ("origin", "mirror.origins"),
    ]
    for use, where in uses:
        assert [p.path.startswith(where) for p in refused(path, secrets={use}).problems] == [True]
