"""A cause that repeats is logged once per interval, with a count of what it covered.

So 700 requests answered 503 for one repository still being read make one line and a count, not
700 lines. The first time a cause is met it is logged at once; its repeats within the interval
are counted, and said when the cause is met again after it, or when any line is logged after it
(`(and 734 more requests in the last 60 s)`)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

INTERVAL = 60.0  # seconds a cause stays quiet after it was logged
MOST_CAUSES = 1000  # causes counted at once; beyond, a new cause is logged every time


@dataclass
class _Window:
    started: float
    level: int
    message: str
    args: tuple[object, ...]
    repeats: int = 0


class RepeatedCauses:
    """Log lines of `logger` said at most once per `interval` seconds per cause; `what` names
    what the repeats are (`requests`)."""

    def __init__(
        self,
        logger: logging.Logger,
        what: str = "requests",
        interval: float = INTERVAL,
        clock: Callable[[], float] = time.monotonic,
        most: int = MOST_CAUSES,
    ) -> None:
        self._logger = logger
        self._what = what
        self._interval = interval
        self._clock = clock
        self._most = most
        self._windows: dict[str, _Window] = {}
        self._due = float("inf")  # when the first window ends: no need to look before
        self._lock = threading.Lock()

    def log(self, level: int, cause: str, message: str, *args: object) -> bool:
        """Log `message % args` unless `cause` was logged less than `interval` seconds ago (then
        count it); True when it was logged."""
        now = self._clock()
        lines: list[tuple[int, str, tuple[object, ...]]] = []
        with self._lock:
            lines += self._ended(now, keep=cause)
            window = self._windows.get(cause)
            logged = window is None or now - window.started >= self._interval
            if window is not None and not logged:
                window.repeats += 1
            elif window is not None:
                lines.append((level, message + self._covered(window.repeats), args))
                self._windows[cause] = _Window(now, level, message, args)
                self._due = min(self._due, now + self._interval)
            else:
                lines.append((level, message, args))
                if len(self._windows) < self._most:
                    self._windows[cause] = _Window(now, level, message, args)
                    self._due = min(self._due, now + self._interval)
        for line_level, text, line_args in lines:
            self._logger.log(line_level, text, *line_args)
        return logged

    def _ended(self, now: float, keep: str) -> list[tuple[int, str, tuple[object, ...]]]:
        """The counts of the windows that ended (but `keep`'s, said with its next line), which
        are forgotten: the next time their cause is met, it is logged at once."""
        lines: list[tuple[int, str, tuple[object, ...]]] = []
        if now < self._due:
            return lines
        for cause, window in list(self._windows.items()):
            if cause == keep or now - window.started < self._interval:
                continue
            del self._windows[cause]
            if window.repeats:
                said = window.message + self._covered(window.repeats)
                lines.append((window.level, said, window.args))
        starts = [w.started for w in self._windows.values()]
        self._due = min(starts, default=float("inf")) + self._interval
        return lines

    def _covered(self, repeats: int) -> str:
        if not repeats:
            return ""
        return f" (and {repeats} more {self._what} in the last {self._interval:g} s)"
