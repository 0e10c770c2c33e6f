"""The retiring report over real HTTPS against the real app, and from `gitreg usage --retiring`:
real Git repositories whose modules and consumers call each other, real downloads counted into
the real SQLite store. A deprecated version downloaded and called is still used, with who
downloaded and who calls it; one revoked and unused is safe to remove; a namespace the
reader cannot read tells it nothing, and its callers are counted, never named."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from gitreg.process.tlscert import TlsMaterial
from tests.support.dependents_world import OTHER, READER, write_world
from tests.support.private_registry import bearer
from tests.support.servers import RegistryServer, run_gitreg, wait_until
from tests.support.tls_clients import served_over_tls

PLATFORM = "/v1/namespaces/platform/retiring"
TERRAFORM = {"User-Agent": "Terraform/1.11.4"}


def _write(root: Path) -> Path:
    """The dependents' world, with platform/app/aws 1.0.0 revoked (no one calls or downloads
    it), secret/team/aws 2.0.0 deprecated, and principals shown to identified readers."""
    path = write_world(root)
    text = path.read_text()
    for tags, retired, reason in (
        ('"app/v{version}"', "revoked", "app is folded into vpc"),
        ("", "deprecated", "team moves"),
    ):
        old = f"tags: {tags}}}" if tags else f"repo: {root / 'team'}}}"
        listed = f'{retired}: [{{versions: ">= 0.0.0", reason: "{reason}"}}]'
        new = f"{old[:-1]}, {listed}}}"
        assert old in text
        text = text.replace(old, new)
    path.write_text(text + "downloads: {show_principals: true}\n")
    return path


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, tls: TlsMaterial
) -> Iterator[tuple[RegistryServer, httpx.Client, Path]]:
    path = _write(tmp_path_factory.mktemp("retiring"))
    with served_over_tls(load_catalog(path), tls, timeout=20) as (server, client):

        def complete() -> bool:
            body = client.get(PLATFORM, headers=bearer(READER)).json()
            return bool(body["index"]["complete"]) and bool(body["modules"])

        wait_until(complete, 60, "the dependents index of every module and consumer")
        for token in (READER, READER, OTHER):
            got = client.get(
                "/v1/modules/platform/vpc/aws/1.0.0/download",
                headers={**bearer(token), **TERRAFORM},
            )
            assert got.status_code in (200, 204), got.text
        server.state.downloads.write()  # the tally's batch, written now rather than in 2 s
        yield server, client, path


def _get(client: httpx.Client, path: str, token: str | None = None) -> dict[str, Any]:
    answer = client.get(path, headers=bearer(token) if token else {})
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def _versions(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{m['module']} {v['version']}": v for m in body["modules"] for v in m["versions"]}


def test_a_deprecated_version_downloaded_and_called_is_still_used(
    served: tuple[RegistryServer, httpx.Client, Path],
) -> None:
    _, client, root = served
    body = _get(client, PLATFORM, READER)
    assert body["namespace"] == "platform" and body["days"] == 30 and body["counting"]
    assert body["still_used"] == 1
    vpc = _versions(body)["platform/vpc/aws 1.0.0"]
    assert (vpc["kind"], vpc["reason"]) == ("deprecated", "1.0 leaks routes: take 1.1")
    assert vpc["downloads"] == 3
    # platform is public: its installs are anonymous's, whichever token came with them.
    assert [(p["principal"], p["client"], p["downloads"]) for p in vpc["downloaded_by"]] == [
        ("anonymous", "terraform", 3)
    ]
    # Every caller whose constraint resolves to 1.0.0 today; the reader reads secret too.
    assert sorted(c["caller"]["name"] for c in vpc["callers"]) == [
        str(root.parent / "hush"),
        str(root.parent / "live"),
        "platform/dns/aws",
    ]
    assert vpc["hidden_callers"] == 0 and vpc["safe_to_remove"] is False
    # 1.1.0 is not retired: not in the report.
    assert "platform/vpc/aws 1.1.0" not in _versions(body)


def test_a_revoked_version_no_one_uses_is_safe_to_remove(
    served: tuple[RegistryServer, httpx.Client, Path],
) -> None:
    _, client, _ = served
    app = _versions(_get(client, PLATFORM, READER))["platform/app/aws 1.0.0"]
    assert (app["kind"], app["reason"]) == ("revoked", "app is folded into vpc")
    assert (app["downloads"], app["callers"], app["hidden_callers"]) == (0, [], 0)
    assert app["safe_to_remove"] is True


def test_a_reader_of_another_namespace_learns_nothing_of_it(
    served: tuple[RegistryServer, httpx.Client, Path],
) -> None:
    _, client, _ = served
    secret = _get(client, "/v1/namespaces/secret/retiring", READER)
    assert list(_versions(secret)) == ["secret/team/aws 2.0.0"]
    for token in (None, OTHER):
        headers = bearer(token) if token else {}
        there = client.get("/v1/namespaces/secret/retiring", headers=headers)
        absent = client.get("/v1/namespaces/hidden/retiring", headers=headers)
        assert there.status_code == absent.status_code == (401 if token is None else 403)
        assert there.text == absent.text.replace("hidden", "secret")
        body = _get(client, PLATFORM, token)
        vpc = _versions(body)["platform/vpc/aws 1.0.0"]
        # `hush` is secret's: counted, never named; so is everything else of secret.
        assert vpc["hidden_callers"] == 1 and len(vpc["callers"]) == 2
        every = client.get("/v1/retiring", headers=headers)
        assert every.status_code == 200
        assert [m["module"] for m in every.json()["modules"]] == [
            "platform/app/aws",
            "platform/vpc/aws",
        ]
        for answer in (json.dumps(body), every.text):
            for word in ("secret", "hush", "team", "= 1.0.0"):
                assert word not in answer, (token, word)
    # Who downloaded: to identified readers alone, never to anyone at all.
    anonymous = _versions(_get(client, PLATFORM))["platform/vpc/aws 1.0.0"]
    assert anonymous["downloads"] == 3 and "downloaded_by" not in anonymous
    assert client.get("/v1/namespaces/nowhere/retiring", headers=bearer(READER)).status_code == 403


def test_days_are_bounded_and_a_bad_query_is_a_400(
    served: tuple[RegistryServer, httpx.Client, Path],
) -> None:
    _, client, _ = served
    assert _get(client, f"{PLATFORM}?days=1", READER)["days"] == 1
    for query, said in (
        ("days=0", "days must be a whole number from 1 to 400"),
        ("days=401", "not '401'"),
        ("days=ten", "not 'ten'"),
        ("weeks=2", "unknown parameter 'weeks'"),
    ):
        answer = client.get(f"{PLATFORM}?{query}", headers=bearer(READER))
        assert answer.status_code == 400 and said in answer.text, (query, answer.text)
    bad = client.get("/v1/namespaces/no%20such/retiring", headers=bearer(READER))
    assert bad.status_code == 400


def test_the_namespace_page_shows_its_retired_versions(
    served: tuple[RegistryServer, httpx.Client, Path],
) -> None:
    _, client, _ = served
    page = client.get("/?namespace=platform", headers=bearer(READER))
    assert page.status_code == 200
    assert '<h2 id="retiring-heading">Retired versions</h2>' in page.text
    assert '<a href="/modules/platform/vpc/aws/1.0.0">platform/vpc/aws 1.0.0</a>' in page.text
    assert '<td class="count">3</td>' in page.text and "still used" in page.text
    assert "safe to remove" in page.text and "in namespaces you may not read" not in page.text
    for token in (None, OTHER):
        page = client.get("/?namespace=platform", headers=bearer(token) if token else {})
        assert page.status_code == 200
        assert "(1 in namespaces you may not read)" in page.text
        for word in ("secret", "hush", "team"):
            assert word not in page.text, (token, word)
    assert "Retired versions" not in client.get("/?namespace=secret&page=1").text


def test_the_command_reports_every_caller_and_exits_1_while_one_is_used(
    served: tuple[RegistryServer, httpx.Client, Path],
) -> None:
    _, _, path = served
    done = run_gitreg("usage", "--retiring", "platform", "--config", str(path))
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("platform: 2 retired versions, 1 still used (downloads since ")
    assert lines[1:3] == [
        "platform/app/aws 1.0.0 REVOKED: app is folded into vpc",
        "  safe to remove: no download in 30 days, no caller",
    ]
    assert lines[3:5] == [
        "platform/vpc/aws 1.0.0 DEPRECATED: 1.0 leaks routes: take 1.1",
        "  downloads: 3",
    ]
    assert lines[5].startswith("    anonymous (terraform 1.11.4): 3, last 20")
    assert "  callers: 3" in lines and any("hush" in line for line in lines)
    as_json = run_gitreg("usage", "--retiring", "--json", "--days", "7", "--config", str(path))
    assert as_json.returncode == 1, as_json.stderr
    report = json.loads(as_json.stdout)
    assert report["days"] == 7 and "namespace" not in report
    assert list(_versions(report)) == [
        "platform/app/aws 1.0.0",
        "platform/vpc/aws 1.0.0",
        "secret/team/aws 2.0.0",
    ]


def test_the_command_exits_0_when_nothing_retired_is_used_and_2_on_bad_usage(
    served: tuple[RegistryServer, httpx.Client, Path],
) -> None:
    _, _, path = served
    done = run_gitreg("usage", "--retiring", "secret", "--config", str(path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1:] == [
        "secret/team/aws 2.0.0 DEPRECATED: team moves",
        "  safe to remove: no download in 30 days, no caller",
    ]
    # Offline, the consumers are not read: their calls are unknown, so nothing is safe.
    offline = run_gitreg("usage", "--retiring", "secret", "--offline", "--config", str(path))
    assert offline.returncode == 0, offline.stderr
    assert "callers may be missing" in offline.stdout and "safe to remove" not in offline.stdout
    for wrong, said in (
        (("--retiring", "nowhere"), "no module of this namespace"),
        (("--retiring", "platform", "--days", "0"), "days must be a whole number"),
        (("platform/vpc/aws", "--retiring"), "give either a module or --retiring"),
        (("--days", "3"), "--days and --json go with --retiring"),
    ):
        refused = run_gitreg("usage", *wrong, "--config", str(path))
        assert refused.returncode == 2 and said in refused.stderr, (wrong, refused.stderr)
