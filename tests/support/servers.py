"""Real servers on 127.0.0.1 for tests: gitreg under Hypercorn, git daemon, git http-backend."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import os
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO

import certifi
import httpx
from hypercorn.asyncio import serve

from gitreg.catalog.model import Catalog
from gitreg.catalog.settings import Listen, TlsFiles
from gitreg.freshness.fresh_reads import WAIT
from gitreg.oci.referrers import Attached
from gitreg.pacing import UNPACED, Budget
from gitreg.process.server import hypercorn_config
from gitreg.process.tlscert import TlsMaterial
from gitreg.web.app import create_app
from tests.support.state import serving_state


def start_gitreg(*args: str, output: IO[str] | None = None) -> subprocess.Popen[str]:
    """`python -m gitreg ARGS` as a user runs it; its output goes to `output`, or to a pipe."""
    return subprocess.Popen(
        [sys.executable, "-m", "gitreg", *args],
        stdout=output or subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def start_serve(
    config: Path,
    port: int,
    tls: TlsMaterial | None = None,
    output: IO[str] | None = None,
    extra: tuple[str, ...] = (),
) -> subprocess.Popen[str]:
    """`gitreg serve` of `config` on 127.0.0.1:`port`, over TLS with `tls`, with `extra` flags."""
    args = ["serve", "--config", str(config), "--listen", f"127.0.0.1:{port}", *extra]
    if tls is not None:
        args += ["--certfile", str(tls.certfile), "--keyfile", str(tls.keyfile)]
    return start_gitreg(*args, output=output)


def run_gitreg(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m gitreg ARGS` to its end, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "gitreg", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until(
    condition: Callable[[], object],
    timeout: float = 30.0,
    what: str = "the condition",
    step: float = 0.05,
) -> None:
    """Check `condition` until it holds, a bounded number of times: a deadline, not a measurement."""
    for _ in range(max(1, round(timeout / step))):
        if condition():
            return
        time.sleep(step)
    raise AssertionError(f"{what} did not happen within about {timeout:g} s")


@functools.cache
def public_cas() -> ssl.SSLContext:
    """What httpx verifies with by default (certifi's CAs), made once: a request without a
    client of its own makes it anew, 50 ms of CPU, which a poll every 0.05 s took from the
    server it waited for."""
    return ssl.create_default_context(cafile=certifi.where())


def answers(url: str, verify: ssl.SSLContext | bool = True) -> bool:
    """True when `url` answers 200."""
    try:
        context = public_cas() if verify is True else verify
        return httpx.get(url, verify=context, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _listens(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), 0.5):
            return True
    except OSError:
        return False


def wait_for_port(port: int, timeout: float = 15.0) -> None:
    wait_until(lambda: _listens(port), timeout, f"a listener on 127.0.0.1:{port}")


BACKGROUND_WAIT = 60.0  # seconds a stopped server's syncs may take: a fetch from a test's server


class RegistryServer:
    """gitreg's app under Hypercorn in a thread of its own, on a free port."""

    def __init__(
        self,
        catalog: Catalog,
        tls: TlsFiles | None = None,
        refresh: bool = False,
        fresh_wait: float = WAIT,
        fetch_first: bool | None = True,
        access_log: bool = False,
        on_swap: Callable[[], None] | None = None,
        port: int | None = None,
        budget: Budget = UNPACED,
        attached: Attached | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        """`refresh`: run the background work (polling, watching); with `fetch_first` False, the
        server starts from what its clones hold, fetching nothing; with None, it starts as
        `gitreg serve` does: answering at once, the clones read, then fetched, meanwhile;
        `access_log`: a line per request (`gitreg.access`); `on_swap`: the ModuleSync's; `port`:
        the one to listen on (by default, a free one); `budget`: the CPU budget `serve` would
        hand its background work; `attached`: what module versions carry as OCI referrers;
        `clock`: the module sync's, by which versions held back by publish_when come due."""
        self.state = serving_state(
            catalog, fetch_first, on_swap, fresh_wait, budget, attached, clock
        )
        self.sync = self.state.background.sync  # the ModuleSync itself: handlers see `modules`
        start = fetch_first is None
        self.app = create_app(self.state, background=refresh, start=start, access_log=access_log)
        self.port = port or free_port()
        self.scheme = "https" if tls else "http"
        self.config = hypercorn_config(Listen("127.0.0.1", self.port), tls)
        self._loop = asyncio.new_event_loop()
        self._stop = asyncio.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(
                serve(self.app, self.config, shutdown_trigger=self._stop.wait)  # type: ignore[arg-type]
            )
        finally:
            self._loop.close()

    def reload(self, timeout: float = 30.0) -> bool:
        """Re-read registry.yaml on the server's own loop, as SIGHUP does."""
        done = asyncio.run_coroutine_threadsafe(self.state.live.reload(), self._loop)
        return done.result(timeout)

    def __enter__(self) -> RegistryServer:
        self._thread.start()
        wait_for_port(self.port)
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=10)
        # `serve` ends its git processes as it stops; a test cannot end only this server's, so
        # it waits for the syncs and polls under way: none outlives its test, to log after it.
        ended = self.state.background.wait_ended(BACKGROUND_WAIT)
        if not ended and exc[0] is None:
            raise AssertionError(
                f"a sync or poll of the server still runs {BACKGROUND_WAIT:g} s after it stopped:"
                " end the Git server it waits on (a hung one) before the registry"
            )


@contextlib.contextmanager
def git_daemon(root: Path, log: Path | None = None) -> Iterator[str]:
    """`git daemon` exporting every repository under `root`; yields the git:// base URL.
    With `log`, it writes there a line per request (`daemon_requests` counts them)."""
    port = free_port()
    verbose = ["--verbose", "--log-destination=stderr"] if log else []
    with open(log or os.devnull, "w") as written:  # the daemon keeps its own descriptor
        process = subprocess.Popen(
            [
                "git",
                "daemon",
                "--reuseaddr",
                "--export-all",
                *verbose,
                f"--base-path={root}",
                "--listen=127.0.0.1",
                f"--port={port}",
                str(root),
            ],
            stdout=subprocess.DEVNULL,
            stderr=written,
        )
    try:
        wait_for_port(port)
        yield f"git://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def daemon_requests(log: Path) -> int:
    """How many times clients asked a `git_daemon` for a repository's refs and objects: one per
    ls-remote, one per fetch."""
    return log.read_text().count("Request upload-pack")


def _http_backend() -> str:
    path = Path(
        subprocess.run(
            ["git", "--exec-path"], capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    return str(path / "git-http-backend")


@dataclass
class GitHttpTap:
    """What a `git_http_server` was asked (`requests`: "METHOD /path?query", in order), and the
    faults it is told to inject: the next requests answer the statuses in `faults`, in order."""

    requests: list[str] = field(default_factory=list)
    faults: list[int] = field(default_factory=list)


@contextlib.contextmanager
def git_http_server(
    root: Path,
    token: str | None = None,
    tls: TlsMaterial | None = None,
    username: str | None = None,
    tap: GitHttpTap | None = None,
    login_page: bool = False,
    other_tokens: Sequence[str] = (),
) -> Iterator[str]:
    """Smart HTTP through `git http-backend` (as CGI); with `token`, Basic auth is required (as
    `username`:token when a username is given, any user otherwise; `other_tokens` are taken
    too); with `tls`, over HTTPS.
    With `login_page`, a request without the right credentials gets a 200 HTML page, as from
    a forge's single sign-on, instead of a 401. Yields the base URL."""
    backend = _http_backend()

    class Handler(BaseHTTPRequestHandler):
        # As a forge's server: one connection for a fetch's requests, kept alive (every answer
        # has its length), and its headers and body, two writes, sent without a 40 ms stall.
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            self._cgi()

        def do_POST(self) -> None:
            self._cgi()

        def _cgi(self) -> None:
            # Read whatever the answer, so that the connection's next request starts clean.
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            if tap is not None:
                tap.requests.append(f"{self.command} {self.path}")
                if tap.faults:
                    self._answer(tap.faults.pop(0), "text/plain", b"injected fault\n")
                    return
            auth = self.headers.get("Authorization", "")
            if token is not None:
                user, _, user_token = (
                    base64.b64decode(auth.removeprefix("Basic ")).decode().partition(":")
                    if auth.startswith("Basic ")
                    else ("", "", "")
                )
                wrong = user_token != token and user_token not in other_tokens
                if wrong or (username is not None and user != username):
                    if login_page:
                        self._answer(200, "text/html", b"<html><form>Sign in</form></html>")
                        return
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="git"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
            path, _, query = self.path.partition("?")
            env = {
                **os.environ,
                "GIT_PROJECT_ROOT": str(root),
                "GIT_HTTP_EXPORT_ALL": "1",
                "REQUEST_METHOD": self.command,
                "PATH_INFO": path,
                "QUERY_STRING": query,
                "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                "CONTENT_LENGTH": str(len(body)),
                "REMOTE_ADDR": "127.0.0.1",
                "GIT_CONFIG_NOSYSTEM": "1",
            }
            if self.headers.get("Content-Encoding"):
                env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
            if self.headers.get("Git-Protocol"):
                env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
            done = subprocess.run([backend], input=body, env=env, capture_output=True, check=False)
            head, _, payload = done.stdout.partition(b"\r\n\r\n")
            status = 200
            headers = []
            for line in head.decode("latin-1").split("\r\n"):
                name, _, value = line.partition(":")
                if name.lower() == "status":
                    status = int(value.split()[0])
                elif name:
                    headers.append((name, value.strip()))
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _answer(self, status: int, content_type: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(tls.certfile, tls.keyfile)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@dataclass(frozen=True)
class SshServer:
    url: str  # ssh://root@127.0.0.1:PORT
    client_key: Path
    known_hosts: Path


@contextlib.contextmanager
def ssh_server(workdir: Path) -> Iterator[SshServer]:
    """A real OpenSSH server on 127.0.0.1, accepting one generated key for the current user."""
    workdir.mkdir(parents=True, exist_ok=True)
    host_key, client_key = workdir / "host_key", workdir / "client_key"
    for key in (host_key, client_key):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    (workdir / "authorized_keys").write_text(client_key.with_suffix(".pub").read_text())
    port = free_port()
    (workdir / "sshd_config").write_text(
        f"ListenAddress 127.0.0.1\nPort {port}\nHostKey {host_key}\n"
        f"AuthorizedKeysFile {workdir / 'authorized_keys'}\nPidFile {workdir / 'sshd.pid'}\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
        "StrictModes no\nPermitRootLogin prohibit-password\n"
    )
    Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege separation directory
    with (workdir / "sshd.log").open("w") as log:
        process = subprocess.Popen(
            [_sshd(), "-D", "-e", "-f", str(workdir / "sshd_config")],
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    try:
        wait_for_port(port)
        host_public = host_key.with_suffix(".pub").read_text().split()
        known_hosts = workdir / "known_hosts"
        known_hosts.write_text(f"[127.0.0.1]:{port} {host_public[0]} {host_public[1]}\n")
        user = (
            os.environ.get("USER")
            or subprocess.run(["id", "-un"], capture_output=True, text=True).stdout.strip()
        )
        yield SshServer(f"ssh://{user}@127.0.0.1:{port}", client_key, known_hosts)
    finally:
        process.terminate()
        process.wait(timeout=10)


def _sshd() -> str:
    return shutil.which("sshd") or "/usr/sbin/sshd"


def sshd_available() -> bool:
    return Path(_sshd()).is_file() and os.geteuid() == 0


def bare_clone(source: Path, target: Path) -> Path:
    """A bare copy of a work tree's repository, as a Git server would hold it."""
    if target.exists():
        shutil.rmtree(target)
    subprocess.run(["git", "clone", "-q", "--bare", str(source), str(target)], check=True)
    return target
