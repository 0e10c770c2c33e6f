"""The documentation site's code blocks, as a user copies them, and the claims that say which
test runs each.

A block a user runs or pastes (shell, HCL, YAML, JSON, ...) stands right after a marker line:
`<!-- test: test_name -->` names the test that runs it, `<!-- not run: why -->` says why no test
does. A test takes its blocks with `claimed(page, test)`, which fails unless it takes every block
the page gives it: a block cannot be claimed and then forgotten."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]
DOCS = TOP / "docs"

# The languages of what a user runs or pastes; other blocks (text, output) need no marker.
RUN_OR_PASTED = frozenset({"", "sh", "shell", "bash", "console", "hcl", "yaml", "json", "ini"})

_FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<language>[\w-]*)[ \t]*$")
_MARKER = re.compile(r"^[ \t]*<!--\s*(?P<kind>test|not run):\s*(?P<value>.*?)\s*-->[ \t]*$")


@dataclass(frozen=True)
class Snippet:
    page: str  # relative to docs/, e.g. "own-registry.md"
    line: int  # of the opening fence, from 1
    language: str
    text: str  # dedented, with its final newline
    test: str | None  # the test that runs it
    not_run: str | None  # why no test runs it

    @property
    def where(self) -> str:
        return f"docs/{self.page}:{self.line}"


@dataclass(frozen=True)
class Marker:
    page: str
    line: int
    followed_by_fence: bool


def pages() -> list[str]:
    return sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))


def read_page(page: str) -> tuple[list[Snippet], list[Marker]]:
    """A page's fenced blocks, each with the marker before it, and every marker it holds."""
    lines = (DOCS / page).read_text().splitlines()
    snippets: list[Snippet] = []
    markers: list[Marker] = []
    index = 0
    while index < len(lines):
        marker = _MARKER.match(lines[index])
        if marker:
            follows = index + 1 < len(lines) and _FENCE.match(lines[index + 1]) is not None
            markers.append(Marker(page, index + 1, follows))
        fence = _FENCE.match(lines[index])
        if not fence:
            index += 1
            continue
        indent = fence["indent"]
        end = index + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        body = "\n".join(line.removeprefix(indent) for line in lines[index + 1 : end])
        before = _MARKER.match(lines[index - 1]) if index > 0 else None
        snippets.append(
            Snippet(
                page=page,
                line=index + 1,
                language=fence["language"],
                text=textwrap.dedent(body) + "\n",
                test=before["value"] if before and before["kind"] == "test" else None,
                not_run=before["value"] if before and before["kind"] == "not run" else None,
            )
        )
        index = end + 1
    return snippets, markers


def block(page: str, language: str, containing: str) -> str:
    """The one block of `page` in `language` holding `containing`, whoever claims it: a step
    another page's test runs, which this test takes as done."""
    found = [s.text for s in read_page(page)[0] if s.language == language and containing in s.text]
    assert len(found) == 1, f"docs/{page} has {len(found)} {language} blocks with {containing!r}"
    return found[0]


class Claimed:
    """The blocks of one page that one test claims, taken one by one by what they hold."""

    def __init__(self, page: str, test: str) -> None:
        self.page = page
        self.test = test
        self.blocks = [s for s in read_page(page)[0] if s.test == test]
        assert self.blocks, f"docs/{page} has no block marked <!-- test: {test} -->"
        self.taken: set[int] = set()

    def take(self, language: str, containing: str) -> str:
        """The one claimed block in `language` holding `containing`, not taken before."""
        found = [
            s
            for s in self.blocks
            if s.language == language and containing in s.text and s.line not in self.taken
        ]
        assert len(found) == 1, (
            f"docs/{self.page} has {len(found)} {language} blocks for {self.test} "
            f"holding {containing!r}"
        )
        self.taken.add(found[0].line)
        return found[0].text

    def left(self) -> list[str]:
        return [s.where for s in self.blocks if s.line not in self.taken]


@contextmanager
def claimed(page: str, test: str) -> Iterator[Claimed]:
    """The blocks `test` claims on `page`; fails at the end unless the test took them all."""
    blocks = Claimed(page, test)
    yield blocks
    assert not blocks.left(), f"{test} claims blocks it does not run: {blocks.left()}"


def on_port(text: str, port: int) -> str:
    """The page's address, 127.0.0.1:8443, on the port a test serves."""
    return text.replace("127.0.0.1:8443", f"127.0.0.1:{port}")


def gitreg_on_path(folder: Path) -> Path:
    """A `gitreg` command in `folder` that runs this checkout's gitreg, as an installed one does."""
    folder.mkdir(parents=True, exist_ok=True)
    command = folder / "gitreg"
    command.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m gitreg "$@"\n')
    command.chmod(0o755)
    return command


def shell_env(bin_folder: Path, extra: Mapping[str, str] = {}) -> dict[str, str]:
    """The environment a page's shell block runs in: `gitreg` (from `bin_folder`) on PATH."""
    gitreg_on_path(bin_folder)
    path = f"{bin_folder}{os.pathsep}{os.environ.get('PATH', '')}"
    return {**os.environ, "PATH": path, **extra}


def run_sh(
    text: str, cwd: Path, env: Mapping[str, str], stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """A page's shell block, as it is, in bash; fails on the first command that fails."""
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", text],
        cwd=cwd,
        env=dict(env),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, f"{text}\n{done.stdout}\n{done.stderr}"
    return done


def failing_sh(text: str, cwd: Path, env: Mapping[str, str]) -> str:
    """What a shell block that must fail printed, its errors included."""
    done = subprocess.run(
        ["bash", "-c", text], cwd=cwd, env=dict(env), capture_output=True, text=True, timeout=240
    )
    assert done.returncode != 0, f"{text}\n{done.stdout}"
    return done.stdout + done.stderr


def start_sh(
    text: str, cwd: Path, env: Mapping[str, str], output: Path, *more: str
) -> subprocess.Popen[str]:
    """A page's one-line command that serves until signalled, with `more` arguments after it;
    bash execs it, so a signal reaches it."""
    command = text.strip()
    assert "\n" not in command and "&&" not in command, command
    with output.open("w") as out:
        return subprocess.Popen(
            ["bash", "-c", f'exec {command} "$@"', "bash", *more],
            cwd=cwd,
            env=dict(env),
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
        )
