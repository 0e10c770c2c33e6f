"""Log lines cannot be forged by what a repository or a client controls, as text or JSON."""

from __future__ import annotations

import io
import json
import logging
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from gitreg.logs import (
    REQUEST_ID,
    TEXT_FORMAT,
    JsonFormatter,
    RequestIdFilter,
    SafeFormatter,
    configure,
    escape_controls,
    hide_secrets,
)
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import answers, free_port, start_gitreg, wait_until


@pytest.mark.parametrize(
    ("text", "logged"),
    [
        ("plain tag v1.2.0", "plain tag v1.2.0"),
        ("evil\n2026-01-01 INFO gitreg: forged", "evil\\n2026-01-01 INFO gitreg: forged"),
        ("cr\rreturn", "cr\\rreturn"),
        ("bell\x07 and escape\x1b[31m", "bell\\x07 and escape\\x1b[31m"),
        ("line\u2028separator", "line\\u2028separator"),
        ("tab\tkept visible", "tab\\tkept visible"),
        ("ünïcödé stays", "ünïcödé stays"),
    ],
)
def test_control_characters_are_escaped(text: str, logged: str) -> None:
    assert escape_controls(text) == logged


TOKEN = "gitreg_" + "Ab3-_x" * 7 + "Q"  # the shape `gitreg token new` and sign-in issue


@pytest.mark.parametrize(
    ("text", "logged"),
    [
        # hpack's debug lines, as it decodes a request's headers and encodes an answer's
        (
            f"Decoded (b'authorization', b'Bearer {TOKEN}'), consumed 52",
            "Decoded (b'authorization', b'Bearer (hidden)'), consumed 52",
        ),
        ("(b'authorization', b'bearer eyJ0eXAi.x')", "(b'authorization', b'bearer (hidden)')"),
        ("Authorization: Basic dXNlcjpzZWNyZXQ=", "Authorization: Basic (hidden)"),
        (
            "(b'set-cookie', b'gitreg_session=v1.abc_DEF-123; Max-Age=86400; Secure')",
            "(b'set-cookie', b'gitreg_session=(hidden); Max-Age=86400; Secure')",
        ),
        ("cookie: gitreg_login=sealed.value.here", "cookie: gitreg_login=(hidden)"),
        (f"issued {TOKEN} to alice", "issued (hidden) to alice"),
        ("ci token eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJjaSJ9.c2ln", "ci token (hidden)"),
        (
            "GET /oauth/callback?code=provider-code-1&state=s",
            "GET /oauth/callback?code=(hidden)&state=s",
        ),
        (
            "grant_type=authorization_code&client_secret=hunter2hunter2",
            "grant_type=authorization_code&client_secret=(hidden)",
        ),
        (
            '{"access_token": "gitreg_short_but_long", "expires_in": 3}',
            '{"access_token": "(hidden)", "expires_in": 3}',
        ),
        ("/x.tar.gz?expires=1&signature=c2VjcmV0c2Vj", "/x.tar.gz?expires=1&signature=(hidden)"),
        # words, not secrets: left as they are
        ("the Authorization header must be 'Bearer TOKEN' (or Basic)", None),
        ("uses basic auth; exit code=1", None),
        ("catalog reloaded: 3 modules, tokens unchanged", None),
    ],
)
def test_whatever_has_the_shape_of_a_credential_is_hidden(text: str, logged: str | None) -> None:
    assert hide_secrets(text) == (text if logged is None else logged)


@pytest.fixture
def configured() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    own = logging.getLogger("gitreg").level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        logging.getLogger("gitreg").setLevel(own)


def test_debug_is_gitregs_own_and_a_library_never_writes_a_header(
    configured: None, capsys: pytest.CaptureFixture[str]
) -> None:
    configure("debug")
    logging.getLogger("gitreg.test_logs").debug("our own debug line")
    logging.getLogger("hpack.hpack").debug("Decoding b'\\x82\\x87 huffman of a token'")
    chatty = logging.getLogger("test_logs.chatty_library")  # sets its own level, as some do
    chatty.setLevel(logging.DEBUG)
    try:
        chatty.debug("frame with header bytes")
        chatty.info("a library's info line")
    finally:
        chatty.setLevel(logging.NOTSET)
    written = capsys.readouterr().err
    assert "our own debug line" in written
    assert "a library's info line" in written
    assert "Decoding" not in written and "frame with header bytes" not in written
    assert not logging.getLogger("hpack.hpack").isEnabledFor(logging.DEBUG)  # not even made


def test_a_signed_urls_signature_never_reaches_a_log_line() -> None:
    record = logging.LogRecord(
        "gitreg.access",
        logging.INFO,
        __file__,
        1,
        '127.0.0.1 "GET /v1/archives/a/b/c/x.tar.gz?expires=1&by=ci&signature=c2VjcmV0 HTTP/1.1" 200',
        None,
        None,
    )
    line = SafeFormatter(TEXT_FORMAT).format(record)
    assert "c2VjcmV0" not in line
    assert "?expires=1&by=ci&signature=(hidden) HTTP/1.1" in line


