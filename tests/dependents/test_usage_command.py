"""`gitreg usage` run as an operator runs it, on a registry whose modules and consumers call
each other: every caller named, and the exit status says whether one picks a deprecated version."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.dependents_world import write_world
from tests.support.servers import run_gitreg


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_world(tmp_path_factory.mktemp("usage"))


def test_every_caller_is_named_and_a_deprecated_pick_is_status_1(config: Path) -> None:
    done = run_gitreg("usage", "platform/vpc/aws", "--config", str(config))
    assert done.returncode == 1, done.stderr
    root = config.parent
    assert done.stdout.splitlines() == [
        "platform/vpc/aws: 5 callers, 3 on a deprecated version",
        f"{root / 'hush'} {_commit(done.stdout, 'hush')} (main.tf): module 'vpc' by constraint"
        " = 1.0.0 -> 1.0.0 DEPRECATED: 1.0 leaks routes: take 1.1",
        f"{root / 'live'} {_commit(done.stdout, 'live')} (prod/main.tf): module 'vpc' by"
        " modules.json ~> 1.0 -> 1.0.0 DEPRECATED: 1.0 leaks routes: take 1.1",
        "platform/app/aws 1.0.0: module 'net' by constraint ~> 1.0 -> 1.1.0",
        "platform/dns/aws 1.0.0: module 'net' by ref vpc/v1.0.0 -> 1.0.0 DEPRECATED: 1.0 leaks"
        " routes: take 1.1",
        "secret/team/aws 2.0.0: module 'vpc' by constraint >= 1.1.0 -> 1.1.0",
    ]
    # The consumer's file that does not parse is named, and the rest was read.
    assert f"not read: {root / 'live'} broken/main.tf: syntax error" in done.stderr


def test_no_deprecated_pick_is_status_0_and_an_unknown_module_2(config: Path) -> None:
    done = run_gitreg("usage", "platform/app/aws", "--config", str(config))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["platform/app/aws: 0 callers, 0 on a deprecated version"]
    for wrong in ("platform/absent/aws", "platform/vpc"):
        refused = run_gitreg("usage", wrong, "--config", str(config))
        assert refused.returncode == 2 and wrong in refused.stderr


def _commit(output: str, repository: str) -> str:
    line = next(line for line in output.splitlines() if f"/{repository} " in line)
    return line.split()[1]
