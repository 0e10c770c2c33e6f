"""The Git processes a stopping server ends, and how their fetches know it.

A fetch killed because the server stops is no Git outage, and says so (`fetch of X stopped: the
server is shutting down`)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from pathlib import Path

_STOPPING = threading.Event()


def stopping() -> bool:
    """Whether the server ends its Git processes: a Git command failing now was ended by it."""
    return _STOPPING.is_set()


def stop_git_processes() -> int:
    """After serving stopped: end the `git` processes still running, and theirs (a fetch from a
    Git server that never answers would otherwise hold the exit for its whole timeout; over
    HTTP, `git fetch` runs `git remote-http`, which holds the pipes GitPython reads until it
    ends too). Only for the server's own process, whose children are all Git's. Returns how
    many processes were asked to stop."""
    _STOPPING.set()
    stopped = 0
    for pid in _descendants(Path("/proc/self")):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
            stopped += 1
    return stopped


def _descendants(process: Path) -> list[int]:
    """The process ids of `process`'s children, theirs, and so on (a bounded depth: Git's
    helpers are two or three deep)."""
    found: list[int] = []
    level = [process]
    for _ in range(8):
        children = [pid for proc in level for pid in _children(proc)]
        if not children:
            break
        found += children
        level = [Path(f"/proc/{pid}") for pid in children]
    return found


def _children(process: Path) -> list[int]:
    try:
        tasks = list((process / "task").iterdir())
    except OSError:
        return []  # ended, or not Linux
    pids = []
    for task in tasks:
        try:
            text = (task / "children").read_text()
        except OSError:
            continue  # a thread that ended, or a kernel without the children file
        pids += [int(pid) for pid in text.split() if pid.isdigit()]
    return pids
