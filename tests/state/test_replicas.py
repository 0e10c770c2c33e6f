"""Replicas that agree: real `gitreg serve` processes, each with its own cache_dir, on one real
PostgreSQL. A webhook to one lists the version on the others within 2 s; a moved tag is pinned
to one commit by all, including a replica started after the move, whose archives are the same
bytes, named by one digest; a replica whose build differs from the digest another recorded
answers 503 and reports it, never its bytes; PostgreSQL stopped and started again; a replica
killed with SIGKILL while it syncs."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg
import pytest

from gitreg.process.tlscert import TlsMaterial
from tests.support.gitrepo import GitRepo, git, module_files
from tests.support.postgres import postgres_server
from tests.support.replicas import replicas, start_all
from tests.support.servers import bare_clone, git_daemon, wait_until
from tests.support.terraform_cli import needs_terraform, run_terraform


@dataclass
class Remote:
    work: GitRepo
    bare: Path
    base: str  # the git daemon's base URL

    def release(self, tag: str) -> str:
        commit = self.work.release(tag, module_files(tag))
        git(self.work.path, "push", "-q", "--force", str(self.bare), f"refs/tags/{tag}")
        return commit

    def move(self, tag: str) -> str:
        commit = self.work.release(f"moved-{tag}", module_files(f"moved-{tag}"))
        git(self.work.path, "tag", "-f", tag)
        git(self.work.path, "push", "-q", "--force", str(self.bare), f"refs/tags/{tag}")
        return commit


@pytest.fixture
def remote(tmp_path: Path) -> Iterator[Remote]:
    work = GitRepo(tmp_path / "work")
    work.release("v1.0.0", module_files("1.0.0"))
    bare = bare_clone(work.path, tmp_path / "server" / "org" / "repo.git")
    with git_daemon(tmp_path / "server") as base:
        yield Remote(work, bare, base)


def test_a_webhook_to_one_replica_lists_the_version_on_the_others(
    tmp_path: Path, remote: Remote, database_url: str
) -> None:
    with replicas(tmp_path, remote.base, 3) as group:
        start_all(group, database_url)
        remote.release("v1.1.0")
        assert group[0].webhook() == 202
        # Every replica lists it: the others were told (NOTIFY). How fast is measured by
        # bench/replicas.py (p99 0.26 s); this deadline only bounds the wait on a busy machine.
        wait_until(
            lambda: all(r.versions() == ["1.0.0", "1.1.0"] for r in group),
            10.0,
            "every replica to list 1.1.0",
        )


@needs_terraform
def test_terraform_installs_through_another_replica_what_a_webhook_told_one(
    tmp_path: Path, remote: Remote, database_url: str, tls: TlsMaterial
) -> None:
    """End to end: a tag pushed, a webhook to one replica behind the load balancer, and the
    real terraform, going to another, installs the new version at once."""
    with replicas(tmp_path, remote.base, 2, tls=tls) as (told, other):
        start_all((told, other), database_url)
        remote.release("v1.1.0")
        assert told.webhook() == 202
        wait_until(lambda: other.versions() == ["1.0.0", "1.1.0"], 10.0, "the other replica")
        workdir = tmp_path / "tf"
        workdir.mkdir()
        (workdir / "cli.tfrc").write_text("")
        source = f"127.0.0.1:{other.port}/org/repo/x"
        (workdir / "main.tf").write_text(
            f'module "m" {{\n  source  = "{source}"\n  version = "1.1.0"\n}}\n'
            'output "version" {\n  value = module.m.version\n}\n'
        )
        for args in (("init", "-input=false"), ("apply", "-auto-approve", "-input=false")):
            done = run_terraform(workdir, tls.ca_cert, *args)
            assert done.returncode == 0, done.stdout + done.stderr
        shown = run_terraform(workdir, tls.ca_cert, "output", "-raw", "version")
        assert shown.stdout == "v1.1.0"


def test_a_moved_tag_is_pinned_by_all_and_archives_are_the_same_bytes(
    tmp_path: Path, remote: Remote, database_url: str
) -> None:
    with replicas(tmp_path, remote.base, 3) as group:
        first, second, late = group
        start_all((first, second), database_url)
        published = first.archive("1.0.0")
        remote.move("v1.0.0")
        remote.release("v1.1.0")
        assert second.webhook() == 202
        late.start(database_url)  # never saw the first commit of v1.0.0 itself
        # It lists at once what the others read, and builds archives once it has a clone.
        wait_until(late.fetched, 30, "the late replica to fetch")
        wait_until(
            lambda: all(r.versions() == ["1.0.0", "1.1.0"] for r in group),
            30,
            "every replica to list 1.1.0",
        )
        for replica in group:
            assert replica.archive("1.0.0") == published  # the commit first published
        assert first.archive("1.1.0") == second.archive("1.1.0") == late.archive("1.1.0")


def test_a_replica_whose_build_is_not_the_recorded_one_answers_503_not_its_bytes(
    tmp_path: Path, remote: Remote, database_url: str
) -> None:
    with replicas(tmp_path, remote.base, 2) as group:
        first, second = group
        start_all(group, database_url)
        published = first.archive("1.0.0")
        download = "/v1/modules/org/repo/x/1.0.0/download"
        locations = {httpx.get(r.url + download).headers["x-terraform-get"] for r in group}
        assert len(locations) == 1  # one digest, whichever replica answers
        assert locations.pop().endswith(f"?checksum=sha256:{hashlib.sha256(published).hexdigest()}")
        commit = remote.release("v1.1.0")
        assert first.webhook() == 202
        wait_until(lambda: second.versions() == ["1.0.0", "1.1.0"], 30, "1.1.0 listed")
        # Another replica recorded its build of 1.1.0 first, and it is not the bytes built here.
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute(
                "INSERT INTO gitreg_archive_digests (repository, archive, digest)"
                " SELECT DISTINCT repository, %s, %s FROM gitreg_published",
                (f"{commit}.tar.gz", "0" * 64),
            )
        for path in (
            "/v1/modules/org/repo/x/1.1.0/download",
            f"/v1/archives/org/repo/x/{commit}.tar.gz",
        ):
            refused = httpx.get(second.url + path, timeout=30)
            assert refused.status_code == 503, refused.text
            assert f"the ledger records sha256:{'0' * 64}" in refused.json()["errors"][0]
        status = httpx.get(second.url + "/v1/status", timeout=10).json()
        assert [m["archive"] for m in status["archives_mismatched"]] == [commit]
        assert second.archive("1.0.0") == published  # what matches is still served


def test_postgresql_stopped_and_started_again(tmp_path: Path, remote: Remote) -> None:
    with postgres_server() as db, replicas(tmp_path, remote.base, 2) as group:
        url = db.database()
        start_all(group, url)
        before = group[0].archive("1.0.0")
        db.stop()
        remote.release("v1.1.0")
        assert group[0].webhook() == 202

        def degraded() -> bool:
            status, body = group[0].readiness()
            return status == 200 and body["degraded"] is True

        wait_until(degraded, 30, "readiness to say degraded")
        # Serving goes on; the tag no database confirmed is not published.
        for replica in group:
            assert replica.versions() == ["1.0.0"]
            assert replica.archive("1.0.0") == before
        db.start()
        wait_until(
            lambda: all(r.versions() == ["1.0.0", "1.1.0"] for r in group),
            60,
            "both replicas to catch up",
        )
        wait_until(lambda: group[0].readiness()[1]["degraded"] is False, 30, "readiness to clear")
        for replica in group:
            assert "hunter2" not in replica.output() and db.password not in replica.output()


def test_a_replica_killed_while_it_syncs(tmp_path: Path, remote: Remote, database_url: str) -> None:
    with replicas(tmp_path, remote.base, 2, refresh="1s") as group:
        victim, survivor = group
        start_all(group, database_url)
        remote.release("v1.1.0")
        assert victim.webhook() == 202
        victim.kill()  # SIGKILL, while the sync the webhook asked for runs (or just after)
        # The survivor learns it (told, or by its own poll once the victim's lease expired).
        wait_until(lambda: survivor.versions() == ["1.0.0", "1.1.0"], 30, "the survivor to list it")
        victim.start(database_url)
        wait_until(lambda: victim.versions() == ["1.0.0", "1.1.0"], 30, "the victim to catch up")
        assert victim.archive("1.1.0") == survivor.archive("1.1.0")
