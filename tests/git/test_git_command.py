"""`git` as a plain child process: its output, what it said when it failed, the environment as
it is now, a git that cannot be run, and the CPU it spent, told to the process's CPU budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.git.git_command import GitFailed, run_git
from tests.support.gitrepo import GitRepo
from tests.support.pacing import Recording, installed


def test_output_and_what_a_failed_git_said(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.commit("one")
    repo.tag("v1.0.0")
    listed = run_git(["ls-remote", "--tags", str(repo.path)], {}, 30)
    assert listed.endswith(b"\trefs/tags/v1.0.0\n")
    with pytest.raises(
        GitFailed, match=r"^fatal: Could not read from remote repository\. / .*exists\.$"
    ):
        run_git(["ls-remote", "--tags", str(tmp_path / "nowhere")], {}, 30)


def test_the_environment_is_the_one_of_now(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "gitreg.probe")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "first")
    assert run_git(["config", "gitreg.probe"], {}, 30) == b"first\n"
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "second")
    assert run_git(["config", "gitreg.probe"], {}, 30) == b"second\n"
    overridden = {"GIT_CONFIG_VALUE_0": "third"}
    assert run_git(["config", "gitreg.probe"], overridden, 30) == b"third\n"


def test_a_git_that_cannot_be_run_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(GitFailed, match="cannot run git: "):
        run_git(["version"], {}, 30)


def test_the_cpu_git_spent_is_told_to_the_cpu_budget(tmp_path: Path) -> None:
    """What a background thread's git spends is paid back as its own slices are
    (`pacing.charge`): a failed git's too."""
    pacer = Recording()
    repo = GitRepo(tmp_path / "r")
    repo.commit("one")
    with installed(pacer):
        run_git(["-C", str(repo.path), "log", "--oneline"], {}, 30)
        with pytest.raises(GitFailed):
            run_git(["ls-remote", str(tmp_path / "nowhere")], {}, 30)
    assert len(pacer.charged) == 2 and all(spent > 0 for spent in pacer.charged)
