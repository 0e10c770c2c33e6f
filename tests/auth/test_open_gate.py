"""The open gate: a catalog without an auth: section is served through a gate all the same, one
that admits every request as no one in particular, reads every namespace as public, signs
nothing, asks no Git server and counts nothing; over HTTP, a token sent to it is ignored and its
answers stay anyone's to cache."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from gitreg.auth.gatekeeper import Gatekeeper
from gitreg.auth.open_gate import OPEN_GATE
from gitreg.auth.principal import Principal
from gitreg.auth.target import GitQuestion, Target
from gitreg.catalog.load import load_catalog
from gitreg.catalog.namespace_scope import NamespaceScope
from tests.conftest import WriteCatalog
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer

GIT = "https://git.example.test"
MADE_UP = {"Authorization": "Bearer made-up-token-0123456789"}


def test_the_open_gate_admits_everyone_as_no_one_and_signs_nothing(
    write_catalog: WriteCatalog,
) -> None:
    gate: Gatekeeper = OPEN_GATE  # asked as web/ asks it
    catalog = write_catalog(f"""
        modules:
          - {{namespace: team, name: x, system: aws, repo: "{GIT}/team/x.git"}}
        """)
    module = catalog.modules[0]
    reader = Principal("reader", read=NamespaceScope(("team",)), git=True)
    asked: list[str] = []

    def git() -> GitQuestion:
        asked.append("git")
        return GitQuestion(f"{GIT}/team/x.git")

    async def answers() -> None:
        for target in (
            Target("read", "module team/x/aws", "team", git),
            Target("mirror", "the network mirror"),
            Target("ops", "/v1/status"),
        ):
            for authorization in (None, "Bearer made-up", "Basic !!", ""):
                assert await gate.admit(authorization, target, "session", "192.0.2.1") is None
            assert await gate.admit_download("/v1/x", {}, None, target) is None
            assert await gate.admit_download("/v1/x", {"signature": "bad"}, "x", target) is None
        assert await gate.reader("Bearer made-up", "session", "192.0.2.1") is None
        assert await gate.reader(None, "session") is None
        specs = iter(catalog.modules)
        assert await gate.git_opened(reader, "Bearer made-up", "192.0.2.1", specs) is None
        assert list(specs) == [module]  # not even read
        assert await gate.sign_in("gitreg_anything-0123456789") is None
        await gate.sign_out("anything")

    asyncio.run(answers())
    assert asked == []  # no Git server is asked, not even which one would be
    assert not gate.on and gate.settings is None
    assert gate.is_public("team") and gate.is_public("anything-at-all")
    assert gate.readable(None)("team") and gate.readable(reader)("elsewhere")
    assert gate.signed("/v1/archives/a.tar.gz", reader, "//modules/x") == (
        "/v1/archives/a.tar.gz//modules/x"
    )
    assert gate.signed("/v1/providers/files/a.zip", None) == "/v1/providers/files/a.zip"
    assert gate.git_url(module.repo, module.git_url) is None
    assert gate.stand_in(catalog, "team") is None and gate.stand_in(catalog, "other") is None
    gate.close()  # nothing to close: it serves every open catalog


def test_an_open_registry_ignores_tokens_and_its_answers_are_anyones(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.release("v1.0.0", module_files("1.0.0"))
    (tmp_path / "registry.yaml").write_text(f"""
cache_dir: cache
modules:
  - {{namespace: infra, name: net, system: aws, repo: {repo.path}}}
""")
    catalog = load_catalog(tmp_path / "registry.yaml")
    with (
        RegistryServer(catalog) as server,
        httpx.Client(base_url=server.url, timeout=10) as client,
    ):
        current = server.state.current
        assert current.world.gate is OPEN_GATE
        for headers in ({}, MADE_UP, {"Cookie": "gitreg_session=made-up"}):
            versions = client.get("/v1/modules/infra/net/aws/versions", headers=headers)
            assert versions.status_code == 200, versions.text
            assert "private" not in versions.headers.get("cache-control", "")
            download = client.get("/v1/modules/infra/net/aws/1.0.0/download", headers=headers)
            location = download.headers["x-terraform-get"]
            assert download.status_code == 200
            assert "signature" not in location
            archive = client.get(httpx.URL(str(download.url)).join(location), headers=headers)
            assert archive.status_code == 200
            assert archive.headers["cache-control"] == "public, max-age=31536000, immutable"
            listed = client.get("/v1/modules", headers=headers)
            assert [m["id"] for m in listed.json()["modules"]] == ["infra/net/aws/1.0.0"]
            assert "private" not in listed.headers.get("cache-control", "")
            status = client.get("/v1/status", headers=headers).json()
            assert status["auth"] == {"on": False, "requests": []}  # nothing counted
        assert client.get("/healthz").json() == {"status": "ok", "modules": 1}
        assert server.reload()  # the same open catalog: the same gate
        assert current.world.gate is OPEN_GATE and not current.auth_counts


def test_no_code_asks_whether_there_is_a_gate() -> None:
    """The gate decides, open or not: nothing in gitreg asks whether there is one (the types
    say there always is: World.gate is a Gatekeeper)."""
    package = Path(__file__).parents[2] / "gitreg"
    asking = [
        f"{path.relative_to(package.parent)}:{number}"
        for path in sorted(package.rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "gate is None" in line or "gate is not None" in line
    ]
    assert asking == []
