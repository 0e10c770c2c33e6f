"""YAML loading that remembers where each key stood, so config errors can name the line."""

from __future__ import annotations

from typing import Any

import yaml


class Mapping(dict[str, Any]):
    """A YAML mapping with the line of the mapping and of each of its keys."""

    line: int
    key_lines: dict[str, int]


class Sequence(list[Any]):
    """A YAML sequence with the line of the sequence and of each of its items."""

    line: int
    item_lines: list[int]


class DuplicateKey(yaml.MarkedYAMLError):
    pass


class _Loader(yaml.SafeLoader):
    pass


def _mapping(loader: _Loader, node: yaml.MappingNode) -> Mapping:
    loader.flatten_mapping(node)
    result = Mapping()
    result.line = node.start_mark.line + 1
    result.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, str):
            key = str(key)
        if key in result:
            raise DuplicateKey(
                "while reading a mapping",
                node.start_mark,
                f"the key {key!r} is given twice",
                key_node.start_mark,
            )
        result[key] = loader.construct_object(value_node, deep=True)
        result.key_lines[key] = key_node.start_mark.line + 1
    return result


def _sequence(loader: _Loader, node: yaml.SequenceNode) -> Sequence:
    result = Sequence(loader.construct_object(child, deep=True) for child in node.value)
    result.line = node.start_mark.line + 1
    result.item_lines = [child.start_mark.line + 1 for child in node.value]
    return result


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _sequence)


def load(text: str) -> Any:
    """Parse one YAML document; raise yaml.YAMLError (with a line) when it is not YAML."""
    return yaml.load(text, Loader=_Loader)
