"""`gitreg serve` and `gitreg demo` starting, or refusing to, as a real process; `gitreg cert`."""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import socket
import ssl
import stat
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from gitreg.commands.cli import main
from gitreg.process.tlscert import TlsMaterial, ensure_local_tls
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import free_port, start_gitreg
from tests.support.servers import run_gitreg as gitreg
from tests.support.tls_clients import trusting


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    repo = GitRepo(tmp_path / "repo")
    repo.release("v1.0.0", module_files("1.0.0"))
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\nmodules:\n  - {namespace: infra, name: vpc, system: aws, repo: repo}\n"
    )
    return tmp_path / "registry.yaml"


@pytest.fixture
def held_port() -> Iterator[int]:
    """A port another program listens on."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield int(holder.getsockname()[1])


def assert_refused(done: subprocess.CompletedProcess[str], status: int, line: str) -> None:
    """One line on stderr, nothing claiming to serve, the exit status."""
    assert done.returncode == status, done.stderr
    assert done.stderr == f"gitreg: {line}\n"
    assert "serving on" not in done.stdout + done.stderr


def test_a_taken_port_is_one_line(catalog: Path, held_port: int) -> None:
    done = gitreg("serve", "--config", str(catalog), "--listen", f"127.0.0.1:{held_port}")
    assert_refused(done, 1, f"cannot listen on 127.0.0.1:{held_port}: address already in use")


def test_the_demo_on_a_taken_port_prints_no_instructions(catalog: Path, held_port: int) -> None:
    done = gitreg("demo", "--config", str(catalog), "--listen", f"127.0.0.1:{held_port}")
    assert_refused(done, 1, f"cannot listen on 127.0.0.1:{held_port}: address already in use")
    assert done.stdout == ""


@pytest.fixture(scope="module")
def other_tls(tmp_path_factory: pytest.TempPathFactory) -> TlsMaterial:
    """A second CA and certificate: its key matches nothing of the `tls` fixture's."""
    return ensure_local_tls(tmp_path_factory.mktemp("other-tls"))


def test_a_key_that_does_not_match_the_certificate_given_as_flags(
    catalog: Path, tls: TlsMaterial, other_tls: TlsMaterial
) -> None:
    done = gitreg(
        "serve",
        "--config",
        str(catalog),
        "--listen",
        f"127.0.0.1:{free_port()}",
        "--certfile",
        str(tls.certfile),
        "--keyfile",
        str(other_tls.keyfile),
    )
    assert_refused(
        done,
        2,
        f"--keyfile {other_tls.keyfile}: does not match --certfile {tls.certfile}"
        " (it is not the key the certificate was made for)",
    )


def _with_tls(catalog: Path, certfile: Path, keyfile: Path) -> Path:
    catalog.write_text(
        catalog.read_text() + f"listen: 127.0.0.1:{free_port()}\n"
        f"tls: {{certfile: {certfile}, keyfile: {keyfile}}}\n"
    )
    return catalog


def test_a_key_that_does_not_match_the_certificate_in_the_catalog(
    catalog: Path, tls: TlsMaterial, other_tls: TlsMaterial
) -> None:
    _with_tls(catalog, tls.certfile, other_tls.keyfile)
    done = gitreg("serve", "--config", str(catalog))
    assert_refused(
        done,
        2,
        f"tls.keyfile {other_tls.keyfile}: does not match tls.certfile {tls.certfile}"
        " (it is not the key the certificate was made for)",
    )


def test_files_that_hold_no_certificate_or_no_key(
    catalog: Path, tls: TlsMaterial, tmp_path: Path
) -> None:
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
    _with_tls(catalog, garbage, tls.keyfile)
    done = gitreg("serve", "--config", str(catalog))
    assert_refused(done, 2, f"tls.certfile {garbage}: holds no PEM certificate")
    done = gitreg(
        "serve",
        "--config",
        str(catalog),
        "--certfile",
        str(tls.certfile),
        "--keyfile",
        str(garbage),
    )
    assert_refused(done, 2, f"--keyfile {garbage}: holds no PEM private key")
    # A certificate where the key should be: a common slip.
    done = gitreg(
        "serve",
        "--config",
        str(catalog),
        "--certfile",
        str(tls.certfile),
        "--keyfile",
        str(tls.certfile),
    )
    assert_refused(done, 2, f"--keyfile {tls.certfile}: holds no PEM private key")


