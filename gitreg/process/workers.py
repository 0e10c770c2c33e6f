"""Several worker processes on one socket (`gitreg serve --workers N`): the parent binds, forks
the workers, passes signals on, and restarts a worker that dies, a few times, or stops them all.

Forked, not Hypercorn's own `workers`: Hypercorn's would import the app from a module path in
each worker and bind the sockets itself, while gitreg's app is built from a catalog already
checked (and a socket already bound) by this process. A fork inherits both, with nothing
pickled and no second parse. The parent forks before it starts a thread, and keeps nothing
but the socket and its children: each worker reads the repositories and serves on its own.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger("gitreg.workers")  # its name before process/: operators' filters

# A worker that dies is restarted after a pause; this many deaths within the window mean it
# will not serve (a cache it cannot write, memory it cannot get), and the parent exits 1 so
# that systemd or Kubernetes sees a failure, rather than restarting it forever.
MAX_DEATHS = 5
DEATH_WINDOW = 60.0
RESTART_PAUSE = 0.5  # seconds, times the deaths in the window

_SIGNALS = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGCHLD}

_STOPPED = (0, -signal.SIGTERM, -signal.SIGINT)  # a worker stopped while it was still starting

Work = Callable[[int, bool], int]  # (worker index, restarted) → exit status


@dataclass
class _Pool:
    work: Work
    mask: set[int | signal.Signals]  # the signal mask the workers run with (the caller's)
    listening: socket.socket  # kept for a worker started again; closed when stopping
    stop_within: float
    children: dict[int, int] = field(default_factory=dict)  # pid → worker index
    due: dict[int, float] = field(default_factory=dict)  # worker index → restart time
    deaths: deque[float] = field(default_factory=deque)

    def spawn(self, index: int, restarted: bool) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the worker: never returns into the parent's code
            status = 1
            try:
                # Until the worker serves (and sets its own): SIGTERM or SIGINT end it at once,
                # and SIGHUP, a reload of what it is about to read anyway, does not.
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                signal.signal(signal.SIGHUP, signal.SIG_IGN)
                signal.pthread_sigmask(signal.SIG_SETMASK, self.mask)
                status = self.work(index, restarted)
            except BaseException:
                log.exception("worker %d failed", index)
            finally:
                with contextlib.suppress(Exception):
                    logging.shutdown()
                    sys.stdout.flush()
                    sys.stderr.flush()
                os._exit(status)
        self.children[pid] = index
        log.info("worker %d started (pid %d)", index, pid)

    def reap(self) -> list[tuple[int, int]]:
        """(index, status) of every worker that ended since the last call."""
        ended = []
        while self.children:
            try:
                pid, wait_status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            index = self.children.pop(pid, None)
            if index is not None:
                ended.append((index, os.waitstatus_to_exitcode(wait_status)))
        return ended

    def signal_all(self, signo: int) -> None:
        for pid in self.children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signo)


def run_workers(count: int, work: Work, listening: socket.socket, stop_within: float) -> int:
    """Run `work` in `count` forked workers, which serve `listening`, until SIGTERM or SIGINT
    (0, once they stopped; those still running after `stop_within` seconds are killed), or until
    workers die too often (1). SIGHUP is passed on to every worker."""
    if threading.active_count() > 1:
        # A fork copies one thread: locks another one held would stay held in the workers.
        raise RuntimeError("workers must be forked before any thread starts")
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    pool = _Pool(work, mask, listening, stop_within)
    try:
        for index in range(count):
            pool.spawn(index, restarted=False)
        return _supervise(pool)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def _supervise(pool: _Pool) -> int:
    while True:
        now = time.monotonic()
        for index, when in list(pool.due.items()):
            if when <= now:
                del pool.due[index]
                pool.spawn(index, restarted=True)
        wait = min([*pool.due.values(), now + 1.0]) - now
        received = signal.sigtimedwait(_SIGNALS, max(wait, 0.01))
        signo = received.si_signo if received else None
        if signo in (signal.SIGTERM, signal.SIGINT):
            log.info("stopping %d workers", len(pool.children))
            return _stop(pool, 0)
        if signo == signal.SIGHUP:
            pool.signal_all(signal.SIGHUP)
        for index, status in pool.reap():  # on SIGCHLD, and once a second in case one merged
            now = time.monotonic()
            pool.deaths.append(now)
            while pool.deaths and pool.deaths[0] < now - DEATH_WINDOW:
                pool.deaths.popleft()
            if len(pool.deaths) >= MAX_DEATHS:
                log.error(
                    "worker %d ended (status %d): %d workers ended within %g s; stopping",
                    index,
                    status,
                    len(pool.deaths),
                    DEATH_WINDOW,
                )
                return _stop(pool, 1)
            pause = RESTART_PAUSE * len(pool.deaths)
            log.error("worker %d ended (status %d); restarting it in %g s", index, status, pause)
            pool.due[index] = now + pause


def _stop(pool: _Pool, status: int) -> int:
    """SIGTERM to every worker (and again on a second signal: they then stop at once), SIGKILL
    to those still running after stop_within; `status`, or 1 when a worker had to be killed or
    failed."""
    pool.due.clear()
    # The parent's copy first: once the workers have closed theirs, connections are refused.
    pool.listening.close()
    pool.signal_all(signal.SIGTERM)
    deadline = time.monotonic() + pool.stop_within
    while pool.children and time.monotonic() < deadline:
        for index, code in pool.reap():
            if code not in _STOPPED:
                log.warning("worker %d stopped with status %d", index, code)
                status = 1
        if pool.children:
            received = signal.sigtimedwait(_SIGNALS, 0.2)
            if received and received.si_signo in (signal.SIGTERM, signal.SIGINT):
                pool.signal_all(signal.SIGTERM)
    if pool.children:
        log.error(
            "%d workers still run after %g s: killing them", len(pool.children), pool.stop_within
        )
        pool.signal_all(signal.SIGKILL)
        while pool.children:
            pid, _ = os.wait()
            pool.children.pop(pid, None)
        status = 1
    return status
