"""What writing one access-log line costs with secrets hidden, against the same line with only a
signature looked for (the check before every line was searched for credentials).

An access-log record as `--access-log` writes one for a `versions` request, formatted by the
text and the JSON formatters, in alternating rounds of 20,000 lines; the baseline is the same
formatter with the credential search taken out. Medians of the rounds, and their ratio. A line
with a bearer token in it (which only a library's line could hold) is timed too.

    python -m bench.log_lines [--rounds 9]
"""

from __future__ import annotations

import argparse
import logging
import re
import statistics
import time

from gitreg import logs

_LINE = (
    "127.0.0.1 GET /v1/modules/{namespace}/{name}/{system}/versions"
    " /v1/modules/platform/net/aws/versions 200 0.41 ms"
)
_CREDENTIAL = "Decoded (b'authorization', b'Bearer gitreg_" + "x" * 43 + "'), consumed 52"
_SIGNATURE = re.compile(r"(?<=[?&]signature=)[^&\s\"']+")
_LINES = 20_000


def _signature_only(text: str) -> str:
    return _SIGNATURE.sub("(hidden)", text) if "signature=" in text else text


class _TextBefore(logs.SafeFormatter):
    def format(self, record: logging.LogRecord) -> str:
        return logging.Formatter.format(self, record)

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = _signature_only(record.message)
        return super().formatMessage(record)


def _record(message: str) -> logging.LogRecord:
    record = logging.LogRecord("gitreg.access", logging.INFO, __file__, 1, message, None, None)
    record.request_id = "3f2a9c1e5b7d4a60"
    return record


def _per_line(formatter: logging.Formatter, message: str) -> float:
    record = _record(message)
    start = time.perf_counter()
    for _ in range(_LINES):
        formatter.format(record)
    return (time.perf_counter() - start) / _LINES * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=9)
    rounds = parser.parse_args().rounds
    cases = {
        "text, before": (_TextBefore(logs.TEXT_FORMAT), _LINE),
        "text, secrets hidden": (logs.SafeFormatter(logs.TEXT_FORMAT), _LINE),
        "json, secrets hidden": (logs.JsonFormatter(), _LINE),
        "text, a bearer line, hidden": (logs.SafeFormatter(logs.TEXT_FORMAT), _CREDENTIAL),
    }
    timed: dict[str, list[float]] = {name: [] for name in cases}
    for number in range(rounds):
        order = list(cases) if number % 2 == 0 else list(reversed(cases))
        for name in order:
            formatter, message = cases[name]
            timed[name].append(_per_line(formatter, message))
    base = statistics.median(timed["text, before"])
    print(f"{'formatter':32} {'us/line':>8} {'ratio':>6}  (medians of {rounds} rounds)")
    for name, values in timed.items():
        median = statistics.median(values)
        print(f"{name:32} {median:8.2f} {median / base:6.2f}")


if __name__ == "__main__":
    main()
