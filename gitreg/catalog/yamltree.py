"""registry.yaml parsed into a tree that remembers where each key and item stood: libyaml when
PyYAML has it, else the pure-Python parser, with the same result and the same refusals."""

from __future__ import annotations

from typing import Any, cast

import yaml

from gitreg.pacing import breathe, collector_paused


class Mapping(dict[str, Any]):
    """A YAML mapping with the line of the mapping and of each of its keys, and how each key
    given no value was written: "" (nothing), "~", "null" (in any case)."""

    line: int
    key_lines: dict[str, int]
    null_texts: dict[str, str]

    @classmethod
    def empty(cls, line: int) -> Mapping:
        """What a section written with nothing under it stands for (`tls:` alone)."""
        result = cls()
        result.line, result.key_lines, result.null_texts = line, {}, {}
        return result


class Sequence(list[Any]):
    """A YAML sequence with the line of the sequence and of each of its items."""

    line: int
    item_lines: list[int]


class DuplicateKey(yaml.MarkedYAMLError):
    pass


class _Loader(yaml.SafeLoader):
    pass


# libyaml's parser (PyYAML's CSafeLoader) when PyYAML was built with it: faster than the
# pure-Python one (bench/RESULTS.md: bench.catalog_load), with the same nodes and marks, so the
# same lines. The constructors below,
# which build the result, are Python in both.
LIBYAML: bool = yaml.__with_libyaml__


class _CLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._tags: dict[tuple[str, Any], str] = {}

    def resolve(self, kind: type[yaml.Node], value: Any, implicit: Any) -> str:
        # libyaml composes the document in C: a node resolved is where a reload, paced while
        # requests are answered, can rest (`gitreg.pacing`).
        breathe()
        # A scalar's tag depends on its text alone (SafeLoader has no path resolvers), and a
        # catalog repeats most of its texts (every key, a namespace, a system): matched once.
        if kind is not yaml.ScalarNode:
            return cast(str, super().resolve(kind, value, implicit))
        memo = (value, implicit)
        tag = self._tags.get(memo)
        if tag is None:
            tag = self._tags[memo] = super().resolve(kind, value, implicit)
        return tag


_NULL_TAG = "tag:yaml.org,2002:null"
_STR_TAG = "tag:yaml.org,2002:str"


def _construct(loader: _Loader, node: yaml.Node) -> Any:
    # A string is its node's text (what construct_yaml_str returns), taken without the detour.
    if node.tag == _STR_TAG and type(node) is yaml.ScalarNode:
        return node.value
    return loader.construct_object(node, deep=True)


def _mapping(loader: _Loader, node: yaml.MappingNode) -> Mapping:
    breathe()
    loader.flatten_mapping(node)
    result = Mapping.empty(node.start_mark.line + 1)
    for key_node, value_node in node.value:
        key = _construct(loader, key_node)
        if not isinstance(key, str):
            key = str(key)
        if key in result:
            raise DuplicateKey(
                "while reading a mapping",
                node.start_mark,
                f"the key {key!r} is given twice",
                key_node.start_mark,
            )
        result[key] = _construct(loader, value_node)
        result.key_lines[key] = key_node.start_mark.line + 1
        if isinstance(value_node, yaml.ScalarNode) and value_node.tag == _NULL_TAG:
            result.null_texts[key] = value_node.value
    return result


def _sequence(loader: _Loader, node: yaml.SequenceNode) -> Sequence:
    result = Sequence([_construct(loader, child) for child in node.value])
    result.line = node.start_mark.line + 1
    result.item_lines = [child.start_mark.line + 1 for child in node.value]
    return result


for _loader in (_Loader, _CLoader):
    _loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)
    _loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _sequence)


def load(text: str, libyaml: bool = LIBYAML) -> Any:
    """Parse one YAML document; raise yaml.YAMLError (with a line) when it is not YAML.

    With `libyaml`, libyaml parses; a document it refuses is read again by the pure-Python
    parser, whose refusal is the one reported: the two word some problems differently, and the
    messages (and their lines) stay the ones gitreg always gave."""
    if libyaml:
        try:
            # Hundreds of thousands of young nodes, none garbage: the collector's passes over
            # them slowed the parse of 10,000 modules (bench/RESULTS.md: bench.catalog_load).
            with collector_paused():
                return _parsed(_CLoader(text))
        except yaml.YAMLError:
            pass
    return _parsed(_Loader(text))


def _parsed(loader: yaml.SafeLoader) -> Any:
    """What `yaml.load` returns, with the document's nodes let go of one by one."""
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        try:
            return loader.construct_document(root)
        finally:
            _let_go(root)
    finally:
        loader.dispose()


def _let_go(root: yaml.Node) -> None:
    """Free a document's nodes one at a time, resting as it goes. Dropped at once, the nodes of
    10,000 modules (and their marks) were freed in one cascade of reference counts that held the
    GIL, and every request, until it ended (bench/RESULTS.md: bench.scale)."""
    waiting: list[Any] = [root]
    while waiting:
        node = waiting.pop()
        children = node.value
        if isinstance(children, list):  # a mapping's pairs, a sequence's items
            node.value = None  # an alias's node, met again, has nothing left to let go of
            for child in children:
                if isinstance(child, tuple):
                    waiting.extend(child)
                else:
                    waiting.append(child)
            del children
            breathe()