def test_a_key_with_a_passphrase(catalog: Path, tls: TlsMaterial, tmp_path: Path) -> None:
    key = serialization.load_pem_private_key(tls.keyfile.read_bytes(), None)
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    protected = tmp_path / "protected.key"
    protected.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"secret"),
        )
    )
    _with_tls(catalog, tls.certfile, protected)
    done = gitreg("serve", "--config", str(catalog))
    assert_refused(
        done,
        2,
        f"tls.keyfile {protected}: is protected by a passphrase, which gitreg cannot ask for",
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_an_unreadable_key(catalog: Path, tls: TlsMaterial, tmp_path: Path) -> None:
    unreadable = tmp_path / "unreadable.key"
    unreadable.write_bytes(tls.keyfile.read_bytes())
    unreadable.chmod(0)
    _with_tls(catalog, tls.certfile, unreadable)
    done = gitreg("serve", "--config", str(catalog))
    assert_refused(done, 2, f"tls.keyfile {unreadable}: permission denied")


class Lines:
    """A process's output, line by line, read in a thread so that a wait can be bounded."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.seen: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        assert process.stdout is not None
        stdout = process.stdout

        def read() -> None:
            with stdout:  # closed at the end of output, before the end is announced
                for line in stdout:
                    self._queue.put(line)
            self._queue.put(None)

        threading.Thread(target=read, daemon=True).start()

    def until(self, text: str, timeout: float = 60) -> str:
        while True:
            line = self._queue.get(timeout=timeout)
            if line is None:
                raise AssertionError(f"{text!r} never came:\n{''.join(self.seen)}")
            self.seen.append(line)
            if text in line:
                return line

    def rest(self) -> str:
        while (line := self._queue.get(timeout=30)) is not None:
            self.seen.append(line)
        return "".join(self.seen)


def _serve_tls(catalog: Path, tls: TlsMaterial) -> tuple[int, subprocess.Popen[str], Lines]:
    port = free_port()
    process = start_gitreg(
        "serve",
        "--config",
        str(catalog),
        "--listen",
        f"127.0.0.1:{port}",
        "--certfile",
        str(tls.certfile),
        "--keyfile",
        str(tls.keyfile),
    )
    return port, process, Lines(process)


def test_serving_on_is_said_once_it_can_be_connected_to(catalog: Path, tls: TlsMaterial) -> None:
    port, process, lines = _serve_tls(catalog, tls)
    try:
        said = lines.until("serving on")
        assert said.rstrip().endswith(f"serving on https://127.0.0.1:{port}")
        # No retry: the port takes connections from the moment the line is written.
        socket.create_connection(("127.0.0.1", port), timeout=10).close()
        context = trusting(tls.ca_cert)
        response = httpx.get(f"https://127.0.0.1:{port}/healthz", verify=context, timeout=30)
        assert response.status_code == 200
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
    output = lines.rest()
    assert process.returncode == 0, output
    assert output.count("serving on") == 1
    assert "Traceback" not in output


# gitreg cert


def _handshake(port: int, ca: Path, name: str) -> None:
    context = trusting(ca)
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        context.wrap_socket(raw, server_hostname=name),
    ):
        pass


def test_cert_makes_a_certificate_that_serve_uses_and_clients_verify(
    catalog: Path, tmp_path: Path
) -> None:
    out = tmp_path / "tls"
    done = gitreg(
        "cert", "--host", "registry.example.test", "--host", "127.0.0.1", "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    assert f"export SSL_CERT_FILE={out / 'ca.pem'}\n" in done.stdout
    assert f"tls: {{certfile: {out / 'server.pem'}, keyfile: {out / 'server.key'}}}" in done.stdout
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in out.iterdir()}
    assert modes == {"ca.pem": 0o644, "ca.key": 0o600, "server.pem": 0o644, "server.key": 0o600}

    port = free_port()
    process = start_gitreg(
        "serve",
        "--config",
        str(catalog),
        "--listen",
        f"127.0.0.1:{port}",
        "--certfile",
        str(out / "server.pem"),
        "--keyfile",
        str(out / "server.key"),
    )
    lines = Lines(process)
    try:
        lines.until("serving on")
        for name in ("registry.example.test", "127.0.0.1"):
            _handshake(port, out / "ca.pem", name)
        with pytest.raises(ssl.SSLCertVerificationError, match="mismatch"):
            _handshake(port, out / "ca.pem", "other.example.test")
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
    output = lines.rest()
    assert process.returncode == 0, output


def test_cert_again_keeps_the_ca_and_replaces_the_server_certificate(tmp_path: Path) -> None:
    out = tmp_path / "tls"
    first = gitreg("cert", "--host", "one.example.test", "--out", "tls", cwd=tmp_path)
    assert first.returncode == 0 and "a new local CA" in first.stdout
    ca, ca_key, server = ((out / n).read_bytes() for n in ("ca.pem", "ca.key", "server.pem"))
    again = gitreg("cert", "--host", "two.example.test", "--out", str(out))
    assert again.returncode == 0, again.stderr
    assert "signed by the local CA" in again.stdout
    assert (out / "ca.pem").read_bytes() == ca and (out / "ca.key").read_bytes() == ca_key
    assert (out / "server.pem").read_bytes() != server
    certificate = x509.load_pem_x509_certificate((out / "server.pem").read_bytes())
    certificate.verify_directly_issued_by(x509.load_pem_x509_certificate(ca))
    names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["two.example.test"]


@pytest.mark.parametrize(
    "host", ["registry.example.test:8443", "https://registry.example.test", "bad_name", "a..b"]
)
def test_cert_refuses_what_is_no_host(tmp_path: Path, host: str) -> None:
    done = gitreg("cert", "--host", host, "--out", str(tmp_path / "tls"))
    assert done.returncode == 2
    assert done.stderr == (
        f"gitreg: --host: {host!r} must be a host name or an IP address, without scheme, port or path "
        "(like registry.example.com or 127.0.0.1)\n"
    )
    assert not (tmp_path / "tls").exists()


def test_cert_will_not_replace_a_ca_whose_key_is_elsewhere(tmp_path: Path) -> None:
    out = tmp_path / "tls"
    out.mkdir()
    (out / "ca.pem").write_text("a CA someone already trusts\n")
    done = gitreg("cert", "--host", "registry.example.test", "--out", str(out))
    assert done.returncode == 1
    assert done.stderr == (
        f"gitreg: {out / 'ca.pem'} has no key beside it (ca.key), so it cannot sign: "
        "give another folder, or move ca.pem away to make a new CA\n"
    )
    assert sorted(p.name for p in out.iterdir()) == ["ca.pem"]
    assert (out / "ca.pem").read_text() == "a CA someone already trusts\n"


def _misbehave(port: int, ca: Path, how: str) -> None:
    """One TLS client doing what a broken or hostile one does."""
    context = trusting(ca)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        if how == "plain HTTP on the TLS port":
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            sock.recv(4096)
            return
        incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        tls = context.wrap_bio(incoming, outgoing, server_hostname="127.0.0.1")
        for _ in range(20):
            try:
                tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                sock.sendall(outgoing.read())
                incoming.write(sock.recv(65536))
        sock.sendall(outgoing.read())
        tls.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.sendall(outgoing.read())
        sock.recv(65536)
        if how == "data after close-notify":
            with contextlib.suppress(ssl.SSLWantReadError):
                tls.unwrap()
            sock.sendall(outgoing.read())  # close_notify,
            sock.sendall(b"\x17\x03\x03\x00\x20" + os.urandom(32))  # then an application record
        elif how == "a record that does not decrypt":
            sock.sendall(b"\x17\x03\x03\x00\x20" + os.urandom(32))
        with contextlib.suppress(OSError):
            sock.recv(4096)  # until the server closes


def test_misbehaving_tls_clients_cost_no_traceback(catalog: Path, tls: TlsMaterial) -> None:
    port, process, lines = _serve_tls(catalog, tls)
    context = trusting(tls.ca_cert)
    try:
        lines.until("serving on")
        for how in ("data after close-notify", "a record that does not decrypt") * 3 + (
            "plain HTTP on the TLS port",
        ):
            _misbehave(port, tls.ca_cert, how)
        response = httpx.get(f"https://127.0.0.1:{port}/healthz", verify=context, timeout=30)
        assert response.status_code == 200
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
    output = lines.rest()
    assert process.returncode == 0, output
    assert "Traceback" not in output
    assert " ERROR " not in output


def _refused_alike(capsys: pytest.CaptureFixture[str], catalog: Path, *args: str) -> str:
    """What `serve` and `check` both say, with the same catalog and flags: one line, status 2.
    Both run in this process: what is compared is the parser's and the endpoint's answer (a
    real process refusing is proved above, by test_files_that_hold_no_certificate_or_no_key)."""
    flags = ["--config", str(catalog), *args]
    served = main(["serve", *flags]), *capsys.readouterr()
    checked = main(["check", *flags]), *capsys.readouterr()
    assert (served[0], checked[0]) == (2, 2), served[2] + checked[2]
    assert checked[2] == served[2], (checked[2], served[2])
    assert served[2].startswith("gitreg: ") and served[2].count("\n") == 1
    assert "serving on" not in served[2] and checked[1] == ""  # no repository reached
    return served[2].removeprefix("gitreg: ").rstrip("\n")


def test_check_refuses_a_key_that_does_not_match_as_serve_does(
    catalog: Path, tls: TlsMaterial, other_tls: TlsMaterial, capsys: pytest.CaptureFixture[str]
) -> None:
    pair = ("--certfile", str(tls.certfile), "--keyfile", str(other_tls.keyfile))
    assert _refused_alike(capsys, catalog, *pair) == (
        f"--keyfile {other_tls.keyfile}: does not match --certfile {tls.certfile}"
        " (it is not the key the certificate was made for)"
    )
    _with_tls(catalog, tls.certfile, other_tls.keyfile)
    assert _refused_alike(capsys, catalog) == (
        f"tls.keyfile {other_tls.keyfile}: does not match tls.certfile {tls.certfile}"
        " (it is not the key the certificate was made for)"
    )


def test_check_refuses_files_that_cannot_be_read_as_serve_does(
    catalog: Path, tls: TlsMaterial, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    absent, folder = tmp_path / "absent.pem", tmp_path / "a-folder"
    folder.mkdir()
    assert _refused_alike(
        capsys, catalog, "--certfile", str(absent), "--keyfile", str(tls.keyfile)
    ) == (f"--certfile {absent}: no such file")
    assert _refused_alike(
        capsys, catalog, "--certfile", str(tls.certfile), "--keyfile", str(folder)
    ) == (f"--keyfile {folder}: is a directory")
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
    _with_tls(catalog, garbage, tls.keyfile)
    assert _refused_alike(capsys, catalog) == f"tls.certfile {garbage}: holds no PEM certificate"


@pytest.mark.parametrize(
    ("listen", "why"),
    [
        ("127.0.0.1:99999", "the port 99999 is out of range: a port is from 1 to 65535"),
        ("127.0.0.1:0", "the port 0 is out of range: a port is from 1 to 65535"),
        (
            "127.0.0.1:https",
            "the port 'https' is not a number: give HOST:PORT, like 127.0.0.1:8443",
        ),
        ("8443", "'8443' must be HOST:PORT, like 127.0.0.1:8443"),
    ],
)
def test_check_refuses_a_listen_address_as_serve_does(
    catalog: Path, listen: str, why: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _refused_alike(capsys, catalog, "--listen", listen) == f"--listen {listen}: {why}"
    catalog.write_text(catalog.read_text() + f"listen: '{listen}'\n")
    assert _refused_alike(capsys, catalog) == f"{catalog}: listen (line 4): {why}"
