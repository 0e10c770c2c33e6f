"""`git` run as a plain child process at little cost of ours: spawned (posix_spawn), in a session
of its own, its output and its errors read by one loop, and the session ended at its timeout.

A poll of an unchanged repository is one `git ls-remote`: what this process spends around it,
beyond git's own CPU, is what `bench.polling` compares with `xargs git ls-remote`.
`subprocess.Popen` spent about 1 ms a call here (its environment encoded in Python, a pipe for
its own errors, a selector, a wait loop); this spends a third of that."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import time

from gitreg.git.location import redact

_CHUNK = 1 << 16  # a pipe's buffer: a listing of 500 tags (~35 kB) in one or two reads
_EVENTS = select.POLLIN | select.POLLHUP | select.POLLERR


class GitFailed(Exception):
    """`git` could not be run, timed out, or exited non-zero; the message is safe to show."""


def run_git(args: list[str], env: dict[str, str], timeout: float) -> bytes:
    """`git ARGS`'s output. In a session of its own, so that a timeout ends the helpers it
    started too (git-remote-https, ssh), not only git."""
    # Built each call: os.environ may change (a token_env rotated, a test's monkeypatch).
    environment = {**os.environ, **env, "LANGUAGE": "C", "LC_ALL": "C"}
    out_read, out_write = os.pipe()  # both ends close-on-exec: the child gets them by dup2
    err_read, err_write = os.pipe()
    try:
        # The thread's niceness goes with it (a background thread's git runs at its priority),
        # as with fork. Only descriptors opened inheritable would stay open in git: Python
        # opens none so (PEP 446), and gitreg asks for none.
        pid = os.posix_spawnp(
            "git",
            ["git", *args],
            environment,
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, out_write, 1),
                (os.POSIX_SPAWN_DUP2, err_write, 2),
            ],
            setsid=True,
        )
    except OSError as exc:
        for fd in (out_read, out_write, err_read, err_write):
            os.close(fd)
        raise GitFailed(f"cannot run git: {exc.strerror or exc}") from exc
    os.close(out_write)
    os.close(err_write)
    try:
        out, err = _read_both(out_read, err_read, time.monotonic() + timeout)
        returncode = _exit_status(pid, time.monotonic() + timeout)
    except TimeoutError:
        _kill(pid)
        raise GitFailed(f"git {args[0]} did not complete in {timeout:g} s") from None
    except BaseException:
        _kill(pid)
        raise
    finally:
        os.close(out_read)
        os.close(err_read)
    if returncode != 0:
        raise GitFailed(git_said(err.decode("utf-8", "replace"), returncode))
    return out


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


def _exit_status(pid: int, deadline: float) -> int:
    """git's exit status, once it has closed its output: it is exiting then, as a rule, but is
    waited for no longer than `deadline` (TimeoutError)."""
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
        if not done:
            _exited_by(pid, deadline)
            done, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return 0  # reaped by someone else (a SIGCHLD handler): as subprocess takes it
    return os.waitstatus_to_exitcode(status)


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


def _kill(pid: int) -> None:
    """End git's session (git and its helpers), and reap git."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


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
