"""Log lines cannot be forged by what a repository or a client controls."""

from __future__ import annotations

import io
import logging
import signal
from pathlib import Path

import httpx
import pytest

from gitreg.logs import TEXT_FORMAT, SafeFormatter, escape_controls
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
