"""registry.yaml written for a test, and the ConfigError that refuses it, problem by problem."""

from __future__ import annotations

import textwrap
from collections.abc import Collection
from pathlib import Path

import pytest

from gitreg.catalog.load import load_catalog
from gitreg.catalog.secrets import SECRET_USES, SecretUse
from gitreg.errors import ConfigError


def registry_yaml(folder: Path, text: str) -> Path:
    """`text`, dedented, written as `folder`/registry.yaml, with `cache_dir: cache` first unless
    it names a cache_dir; returns its path."""
    body = textwrap.dedent(text)
    if "cache_dir:" not in body:
        body = f"cache_dir: cache\n{body}"
    path = folder / "registry.yaml"
    path.write_text(body)
    return path


def refused(path: Path, secrets: Collection[SecretUse] = SECRET_USES) -> ConfigError:
    """The ConfigError that loading the registry.yaml at `path` raises (its secrets checked for
    the uses in `secrets`); the test fails if it loads."""
    with pytest.raises(ConfigError) as caught:
        load_catalog(path, secrets)
    return caught.value


def refusal(folder: Path, text: str) -> ConfigError:
    """The ConfigError that refuses `text` written as `registry_yaml` writes it."""
    return refused(registry_yaml(folder, text))


def assert_refused(error: ConfigError, path: str, line: int | None, reason: str) -> None:
    """`error` names a problem at the key `path`, on `line`, whose reason says `reason`."""
    problems = error.problems
    assert any(p.path == path and p.line == line and reason in p.reason for p in problems), problems
