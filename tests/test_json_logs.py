"""A real `gitreg serve --log-format json --access-log` on a private catalog, through requests
with good, bad and rotated tokens, signed download URLs (good and tampered), ops pages, a
webhook (signed and forged) and a reload: every line of its log is one JSON object, none holds
a token, a signature or the webhook secret, and the lines a request causes carry its id."""

from __future__ import annotations

import base64
import hashlib
import json
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.gitrepo import GitRepo, git, module_files
from tests.support.servers import (
    answers,
    bare_clone,
    free_port,
    git_daemon,
    start_serve,
    wait_until,
)
from tests.support.webhook_payloads import FORGES

PLATFORM = "platform-token-a1b2c3d4e5f6"
OPS = "ops-token-0f9e8d7c6b5a"
ROTATED = "rotated-token-99887766554433"
UNKNOWN = "unknown-token-5566778899aa"
WEBHOOK_SECRET = "webhook-secret-for-the-json-log-test"
FORGED_SECRET = "forged-secret-the-server-never-had"


def sha(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@dataclass
class Run:
    process: subprocess.Popen[str]
    base: str
    log: Path
    work: GitRepo
    bare: Path
    secrets: set[str] = field(default_factory=set)  # every value no line may hold
    answered: list[httpx.Response] = field(default_factory=list)

    def get(self, path: str, headers: dict[str, str] | None = None) -> httpx.Response:
        response = httpx.get(f"{self.base}{path}", headers=headers, timeout=30)
        self.answered.append(response)
        return response

    def post(self, path: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
        response = httpx.post(f"{self.base}{path}", content=body, headers=headers, timeout=30)
        self.answered.append(response)
        return response

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(timeout=60) == 0

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log.read_text().splitlines()]


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Run]:
    monkeypatch.setenv("GITREG_TEST_JSON_WEBHOOK_SECRET", WEBHOOK_SECRET)
    work = GitRepo(tmp_path / "work")
    work.release("v1.0.0", module_files("1.0.0"))
    bare = bare_clone(work.path, tmp_path / "server" / "org" / "repo.git")
    (tmp_path / "rotated.token").write_text(ROTATED + "\n")
    with git_daemon(tmp_path / "server") as daemon:
        url = f"{daemon}/org/repo.git"
        catalog = tmp_path / "registry.yaml"
        catalog.write_text(f"""
cache_dir: cache
hostname: registry.example.test
refresh_interval: 1h
fresh_reads: 0
webhooks: {{secret_env: GITREG_TEST_JSON_WEBHOOK_SECRET}}
modules:
  - {{namespace: platform, name: net, system: aws, repo: '{url}'}}
  - {{namespace: examples, name: net, system: aws, repo: '{url}'}}
auth:
  public: [examples]
  tokens:
    - {{name: ci-platform, token_sha256: "{sha(PLATFORM)}", read: ["platform"]}}
    - {{name: ops, token_sha256: "{sha(OPS)}", ops: true}}
    - {{name: rotated, token_file: rotated.token, read: ["platform"]}}
""")
        port = free_port()
        log = tmp_path / "serve.log"
        with log.open("w") as written:
            process = start_serve(
                catalog, port, output=written, extra=("--log-format", "json", "--access-log")
            )
        base = f"http://127.0.0.1:{port}"
        try:
            wait_until(lambda: answers(f"{base}/readyz"), 60, "gitreg ready")
            secrets = {PLATFORM, OPS, ROTATED, UNKNOWN, WEBHOOK_SECRET}
            yield Run(process, base, log, work, bare, secrets)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=30)


def deliver(run: Run, secret: str, request_id: str) -> httpx.Response:
    body, headers = FORGES["github"].request("127.0.0.1", "org/repo", "v1.1.0", secret)
    run.secrets.add(headers["X-Hub-Signature-256"].removeprefix("sha256="))
    return run.post("/v1/webhooks/github", body, {**headers, "X-Request-Id": request_id})


