"""`git` run as a plain child process at little cost of ours, and ended at its timeout.

Each runs in a session of its own, its output and errors read by one `poll` loop, its exit
awaited on a pidfd, the session ended at its timeout: `communicate()` and `wait(timeout)` cost
more than git's own start (a selector, a polling wait loop). The spawn is `subprocess.Popen`'s,
which lets other threads run while the child starts: `os.posix_spawnp` costs less CPU but holds
the GIL until git has started, and on a busy machine a background thread's git (at a lower
priority) waits for a CPU with every request behind it (bench/RESULTS.md: bench.polling). See
docs/how-it-works/internals.md."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time
from typing import NamedTuple

from gitreg.git.location import redact
from gitreg.pacing import charge

_CHUNK = 1 << 16  # a pipe's buffer: an ls-remote of 500 tags (~35 kB) in one or two reads
_EVENTS = select.POLLIN | select.POLLHUP | select.POLLERR


class GitFailed(Exception):
    """`git` could not be run, timed out, or exited non-zero; the message is safe to show."""


class Finished(NamedTuple):
    """A git that ran to its end: its exit code, output and errors."""

    returncode: int
    out: bytes
    err: bytes


def run_git(args: list[str], env: dict[str, str], timeout: float) -> bytes:
    """`git ARGS`'s output; GitFailed, saying what git said, when it exits non-zero."""
    finished = run_git_unchecked(args, env, timeout)
    if finished.returncode != 0:
        raise GitFailed(git_said(finished.err.decode("utf-8", "replace"), finished.returncode))
    return finished.out


def run_git_unchecked(args: list[str], env: dict[str, str], timeout: float) -> Finished:
    """`git ARGS` run to its end, whatever its exit code (GitFailed only when it cannot run or
    times out). In a session of its own, so that a timeout ends the helpers it started too
    (git-remote-https, ssh, gpg), not only git. The thread's niceness goes with it (a
    background thread's git runs at its priority), and its CPU is charged to the budget."""
    # Built each call: os.environ may change (a token_env rotated, a test's monkeypatch).
    environment = {**os.environ, **env, "LANGUAGE": "C", "LC_ALL": "C"}
    try:
        process = subprocess.Popen(
            ["git", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=environment,
            start_new_session=True,
        )
    except OSError as exc:
        raise GitFailed(f"cannot run git: {exc.strerror or exc}") from exc
    with process:  # the pipes closed, git waited for
        assert process.stdout is not None and process.stderr is not None
        deadline = time.monotonic() + timeout
        try:
            out, err = _read_both(process.stdout.fileno(), process.stderr.fileno(), deadline)
            _exited_by(process.pid, deadline)
        except TimeoutError:
            _kill(process)
            raise GitFailed(f"git {_command(args)} did not complete in {timeout:g} s") from None
        except BaseException:
            _kill(process)
            raise
        returncode, spent = _reaped(process)  # it has exited: no wait
    charge(spent)  # a background thread's git is background work too
    return Finished(returncode, out, err)


def _command(args: list[str]) -> str:
    """git's command in `args` (`fetch` in `-C DIR --git-dir=DIR fetch ...`)."""
    words = iter(args)
    for word in words:
        if word in ("-C", "-c"):
            next(words, None)
        elif not word.startswith("-"):
            return word
    return "command"


def _read_both(out_fd: int, err_fd: int, deadline: float) -> tuple[bytes, bytes]:
    """Everything written to both pipes until git (and every helper holding them) closed them;
    TimeoutError at `deadline`."""
    chunks: dict[int, list[bytes]] = {out_fd: [], err_fd: []}
    poller = select.poll()
    poller.register(out_fd, _EVENTS)
    poller.register(err_fd, _EVENTS)
    open_fds = 2
    while open_fds:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        for fd, _ in poller.poll(left * 1000):
            data = os.read(fd, _CHUNK)
            if data:
                chunks[fd].append(data)
            else:
                poller.unregister(fd)
                open_fds -= 1
    return b"".join(chunks[out_fd]), b"".join(chunks[err_fd])


def _exited_by(pid: int, deadline: float) -> None:
    """Wait for `pid` to exit, up to `deadline` (TimeoutError)."""
    try:
        handle = os.pidfd_open(pid)
    except OSError:
        return  # a kernel before 5.3: waited for without a bound, as git exits anyway
    try:
        waiting = select.poll()
        waiting.register(handle, select.POLLIN)
        if not waiting.poll(max(deadline - time.monotonic(), 0) * 1000):
            raise TimeoutError
    finally:
        os.close(handle)


def _reaped(process: subprocess.Popen[bytes]) -> tuple[int, float]:
    """git, exited, reaped: its exit code, and the CPU seconds it spent (with the helpers it
    waited for: git-remote-https, index-pack)."""
    try:
        _, status, usage = os.wait4(process.pid, 0)
    except ChildProcessError:  # reaped already
        return process.wait(), 0.0
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, usage.ru_utime + usage.ru_stime


def _kill(process: subprocess.Popen[bytes]) -> None:
    """End git's session (git and its helpers), and reap git."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        with contextlib.suppress(OSError):
            process.kill()
    process.wait()


# What git prints when a server answers 401 and it may not prompt: with no credentials, and with
# a token the server refuses (sent as a header, git cannot tell).
_CREDENTIALS_WANTED = ("could not read Username for", "Authentication failed for")
CREDENTIALS_WANTED = (
    "the Git server asks for credentials (HTTP 401): none are configured for this URL, or it"
    " refuses them; see registry.yaml's credentials: entry for it"
)


def git_said(stderr: str, returncode: object) -> str:
    """A failed git command's last lines, for a person: its 401 said in words, never a secret."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if any(wanted in line for line in lines for wanted in _CREDENTIALS_WANTED):
        return CREDENTIALS_WANTED
    return redact(" / ".join(lines[-3:]) or f"git exited with {returncode}")
