"""libyaml and the pure-Python parser read registry.yaml the same: the same catalog, the same
lines, the same problems."""

from __future__ import annotations

import contextlib
import gc
from pathlib import Path
from typing import Any

import pytest
import yaml

from gitreg.catalog import yamldoc, yamltree
from gitreg.catalog.load import load_catalog
from gitreg.catalog.model import Catalog
from gitreg.errors import ConfigError, ConfigProblem

needs_libyaml = pytest.mark.skipif(
    not yamltree.LIBYAML, reason="PyYAML is built without libyaml: only its pure parser runs"
)

MODULE = """\
  - namespace: infra
    name: vpc
    system: aws
    repo: https://git.example.com/infra/mono.git
"""

GOOD = {
    "block": f"modules:\n{MODULE}",
    "flow": (
        "modules: [{namespace: infra, name: vpc, system: aws,\n"
        "  repo: 'https://git.example.com/infra/mono.git', path: modules/vpc,\n"
        '  tags: ["vpc/v{version}", "vpc-{version}"]}]\n'
    ),
    "anchors and aliases": (
        "modules:\n"
        "  - namespace: &infra infra\n"
        "    name: vpc\n"
        "    system: &aws aws\n"
        "    repo: &mono https://git.example.com/infra/mono.git\n"
        "    path: modules/vpc\n"
        "    tags: &vpc ['vpc/v{version}']\n"
        "  - {namespace: *infra, name: dns, system: *aws, repo: *mono, path: modules/dns}\n"
    ),
    "scalars of every style": (
        "--- # the document's start\n"
        "hostname: 'Registry.Example.com'\n"
        "refresh_interval: 300s\n"
        "fetch_timeout: 2m\n"
        "watch_catalog: no\n"
        "log_format: !!str json\n"
        "modules:\n"
        "  # é, a comment in UTF-8\n"
        '  - namespace: "infra"\n'
        "    name: vpc\n"
        "    system: aws\n"
        "    repo: >-\n"
        "      https://git.example.com/infra/mono.git\n"
        "    tags: |-\n"
        "      vpc/v{version}\n"
        "    archive: folder\n"
        "    path: modules/vpc\n"
        "...\n"
    ),
    "CRLF and a byte order mark": f"\ufeffmodules:\r\n{MODULE.replace(chr(10), chr(13) + chr(10))}",
    "blank lines and comments": f"\n\n# top\nmodules:   # the list\n\n{MODULE}\n\n",
}

BROKEN = {
    "a tab for indentation": f"modules:\n\t- namespace: infra\n{MODULE}",
    "an unclosed quote": f"hostname: 'registry\nmodules:\n{MODULE}",
    "a value after a value": f"hostname: a: b\nmodules:\n{MODULE}",
    "a key given twice": f"modules:\n{MODULE}    name: dns\n",
    "a top key given twice": f"modules:\n{MODULE}modules:\n{MODULE}",
    "an unclosed flow list": "modules: [{namespace: infra}\nhostname: x\n",
    "two documents": f"modules:\n{MODULE}---\nmodules:\n{MODULE}",
    "an alias to nothing": f"modules:\n{MODULE}    path: *nowhere\n",
    "a Python tag": f"hostname: !!python/object/apply:os.system ['true']\nmodules:\n{MODULE}",
    "a local tag": f"hostname: !secret x\nmodules:\n{MODULE}",
    "bad indentation": f"modules:\n  - namespace: infra\n   name: vpc\n{MODULE}",
    "a control character": f"hostname: a\x07b\nmodules:\n{MODULE}",
    "a scalar document": "just some text\n",
    "an empty document": "",
    "a list document": f"- {MODULE.strip()}\n",
    "an unknown key": f"colour: blue\nmodules:\n{MODULE}    colour: red\n",
    "a required key left out": "modules:\n  - {namespace: infra, name: vpc}\n",
    "a null system": f"modules:\n{MODULE.replace('aws', 'null')}",
    "a ~ system": f"modules:\n{MODULE.replace('aws', '~')}",
    "an empty name": f"modules:\n{MODULE.replace('vpc', '')}",
    "a number for a list": "modules: 3\n",
    "a module listed twice": f"modules:\n{MODULE}{MODULE}",
    "a bad template": f"modules:\n{MODULE}    tags: ['vpc/v{{version}}', nightly]\n",
    "a bad duration": f"refresh_interval: soon\nmodules:\n{MODULE}",
    "a key that is a list": f"? [a, b]\n: c\nmodules:\n{MODULE}",
    "a merge key that overrides": (
        f"modules:\n  - &vpc\n{MODULE[4:]}    path: modules/vpc\n  - <<: *vpc\n    name: dns\n"
    ),
    "nesting past libyaml's limit": "hostname: " + "[" * 1001 + "]" * 1001 + "\n",
    "nesting past Python's limit": "hostname: " + "[" * 100_000 + "]" * 100_000 + "\n",
}


def _load(tmp_path: Path, text: str, libyaml: bool) -> Catalog | list[ConfigProblem]:
    path = tmp_path / "registry.yaml"
    path.write_text(f"cache_dir: cache\n{text}" if text.startswith("modules") else text)
    try:
        return load_catalog(path, libyaml=libyaml)
    except ConfigError as exc:
        return exc.problems


def _lines(value: Any) -> Any:
    """Every line a tree of yamldoc values remembers, in the tree's shape."""
    if isinstance(value, yamldoc.Mapping):
        kept = (value.line, value.key_lines, value.null_texts)
        return (kept, {k: _lines(v) for k, v in value.items()})
    if isinstance(value, yamldoc.Sequence):
        return ((value.line, value.item_lines), [_lines(v) for v in value])
    return None


@needs_libyaml
@pytest.mark.parametrize("text", GOOD.values(), ids=GOOD.keys())
def test_a_good_catalog_reads_the_same(tmp_path: Path, text: str) -> None:
    pure, fast = _load(tmp_path, text, False), _load(tmp_path, text, True)
    assert isinstance(pure, Catalog), pure
    assert fast == pure
    document, expected = yamltree.load(text, libyaml=True), yamltree.load(text, libyaml=False)
    assert document == expected
    assert _lines(document) == _lines(expected)


@needs_libyaml
@pytest.mark.parametrize("text", BROKEN.values(), ids=BROKEN.keys())
def test_a_broken_catalog_is_refused_the_same(tmp_path: Path, text: str) -> None:
    pure, fast = _load(tmp_path, text, False), _load(tmp_path, text, True)
    assert isinstance(pure, list) and pure, pure
    assert fast == pure


def test_a_refusal_keeps_the_pure_parsers_words(tmp_path: Path) -> None:
    # libyaml says "found character that cannot start any token", without the character.
    problems = _load(tmp_path, BROKEN["a tab for indentation"], yamltree.LIBYAML)
    assert problems == [
        ConfigProblem(
            "(document)",
            3,
            "not valid YAML: found character '\\t' that cannot start any token",
        )
    ]


def _parse(text: str) -> None:
    with contextlib.suppress(yaml.YAMLError):
        yamltree.load(text)


@pytest.mark.parametrize("text", ["modules: []\n", "modules: [\n"], ids=["good", "broken"])
def test_the_garbage_collector_is_left_as_it_was(text: str) -> None:
    assert gc.isenabled()
    _parse(text)
    assert gc.isenabled()
    gc.disable()
    try:
        _parse(text)
        assert not gc.isenabled()
    finally:
        gc.enable()
