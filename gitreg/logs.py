"""Log lines that cannot be forged: what a repository or a client controls (a tag, a file name,
a symlink target, a path) is logged with its control characters escaped, so that it can never
start a line of its own; a traceback, which is ours, keeps its lines. A signed download URL's
signature (a permission, for a while) is never written out: the access log would hold it."""

from __future__ import annotations

import logging
import re
import sys

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u0085\u2028\u2029]")
_SIGNATURE = re.compile(r"(?<=[?&]signature=)[^&\s\"']+")


def escape_controls(text: str) -> str:
    """`text` with every control character written as an escape (`\\n`, `\\x1b`, `\\u2028`)."""
    return _CONTROL.sub(_escaped, text)


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char)
    if named:
        return named
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


class SafeFormatter(logging.Formatter):
    """The message, arguments substituted, escaped; the exception text after it as it is."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = _SIGNATURE.sub("(hidden)", escape_controls(record.message))
        return super().formatMessage(record)


def configure(level: str) -> None:
    """The process's logging: one line per event on stderr, at `level` and above."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(SafeFormatter(TEXT_FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level.upper()))