def test_an_argument_cannot_start_a_new_line_but_a_traceback_keeps_its_own() -> None:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(SafeFormatter(TEXT_FORMAT))
    log = logging.getLogger("gitreg.test_logs")
    log.addHandler(handler)
    log.propagate = False
    try:
        log.warning("archive: leaving out symlink %r -> %s", "a.tf", "x\nINFO forged line")
        try:
            raise ValueError("boom")
        except ValueError:
            log.exception("failed on %s", "tag\nv9")
    finally:
        log.removeHandler(handler)
    lines = out.getvalue().splitlines()
    assert lines[0].endswith("leaving out symlink 'a.tf' -> x\\nINFO forged line")
    assert lines[1].endswith("failed on tag\\nv9")
    assert lines[2] == "Traceback (most recent call last):"
    assert lines[-1] == "ValueError: boom"


def test_a_symlink_target_with_a_newline_cannot_forge_a_line_of_serve(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write(module_files("1.0.0"))
    forged = "../../x\n2026-01-01 00:00:00,000 ERROR gitreg: forged"
    (repo.path / "evil").symlink_to(forged)
    repo.commit("evil link")
    repo.tag("v1.0.0")
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\nmodules:\n  - {namespace: a, name: b, system: c, repo: repo}\n"
    )
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    process = start_gitreg(
        "serve", "--config", str(tmp_path / "registry.yaml"), "--listen", f"127.0.0.1:{port}"
    )
    try:
        wait_until(lambda: answers(f"{base}/readyz"), 60, "gitreg")
        location = httpx.get(f"{base}/v1/modules/a/b/c/1.0.0/download").headers["x-terraform-get"]
        assert httpx.get(f"{base}{location}", timeout=60).status_code == 200
    finally:
        process.send_signal(signal.SIGINT)
        output = process.communicate(timeout=30)[0]
    assert "leaving out symlink" in output
    assert not [line for line in output.splitlines() if "forged" in line and "evil" not in line]


@pytest.fixture
def logged(request: pytest.FixtureRequest) -> Iterator[tuple[logging.Logger, io.StringIO]]:
    """A logger writing through the formatter the test is parametrized with (text or json)."""
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(JsonFormatter() if request.param == "json" else SafeFormatter(TEXT_FORMAT))
    log = logging.getLogger(f"gitreg.test_logs.{request.param}")
    log.addHandler(handler)
    log.propagate = False
    log.setLevel(logging.DEBUG)
    try:
        yield log, out
    finally:
        log.removeHandler(handler)


def json_lines(out: io.StringIO) -> list[dict[str, Any]]:
    lines = out.getvalue().splitlines()  # splitlines breaks on \u2028 too: none may be left
    return [json.loads(line) for line in lines]


@pytest.mark.parametrize("logged", ["json"], indirect=True)
def test_a_json_line_has_time_level_logger_message_and_extra_fields(
    logged: tuple[logging.Logger, io.StringIO],
) -> None:
    log, out = logged
    log.info("archive %s built", "x.tar.gz", extra={"bytes": 1234, "route": "/v1/{x}"})
    (entry,) = json_lines(out)
    assert entry["time"].endswith("Z") and entry["time"][10] == "T"  # ISO 8601, UTC
    assert entry["level"] == "INFO" and entry["logger"] == log.name
    assert entry["message"] == "archive x.tar.gz built"
    assert entry["bytes"] == 1234 and entry["route"] == "/v1/{x}"
    assert "request_id" not in entry  # caused by no request


@pytest.mark.parametrize("logged", ["json"], indirect=True)
def test_a_json_line_cannot_be_split_or_forged(logged: tuple[logging.Logger, io.StringIO]) -> None:
    log, out = logged
    forged = 'x"}\n{"level": "ERROR", "message": "forged"}\u2028\u2029\x85\r\x1b'
    log.warning("tag %s", forged, extra={"path": forged})
    (entry,) = json_lines(out)
    assert entry["message"] == f"tag {forged}" and entry["path"] == forged


@pytest.mark.parametrize("logged", ["json"], indirect=True)
def test_an_exception_is_one_field_of_one_line(logged: tuple[logging.Logger, io.StringIO]) -> None:
    log, out = logged
    try:
        raise ValueError("boom at /x?signature=c2VjcmV0")
    except ValueError:
        log.exception("failed")
    (entry,) = json_lines(out)
    assert entry["message"] == "failed"
    assert entry["exception"].startswith("Traceback (most recent call last):")
    assert entry["exception"].endswith("ValueError: boom at /x?signature=(hidden)")


@pytest.mark.parametrize("logged", ["text", "json"], indirect=True)
def test_a_signature_is_hidden_in_every_format_and_field(
    logged: tuple[logging.Logger, io.StringIO],
) -> None:
    log, out = logged
    url = "/v1/archives/a/b/c/x.tar.gz?expires=1&by=ci&signature=c2VjcmV0"
    log.info("GET %s", url, extra={"path": url})
    text = out.getvalue()
    assert "c2VjcmV0" not in text
    assert "signature=(hidden)" in text


@pytest.mark.parametrize("logged", ["text", "json"], indirect=True)
def test_a_line_written_while_a_request_is_served_carries_its_id(
    logged: tuple[logging.Logger, io.StringIO],
) -> None:
    log, out = logged
    token = REQUEST_ID.set("req-42")
    try:
        log.info("inside")
    finally:
        REQUEST_ID.reset(token)
    log.info("outside")
    inside, outside = out.getvalue().splitlines()
    if log.name.endswith("json"):
        assert json.loads(inside)["request_id"] == "req-42"
        assert "request_id" not in json.loads(outside)
    else:
        assert inside.endswith("inside request_id=req-42")
        assert outside.endswith("outside")
