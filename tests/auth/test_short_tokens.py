"""A hand-set client token that is short enough to guess: `gitreg check` warns of it, and so
does `serve` (as the gate is built); one given as a digest cannot be judged."""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path

import pytest

from gitreg.auth.gate import Gate
from gitreg.auth.review import auth_warnings
from gitreg.auth.tokens import new_token, strength
from tests.conftest import WriteCatalog
from tests.support.servers import run_gitreg as gitreg


@pytest.mark.parametrize(
    ("token", "strong"),
    [
        ("x", False),
        ("hunter2", False),
        ("correct-horse-battery", False),  # 21 characters of two kinds
        ("abcdefghijklmnopqrstuvwxy", False),  # 25 lowercase letters: 117 bits at most
        # Long, but one short string repeated: judged by what is repeated.
        ("a" * 40, False),
        ("password" * 4, False),
        ("0123456789abcdef" * 2, False),
        ("Tr0ub4dor&3-Tr0ub4dor&3-Tr0ub4dor&3-Tr0u", False),  # cut where it ends
        # Fixed, not drawn at random: the judge counts the kinds of characters a token uses, and
        # one in 40 random 22-character tokens has no digit (126 bits by that count).
        ("q7Zk-2mP_x9LwR4tY8vN3a", True),  # 22 URL-safe characters of every kind: 132 bits
        ("3f9a0c27e1b84d5f6a7c8e9d0b1a2c3f", True),  # 32 hex digits: 165 bits by kinds
        pytest.param(new_token(), True, id="new_token"),  # an id of its own: the same on every run
        ("glpat-" + "q7Zk-2mP_x9LwR4tY8vN", True),
    ],
)
def test_strength(token: str, strong: bool) -> None:
    assert (strength(token) >= 128) == strong, strength(token)


def _catalog(tmp_path: Path, weak: str) -> str:
    (tmp_path / "weak-token").write_text(weak + "\n")
    (tmp_path / "strong-token").write_text(new_token() + "\n")
    return f"""
        mirror: {{}}
        auth:
          tokens:
            - {{name: digest, token_sha256: "{"0" * 64}", read: ["*"]}}
            - {{name: weak, token_file: weak-token, read: ["*"]}}
            - {{name: strong, token_file: strong-token, read: ["*"]}}
            - {{name: from-env, token_env: GITREG_TEST_WEAK, read: ["*"]}}
        """


def test_check_warns_of_a_short_hand_set_token(
    write_catalog: WriteCatalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITREG_TEST_WEAK", "letmein")
    catalog = write_catalog(_catalog(tmp_path, "s3cret"))
    warnings = auth_warnings(catalog)
    assert [w.split(":")[1].strip() for w in warnings] == ["auth.tokens[1]", "auth.tokens[3]"]
    assert "under 128" in warnings[0] and "s3cret" not in "".join(warnings)
    done = gitreg("check", "--config", str(tmp_path / "registry.yaml"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "token 'weak' holds at most" in done.stdout and "2 warnings" in done.stdout


def test_serve_logs_it_too(
    write_catalog: WriteCatalog,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("GITREG_TEST_WEAK", new_token())
    catalog = write_catalog(_catalog(tmp_path, "s3cret"))
    assert catalog.auth is not None
    with caplog.at_level(logging.WARNING, "gitreg.auth.gate"):
        Gate.build(catalog.auth, tmp_path / "cache", Counter())
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and said[0].startswith("auth.tokens[1]: token 'weak'")
    assert "s3cret" not in caplog.text
