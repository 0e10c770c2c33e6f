"""Approval in Git: `gitreg approve` appends to approvals.yaml beside registry.yaml (comments
kept), the registry publishes the version once it reads the file, before its cooldown ends, and
names the approval beside it; the command refuses what it cannot approve."""

from __future__ import annotations

from pathlib import Path

import httpx

from gitreg.catalog.load import load_catalog
from tests.support.clock import Clock
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer, run_gitreg

MODULE = "/v1/modules/infra/vpc/aws"


def _registry(tmp_path: Path) -> Path:
    repo = GitRepo(tmp_path / "vpc")
    repo.release("v1.0.0", module_files("1.0.0"))
    path = tmp_path / "registry.yaml"
    path.write_text(
        "cache_dir: cache\nmodules:\n"
        f"  - {{namespace: infra, name: vpc, system: aws, repo: {repo.path},\n"
        "     publish_when: {min_age: 7d}}\n"
    )
    return path


def test_an_approval_in_the_file_publishes_before_the_cooldown(tmp_path: Path) -> None:
    path = _registry(tmp_path)
    approvals = tmp_path / "approvals.yaml"
    approvals.write_text("# reviewed by the platform team\napprovals:\n")
    with (
        RegistryServer(load_catalog(path), clock=Clock(2_000_000_000.0)) as server,
        httpx.Client(base_url=server.url) as client,
    ):
        assert client.get(f"{MODULE}/versions").json()["modules"][0]["versions"] == []
        done = run_gitreg(
            "approve", "--config", str(path), "infra/vpc/aws", "v1.0.0", "--by", "alice",
            "--reason", "hotfix: CVE-2026-0001",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "Commit it and have it reviewed" in done.stdout
        text = approvals.read_text()
        assert text.startswith("# reviewed by the platform team\napprovals:\n  - {")
        assert '"hotfix: CVE-2026-0001"' in text
        assert server.reload()
        listed = client.get(f"{MODULE}/versions").json()["modules"][0]["versions"]
        assert listed == [{"version": "1.0.0"}]
        approved = client.get(f"{MODULE}/1.0.0").json()["approved"]
        assert approved["by"] == "alice" and approved["reason"] == "hotfix: CVE-2026-0001"
        assert "approved" in client.get("/modules/infra/vpc/aws").text


def test_approve_refuses_what_it_cannot_approve(tmp_path: Path) -> None:
    path = _registry(tmp_path)
    for args, said in (
        (("infra/dns/aws", "1.0.0"), "no module infra/dns/aws"),
        (("infra/vpc/aws", "one"), "'one'"),
    ):
        done = run_gitreg("approve", "--config", str(path), *args)
        assert done.returncode == 2 and said in done.stderr, done.stderr
    assert not (tmp_path / "approvals.yaml").exists()
    (tmp_path / "approvals.yaml").write_text("approvals: []\n")  # another shape: said, kept
    done = run_gitreg("approve", "--config", str(path), "infra/vpc/aws", "1.0.0")
    assert done.returncode == 2 and "would not read" in done.stderr, done.stderr
    assert (tmp_path / "approvals.yaml").read_text() == "approvals: []\n"
