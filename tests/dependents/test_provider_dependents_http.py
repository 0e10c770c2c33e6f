"""Provider dependents over real HTTPS against the real app: consumers' committed lock files
(one naming a provider hosted here beside one of registry.terraform.io, one that does not
parse) and modules' `required_providers`; a user in a namespace the reader cannot read counted,
never named; a provider the reader cannot read answered as one that does not exist."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from gitreg.process.tlscert import TlsMaterial
from tests.support.dependents_client import answered, served_until_indexed
from tests.support.private_registry import bearer
from tests.support.provider_dependents_world import HOST, OTHER, READER, write_provider_world
from tests.support.servers import RegistryServer, run_gitreg

WIDGET = "/v1/providers/platform/widget/dependents"
LOCK = ".terraform.lock.hcl"
DROPS = "1.0 drops tags: take 1.1"  # why widget 1.0.x is deprecated


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_provider_world(tmp_path_factory.mktemp("provider-dependents"))


@pytest.fixture(scope="module")
def served(world: Path, tls: TlsMaterial) -> Iterator[tuple[RegistryServer, httpx.Client]]:
    with served_until_indexed(world, tls, WIDGET, READER, 4) as served:
        yield served


def test_a_reader_of_every_namespace_sees_every_user(
    world: Path, served: tuple[RegistryServer, httpx.Client]
) -> None:
    _, client = served
    body = answered(client, WIDGET, READER)
    root = world.parent
    assert body["provider"] == "platform/widget"
    assert [
        (
            d["caller"]["kind"],
            d["caller"]["name"],
            d["caller"]["path"],
            d["local_name"],
            d["via"],
            d["constraint"],
            d["resolves_to"],
            d["deprecated"],
        )
        for d in body["dependents"]
    ] == [
        ("consumer", str(root / "hush"), LOCK, None, LOCK, ">= 1.1.0", "1.1.0", None),
        ("consumer", str(root / "live"), f"prod/{LOCK}", None, LOCK, "~> 1.0", "1.0.0", DROPS),
        ("module", "platform/net/aws", "", "widget", "constraint", "~> 1.0", "1.1.0", None),
        ("module", "secret/team/aws", "", "widget", "constraint", "< 1.1.0", "1.0.0", DROPS),
    ]
    assert body["dependents"][2]["source"] == f"{HOST}/platform/widget"
    assert body["hidden"] == {"count": 0, "deprecated": 0}
    assert body["on_deprecated"] == 2
    # registry.terraform.io's provider in the same lock file is nobody's dependent here.
    assert "hashicorp" not in str(body)


def test_users_in_namespaces_the_reader_cannot_read_are_counted_never_named(
    served: tuple[RegistryServer, httpx.Client],
) -> None:
    _, client = served
    for token in (None, OTHER):
        answer = client.get(WIDGET, headers=bearer(token) if token else {})
        assert answer.status_code == 200
        body = answer.json()
        assert [(d["caller"]["kind"], d["caller"]["name"][-4:]) for d in body["dependents"]] == [
            ("consumer", "live"),
            ("module", "/aws"),
        ]
        assert body["dependents"][1]["caller"]["name"] == "platform/net/aws"
        assert body["hidden"] == {"count": 2, "deprecated": 1}
        assert body["on_deprecated"] == 2
        for secret in ("secret", "hush", "team", ">= 1.1.0", "< 1.1.0"):
            assert secret not in answer.text, (token, secret)


def test_a_provider_the_reader_cannot_read_answers_as_one_that_does_not_exist(
    served: tuple[RegistryServer, httpx.Client],
) -> None:
    _, client = served
    gadget = answered(client, "/v1/providers/secret/gadget/dependents", READER)
    assert [(d["caller"]["path"], d["resolves_to"]) for d in gadget["dependents"]] == [
        ("stage/.terraform.lock.hcl", "1.0.0")
    ]
    for token in (None, OTHER):
        headers = bearer(token) if token else {}
        there = client.get("/v1/providers/secret/gadget/dependents", headers=headers)
        missing = client.get("/v1/providers/secret/absent/dependents", headers=headers)
        assert there.status_code == missing.status_code == (401 if token is None else 403)
        assert there.text == missing.text.replace("absent", "gadget")
    gone = client.get("/v1/providers/platform/absent/dependents")
    assert gone.status_code == 404 and "no provider platform/absent" in gone.text
    bad = client.get("/v1/providers/platform/no_such!/dependents")
    assert bad.status_code == 400


def test_usage_names_every_user_and_a_deprecated_pick_is_status_1(world: Path) -> None:
    done = run_gitreg("usage", "platform/widget", "--config", str(world))
    assert done.returncode == 1, done.stderr
    root = world.parent
    lines = done.stdout.splitlines()
    assert lines[0] == "platform/widget: 4 callers, 2 on a deprecated version"
    assert lines[1].startswith(f"{root / 'hush'} ")
    assert lines[1].endswith(
        f"(.terraform.lock.hcl): {HOST}/platform/widget by .terraform.lock.hcl >= 1.1.0 -> 1.1.0"
    )
    assert lines[2].endswith(
        f"(prod/.terraform.lock.hcl): {HOST}/platform/widget by .terraform.lock.hcl ~> 1.0"
        " -> 1.0.0 DEPRECATED: 1.0 drops tags: take 1.1"
    )
    assert lines[3:] == [
        f"platform/net/aws 1.0.0: {HOST}/platform/widget by constraint ~> 1.0 -> 1.1.0",
        f"secret/team/aws 2.0.0: {HOST.upper()}/PLATFORM/WIDGET by constraint < 1.1.0 -> 1.0.0"
        " DEPRECATED: 1.0 drops tags: take 1.1",
    ]
    assert f"not read: {root / 'live'} broken/.terraform.lock.hcl: syntax error" in done.stderr
    gadget = run_gitreg("usage", "secret/gadget", "--config", str(world))
    assert gadget.returncode == 0, gadget.stderr
    assert gadget.stdout.splitlines()[0] == "secret/gadget: 1 callers, 0 on a deprecated version"
    for wrong in ("platform/absent", "platform"):
        refused = run_gitreg("usage", wrong, "--config", str(world))
        assert refused.returncode == 2 and wrong in refused.stderr


def test_the_provider_page_shows_who_uses_it_as_the_reader_may_see_them(
    served: tuple[RegistryServer, httpx.Client],
) -> None:
    _, client = served
    page = client.get("/providers/platform/widget", headers=bearer(READER))
    assert page.status_code == 200
    assert '<h2 id="used-by">Used by</h2>' in page.text
    assert '<a href="/modules/secret/team/aws">secret/team/aws</a> 2.0.0' in page.text
    assert "<code>prod/.terraform.lock.hcl</code>" in page.text
    assert "used-by-hidden" not in page.text
    for token in (None, OTHER):
        page = client.get("/providers/platform/widget", headers=bearer(token) if token else {})
        assert page.status_code == 200
        assert '<a href="/modules/platform/net/aws">platform/net/aws</a> 1.0.0' in page.text
        assert (
            "And 2 users in namespaces you may not read, 1 of them on a deprecated version."
            in page.text
        )
        for secret in ("secret", "hush", "team", "&gt;= 1.1.0", "&lt; 1.1.0"):
            assert secret not in page.text, (token, secret)
