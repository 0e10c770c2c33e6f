"""Tokens issued at sign-in under `gitreg serve --workers 2`: kept in cache_dir, which every
worker reads on each request, so that a token revoked with `gitreg token revoke` is refused by
every worker at its next request, with no wait."""

from __future__ import annotations

import time
from pathlib import Path

from gitreg.auth.tokens import digest, new_token
from gitreg.state.issued_tokens import IssuedToken, IssuedTokenFiles
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import run_gitreg
from tests.support.workers import serving


def test_a_revoked_token_is_refused_by_every_worker_at_once(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.release("v1.0.0", module_files("1.0.0"))
    config = tmp_path / "registry.yaml"
    config.write_text(
        f"""
cache_dir: cache
modules:
  - {{namespace: platform, name: net, system: aws, repo: {repo.path}}}
auth:
  login:
    issuer: https://sso.example.invalid   # never asked: tokens are looked up in cache_dir
    client_id: gitreg
    claims: [{{match: {{groups: platform}}, read: [platform]}}]
"""
    )
    token, now = new_token(), int(time.time())
    record = IssuedToken(
        "alice@acme.example",
        digest(token).hex(),
        ("platform",),
        False,
        False,
        now,
        now + 60,
        "terraform",
        subject="alice-sub",
        issuer="https://sso.example.invalid",
        claims=(("groups", ("platform",)),),  # what the rules read: still given at each request
    )
    IssuedTokenFiles(tmp_path / "cache").keep(record)
    bearer = {"Authorization": f"Bearer {token}"}
    path = "/v1/modules/platform/net/aws/versions"
    with serving(config, 2) as server:
        for worker in (0, 1):
            with server.client_of(worker) as client:
                assert client.get(path, headers=bearer).status_code == 200
        revoked = run_gitreg("token", "revoke", "alice@acme.example", "--config", str(config))
        assert revoked.returncode == 0, revoked.stderr
        for worker in (0, 1):
            with server.client_of(worker) as client:
                assert client.get(path, headers=bearer).status_code == 401
