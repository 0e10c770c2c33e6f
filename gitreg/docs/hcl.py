"""python-hcl2's values made plain: the text and HCL people read.

What python-hcl2 hands back keeps HCL's own spelling (strings with their quotes and escapes,
block labels quoted, expressions wrapped as `${...}`, heredocs as written when not converted),
and documentation wants text people read, or HCL as written."""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from typing import Any

import hcl2
from hcl2.parser import parser as hcl2_parser
from hcl2.rules.abstract import LarkElement, LarkRule
from hcl2.utils import SerializationOptions

# Heredocs converted to strings (with `<<-` indentation removed, as Terraform does); comments
# dropped; objects and tuples kept as Python values, so that blocks can be walked.
_OPTIONS = SerializationOptions(with_comments=False, preserve_heredocs=False)

_parser_lock = threading.Lock()
_MARKERS = frozenset({"__is_block__", "__comments__", "__inline_comments__"})
_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)", re.DOTALL)
_SIMPLE = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\"}
_HEREDOC = re.compile(r"\A<<(-?)([A-Za-z_][A-Za-z0-9_-]*)\n(.*?)\n?[ \t]*\2\s*\Z", re.DOTALL)


class HclSyntaxError(ValueError):
    """A file python-hcl2 cannot read; the message says where."""


def parse(text: str) -> dict[str, Any]:
    """A file's top-level blocks and attributes, as python-hcl2 reads them."""
    with _parser_lock:  # built once (a quarter of a second), not by each first build at once
        hcl2_parser()
    try:
        tree = hcl2.parses(text)
    except Exception as exc:  # lark raises a family of its own, and the odd ValueError
        raise HclSyntaxError(_syntax_message(exc)) from None
    try:
        parsed: dict[str, Any] = hcl2.serialize(tree, serialization_options=_OPTIONS)
    except Exception as exc:
        raise HclSyntaxError(_syntax_message(exc)) from None
    finally:
        _unlink(tree)
    return parsed


def _unlink(tree: LarkElement) -> None:
    """Each node of python-hcl2's tree parted from its parent: each child points back at its
    parent, so a whole tree is cyclic garbage that only the collector frees, and the collector
    is off during paced work (`gitreg.pacing`); parted, the tree is freed as soon as dropped."""
    todo: list[LarkElement] = [tree]
    while todo:
        node = todo.pop()
        node.set_parent(None)  # type: ignore[arg-type]
        if isinstance(node, LarkRule):
            todo.extend(child for child in node.children if isinstance(child, LarkElement))


def _syntax_message(exc: Exception) -> str:
    line, column = getattr(exc, "line", None), getattr(exc, "column", None)
    where = f"line {line}, column {column}" if isinstance(line, int) and line > 0 else ""
    token = getattr(exc, "token", None)
    found = ""
    if getattr(token, "type", None) == "$END":
        found = "unexpected end of file"
    elif token is not None and str(token).strip() and "\n" not in str(token):
        found = f"unexpected {str(token).strip()[:40]!r}"
    if not where:
        first = str(exc).strip().splitlines()[:1]
        return f"cannot parse: {first[0][:200]}" if first else "cannot parse"
    return f"syntax error at {where}" + (f": {found}" if found else "")


def label(value: str) -> str:
    """A block label (`"vpc"`, or a bare `vpc`) as its name."""
    return text(value)


def text(value: object) -> str:
    """A string attribute as the text it means: quotes and escapes removed, a heredoc's body;
    any other expression as HCL (`var.x`), a number or bool as HCL spells it."""
    if isinstance(value, str):
        if len(value) >= 2 and value.startswith('"') and value.endswith('"'):
            inner = value[1:-1]
            heredoc = _HEREDOC.match(inner)
            if heredoc:
                return _heredoc_body(heredoc.group(3), trim=bool(heredoc.group(1)))
            return _unescape(inner)
        return expression(value)
    return render(value)


def expression(value: str) -> str:
    """An expression as written: `${...}` unwrapped (`number` and the like come bare)."""
    if value.startswith("${") and value.endswith("}") and _balanced(value[2:-1]):
        return value[2:-1]
    return value


def render(value: object) -> str:
    """A value as HCL: strings keep their quotes, objects and tuples their brackets."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return expression(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(render(v) for v in value) + "]"
    if isinstance(value, Mapping):
        items = [f"{k} = {render(v)}" for k, v in value.items() if k not in _MARKERS]
        return "{" + ", ".join(items) + "}" if items else "{}"
    return str(value)


def flag(value: object, default: bool) -> bool:
    """A boolean attribute: `true`/`false` literally; an expression leaves the default."""
    return value if isinstance(value, bool) else default


def blocks(body: Mapping[str, Any], kind: str) -> list[Mapping[str, Any]]:
    """The bodies of the `kind` blocks (or the one object) under `body`."""
    found = body.get(kind)
    items = found if isinstance(found, list) else [found] if found is not None else []
    return [item for item in items if isinstance(item, Mapping)]


def labelled(body: Mapping[str, Any], kind: str) -> list[tuple[str, Mapping[str, Any]]]:
    """`kind "LABEL" { ... }` blocks as (label, body)."""
    found = []
    for item in blocks(body, kind):
        for key, inner in item.items():
            if key not in _MARKERS and isinstance(inner, Mapping):
                found.append((label(key), inner))
    return found


def attributes(body: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in body.items() if key not in _MARKERS}


def _heredoc_body(body: str, trim: bool) -> str:
    lines = body.split("\n")
    if trim:
        indents = [len(line) - len(line.lstrip(" \t")) for line in lines if line.strip()]
        cut = min(indents, default=0)
        lines = [line[cut:] for line in lines]
    return "\n".join(lines).rstrip("\n")


def _unescape(inner: str) -> str:
    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] in "uU" and len(code) > 1:
            point = int(code[1:], 16)
            if point > 0x10FFFF or 0xD800 <= point <= 0xDFFF:  # no character: left as written
                return match.group(0)
            return chr(point)
        return _SIMPLE.get(code, match.group(0))

    # `$${` and `%%{` are HCL's escapes of a literal `${` and `%{`.
    return _ESCAPE.sub(one, inner).replace("$${", "${").replace("%%{", "%{")


def _balanced(inner: str) -> bool:
    """Whether `${` ... `}` wraps the whole value, not `${a}-${b}` (two interpolations)."""
    depth = 0
    quoted = False
    escaped = False
    for char in inner:
        if quoted:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
            continue
        if char == '"':
            quoted = True
        elif char in "{([":
            depth += 1
        elif char in "})]":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0
