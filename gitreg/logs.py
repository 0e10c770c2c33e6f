"""Log lines that cannot be forged or leak.

What a repository or a client controls (a tag, a file name, a symlink target, a path) is logged
with its control characters escaped, so that it can never start a line of its own; a traceback,
which is ours, keeps its lines in text, and becomes one field in JSON. No line, from gitreg or a
library, at any level, writes a secret: `debug` is gitreg's own (libraries' debug lines print
what crosses the wire, hpack every header it decodes and encodes), and whatever has the shape of
a credential (an Authorization value, a session cookie, a token of gitreg's, a JWT, a signed
URL's signature, an OAuth code or secret) is written as `(hidden)`. Every line a request causes
carries its request id."""

from __future__ import annotations

import datetime
import json
import logging
import re
import sys
from contextvars import ContextVar
from typing import Any

LOG_FORMATS = ("text", "json")

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# A command that serves nothing (check, list, docs, ...) logs in the form of its errors.
COMMAND_FORMAT = "gitreg: %(level)s: %(message)s"
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u0085\u2028\u2029]")
# A secret's shape, and what of it stays: an HTTP credential after its scheme, a cookie of
# gitreg's after its name, a query or form field that holds a secret after its name; a JWT and a
# token of gitreg's whole. Values shorter than 8 characters are words ("Bearer TOKEN" in a hint).
_SECRET = re.compile(
    r"(?P<keep>"
    r"\b(?i:bearer|basic)\s+"
    r"|\bgitreg_(?:session|login)="
    r"|[?&](?:signature|code)="
    r"|\b(?:client_secret|code_verifier|access_token|id_token|refresh_token)="
    r"|\"(?:access_token|id_token|refresh_token|client_secret|code_verifier)\"\s*:\s*\""
    r")[^\s&;,'\"()\[\]\\]{8,}"
    r"|\beyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]*"
    r"|\bgitreg_[A-Za-z0-9_-]{43}"
)
# Words one of which a line holds whenever _SECRET could match it (lower case): most lines hold
# none, and looking for them costs a tenth of the search (bench/RESULTS.md: bench.log_lines).
_HINTS = ("bearer", "basic", "gitreg_", "signature=", "code=", "secret", "verifier", "token", "eyj")
# The loggers whose DEBUG lines `--log-level debug` shows: gitreg's own.
OWN_LOGGERS = "gitreg"
# JSON leaves these unescaped, yet Python's str.splitlines (and some log shippers) break on them.
_LINE_BREAKS = re.compile(r"[\u0085\u2028\u2029]")

# The id of the request being served, set by the web layer's outermost middleware. Each request
# runs in a task of its own, so the id goes with the task (and with threads given a copy of its
# context: asyncio.to_thread, and the pools that build archives and run syncs).
REQUEST_ID: ContextVar[str | None] = ContextVar("gitreg_request_id", default=None)

# What every LogRecord has: anything else on a record is an extra field of the JSON line.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "request_id",
    "taskName",  # Python 3.12+
}


def escape_controls(text: str) -> str:
    """`text` with every control character written as an escape (`\\n`, `\\x1b`, `\\u2028`)."""
    return _CONTROL.sub(_escaped, text)


def hide_secrets(text: str) -> str:
    """`text` with whatever has the shape of a credential written as `(hidden)`."""
    folded = text.lower()
    if not any(hint in folded for hint in _HINTS):
        return text
    return _SECRET.sub(_hidden, text)


def _hidden(match: re.Match[str]) -> str:
    return (match.group("keep") or "") + "(hidden)"


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char)
    if named:
        return named
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


class RequestIdFilter(logging.Filter):
    """Adds `request_id` (None outside a request) to every record a handler writes, unless the
    record was given one."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "request_id", None) is None:
            record.request_id = REQUEST_ID.get()
        return True


class OwnDebugFilter(logging.Filter):
    """Passes a DEBUG line only from gitreg's own loggers: a library that set its own level
    lower still writes no header it decoded."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.INFO:
            return True
        return record.name == OWN_LOGGERS or record.name.startswith(OWN_LOGGERS + ".")


class SafeFormatter(logging.Formatter):
    """The message, arguments substituted, escaped, then ` request_id=ID` when a request caused
    it; the exception text after it as it is; no secret anywhere in the line."""

    def format(self, record: logging.LogRecord) -> str:
        return hide_secrets(super().format(record))

    def formatMessage(self, record: logging.LogRecord) -> str:
        message = escape_controls(record.message)
        request_id = getattr(record, "request_id", None)
        record.message = f"{message} request_id={request_id}" if request_id else message
        return super().formatMessage(record)


class CommandFormatter(SafeFormatter):
    """`gitreg: warning: <message>`: a command's log lines, in the form of its error lines."""

    def __init__(self) -> None:
        super().__init__(COMMAND_FORMAT)

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.level = record.levelname.lower()
        return super().formatMessage(record)


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time (ISO 8601, UTC), level, logger, message, request_id when a
    request caused it, the record's extra fields, and the exception (traceback) as a field."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": _iso(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": hide_secrets(record.getMessage()),
        }
        request_id = getattr(record, "request_id", None)
        if request_id:
            entry["request_id"] = request_id
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                entry[key] = hide_secrets(value) if isinstance(value, str) else value
        if record.exc_info:
            entry["exception"] = hide_secrets(self.formatException(record.exc_info))
        elif record.exc_text:
            entry["exception"] = hide_secrets(record.exc_text)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        line = json.dumps(entry, ensure_ascii=False, default=str)
        return _LINE_BREAKS.sub(lambda m: f"\\u{ord(m.group()):04x}", line)


def _iso(created: float) -> str:
    when = datetime.datetime.fromtimestamp(created, datetime.UTC)
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def configure(level: str, log_format: str = "text", command: bool = False) -> None:
    """The process's logging: one line per event on stderr, at `level` and above (DEBUG for
    gitreg's own loggers only), as text or as JSON (`log_format`, one of LOG_FORMATS); a
    `command`'s (not a server's) as its errors."""
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(OwnDebugFilter())
    handler.addFilter(RequestIdFilter())
    formatter: logging.Formatter = SafeFormatter(TEXT_FORMAT)
    if log_format == "json":
        formatter = JsonFormatter()
    elif command:
        formatter = CommandFormatter()
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    chosen = getattr(logging, level.upper())
    root.setLevel(max(chosen, logging.INFO))  # libraries' DEBUG records are not even made
    # gitreg's loggers follow the root but at DEBUG (NOTSET: what pytest's caplog sets wins).
    logging.getLogger(OWN_LOGGERS).setLevel(chosen if chosen < logging.INFO else logging.NOTSET)
