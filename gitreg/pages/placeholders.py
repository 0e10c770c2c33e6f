"""A placeholder for a required input, of the type its constraint names.

A usage snippet pasted as it is then passes `terraform validate`: `"..."` for a string, `0`,
`false`, `[]`, `{}`, a tuple's and an object's required attributes spelled out. A constraint
this reader does not know gets `null`, which Terraform accepts for any nullable input."""

from __future__ import annotations

import re

UNKNOWN = "null"

_TOKEN = re.compile(r'\s*(?:("(?:[^"\\]|\\.)*")|([A-Za-z_][A-Za-z0-9_-]*)|(-?[0-9.]+)|(.))', re.S)
_SIMPLE = {"string": '"..."', "number": "0", "bool": "false", "any": '"..."'}
_OPEN, _CLOSE = "([{", ")]}"


class _Unknown(ValueError):
    """A constraint outside the type language this reader knows."""


def placeholder(constraint: str) -> str:
    """The placeholder for a value of `constraint`, as HCL (a type as `gitreg docs` shows it;
    empty for no constraint)."""
    if not constraint.strip():
        return _SIMPLE["any"]
    try:
        reader = _Reader(constraint)
        value = reader.type()
        reader.end()
    except _Unknown:
        return UNKNOWN
    return value


class _Reader:
    def __init__(self, text: str) -> None:
        self.tokens = [next(t for t in m.groups() if t is not None) for m in _TOKEN.finditer(text)]
        self.at = 0

    def peek(self) -> str:
        return self.tokens[self.at] if self.at < len(self.tokens) else ""

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if not token or (expected is not None and token != expected):
            raise _Unknown(f"expected {expected or 'more'}, found {token or 'the end'}")
        self.at += 1
        return token

    def end(self) -> None:
        if self.peek():
            raise _Unknown(f"unexpected {self.peek()}")

    def type(self) -> str:
        name = self.take()
        if name in _SIMPLE:
            return _SIMPLE[name]
        self.take("(")
        if name in ("list", "set", "map"):
            self.type()
            value = "{}" if name == "map" else "[]"
        elif name == "tuple":
            self.take("[")
            items = []
            while self.peek() != "]":
                items.append(self.type())
                if self.peek() == ",":
                    self.take(",")
            self.take("]")
            value = "[" + ", ".join(items) + "]"
        elif name == "object":
            value = self.object()
        else:
            raise _Unknown(f"no type {name}")
        self.take(")")
        return value

    def object(self) -> str:
        self.take("{")
        required = []
        while self.peek() != "}":
            key = self.take()
            self.take("=")
            if self.peek() == "optional":
                self.take()
                self.take("(")
                self.type()
                if self.peek() == ",":
                    self.take(",")
                    self.skip_expression()
                self.take(")")
            else:
                required.append(f"{key} = {self.type()}")
            if self.peek() == ",":
                self.take(",")
        self.take("}")
        return "{ " + ", ".join(required) + " }" if required else "{}"

    def skip_expression(self) -> None:
        """An optional attribute's default: any expression, up to its closing bracket."""
        depth = 0
        while self.peek() and not (depth == 0 and self.peek() in ",)"):
            token = self.take()
            depth += (token in _OPEN) - (token in _CLOSE)