def test_every_line_is_json_without_a_secret_and_request_lines_carry_their_id(run: Run) -> None:
    versions = "/v1/modules/platform/net/aws/versions"
    assert run.get(versions, {**bearer(PLATFORM), "X-Request-Id": "good-token"}).status_code == 200
    assert run.get(versions, bearer(ROTATED)).status_code == 200
    assert run.get(versions, bearer(UNKNOWN)).status_code == 401
    basic = base64.b64encode(f"user:{PLATFORM}x".encode()).decode()
    run.secrets.add(basic)
    assert run.get(versions, {"Authorization": f"Basic {basic}"}).status_code == 401
    assert run.get(f"{versions}?token={PLATFORM}", bearer(OPS)).status_code == 403

    download = run.get(
        "/v1/modules/platform/net/aws/1.0.0/download",
        {**bearer(PLATFORM), "X-Request-Id": "signed-download"},
    )
    signed = download.headers["x-terraform-get"]
    signature = signed.split("signature=", 1)[1].split("&")[0]
    run.secrets.add(signature)
    archive = run.get(signed, {"X-Request-Id": "signed-archive"})
    assert archive.status_code == 200
    tampered = signed.replace(signature, signature[::-1])
    run.secrets.add(signature[::-1])
    assert run.get(tampered).status_code in (401, 403)

    assert run.get("/v1/status", bearer(OPS)).status_code == 200
    assert run.get("/metrics", bearer(OPS)).status_code == 200
    assert run.get("/metrics", bearer(PLATFORM)).status_code == 403

    run.work.release("v1.1.0", module_files("1.1.0"))
    git(run.work.path, "push", "-q", str(run.bare), "v1.1.0")
    assert deliver(run, WEBHOOK_SECRET, "hook-1").status_code == 202
    wait_until(
        lambda: (
            {"version": "1.1.0"}
            in httpx.get(f"{run.base}{versions}", headers=bearer(PLATFORM)).json()["modules"][0][
                "versions"
            ]
        ),
        30,
        "1.1.0 served after the webhook",
    )
    run.secrets.add(FORGED_SECRET)
    assert deliver(run, FORGED_SECRET, "hook-forged").status_code == 401

    run.process.send_signal(signal.SIGHUP)  # a reload re-reads the tokens too
    wait_until(
        lambda: any(ln["message"].startswith("catalog reloaded") for ln in run.lines()),
        30,
        "the reload logged",
    )
    assert run.get(versions, bearer(ROTATED)).status_code == 200
    run.stop()  # the lines of a whole run, its shutdown's too

    text = run.log.read_text()
    lines = run.lines()  # every line parses as JSON
    for line in lines:
        assert {"time", "level", "logger", "message"} <= set(line), line
        assert line["time"].endswith("Z")
    leaked = sorted(secret for secret in run.secrets if secret in text)
    assert not leaked, leaked

    by_id: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        if line.get("request_id"):
            by_id.setdefault(line["request_id"], []).append(line)
    for response in run.answered:
        request_id = response.headers["x-request-id"]
        (access,) = [ln for ln in by_id.get(request_id, []) if ln["logger"] == "gitreg.access"]
        assert access["status"] == response.status_code
        assert access["path"] == response.request.url.path  # never the query
    for line in lines:
        if line["logger"] in ("gitreg.access", "gitreg.freshness.deliveries", "gitreg.web.errors"):
            assert line.get("request_id"), line  # caused by a request: carries its id

    hook = [ln["message"] for ln in by_id["hook-1"]]
    assert any("github webhook ('push')" in m and "refreshing" in m for m in hook), hook
    assert any("new version 1.1.0" in m and "webhook" in m for m in hook), hook  # its sync, too
    forged = [ln["message"] for ln in by_id["hook-forged"]]
    assert any("refused with 401" in m for m in forged), forged
    # Built for the download, whose location names the archive's digest.
    built = [ln["message"] for ln in by_id["signed-download"]]
    assert any(m.startswith("built archive") for m in built), built
    assert [ln["route"] for ln in by_id["good-token"]] == [
        "/v1/modules/{namespace}/{name}/{system}/versions"
    ]
