"""The dependents index follows what is served: a caller's new release (a swap, then its docs
warmed) and a consumer's new commit (read at its interval) each rebuild it, whole, and a
request reads the new one; one whose call stops naming the module is no longer counted. The
provider index follows a hosted provider's new release and a consumer's new lock file."""

from __future__ import annotations

from pathlib import Path

import httpx

from gitreg.catalog.load import load_catalog
from tests.support.gitrepo import GitRepo, module_files
from tests.support.provider_dependents_world import lock_file
from tests.support.provider_releases import new_key, write_key, write_release
from tests.support.servers import RegistryServer, wait_until

HOST = "registry.example.test"


def _call(version: str) -> str:
    return f'module "vpc" {{\n  source  = "{HOST}/infra/vpc/aws"\n  version = "{version}"\n}}\n'


def test_a_new_release_and_a_new_commit_are_counted(tmp_path: Path) -> None:
    vpc = GitRepo(tmp_path / "vpc")
    vpc.release("v1.0.0", module_files("1.0.0"))
    vpc.release("v2.0.0", module_files("2.0.0"))
    app = GitRepo(tmp_path / "app")
    app.release("v1.0.0", module_files("app", "", _call("~> 1.0")))
    live = GitRepo(tmp_path / "live")
    live.write({"main.tf": _call("~> 1.0")})
    live.commit()
    (tmp_path / "registry.yaml").write_text(f"""
hostname: {HOST}
cache_dir: cache
mirror: {{read_through: false}}
modules:
  - {{namespace: infra, name: vpc, system: aws, repo: {vpc.path}}}
  - {{namespace: infra, name: app, system: aws, repo: {app.path}}}
consumers:
  - {{repo: {live.path}, namespace: infra, interval: 1s}}
""")
    with (
        RegistryServer(load_catalog(tmp_path / "registry.yaml")) as server,
        httpx.Client(base_url=server.url, timeout=20) as client,
    ):

        def picks() -> list[tuple[str, str, str]]:
            body = client.get("/v1/modules/infra/vpc/aws/dependents").json()
            return [
                (d["caller"]["kind"], d["caller"]["version"][:5], d["resolves_to"])
                for d in body["dependents"]
            ]

        wait_until(
            lambda: [(k, r) for k, _, r in picks()] == [("consumer", "1.0.0"), ("module", "1.0.0")],
            60,
        )
        app.release("v1.1.0", module_files("app", "", _call("~> 2.0")))
        server.sync.refresh(fetch=True, mechanism="poll")
        wait_until(lambda: ("module", "1.1.0", "2.0.0") in picks(), 60, "the new release's call")
        live.write({"main.tf": 'module "vpc" {\n  source = "./local"\n}\n'})
        live.commit("no longer calls it")
        wait_until(
            lambda: picks() == [("module", "1.1.0", "2.0.0")], 60, "the consumer's new commit"
        )
        assert server.state.dependents.rebuilds >= 3


def test_a_hosted_providers_new_release_and_a_new_lock_file_are_counted(tmp_path: Path) -> None:
    write_key(new_key("gitreg"), tmp_path / "gitreg.asc")
    write_release(tmp_path / "widget" / "1.0.0", "widget", "1.0.0", ("linux_amd64",))
    needs = (
        'terraform {\n  required_providers {\n    widget = {\n      source = "%s"\n    }\n  }\n}\n'
    )
    app = GitRepo(tmp_path / "app")
    app.release("v1.0.0", module_files("app", "", needs % f"{HOST}/infra/widget"))
    live = GitRepo(tmp_path / "live")
    live.write({"main.tf": "# nothing locked yet\n"})
    live.commit()
    (tmp_path / "registry.yaml").write_text(f"""
hostname: {HOST}
cache_dir: cache
mirror: {{read_through: false}}
signing: {{keys: [gitreg.asc]}}
modules:
  - {{namespace: infra, name: app, system: aws, repo: {app.path}}}
providers:
  - {{namespace: infra, type: widget, artifacts: widget}}
consumers:
  - {{repo: {live.path}, namespace: infra, interval: 1s}}
""")
    with (
        RegistryServer(load_catalog(tmp_path / "registry.yaml")) as server,
        httpx.Client(base_url=server.url, timeout=20) as client,
    ):

        def picks() -> list[tuple[str, str]]:
            body = client.get("/v1/providers/infra/widget/dependents").json()
            return [(d["caller"]["kind"], d["resolves_to"]) for d in body["dependents"]]

        wait_until(lambda: picks() == [("module", "1.0.0")], 60, "the module's requirement")
        write_release(tmp_path / "widget" / "1.1.0", "widget", "1.1.0", ("linux_amd64",))
        server.state.current.world.side.providers.refresh()  # as the folder's watch would
        wait_until(lambda: picks() == [("module", "1.1.0")], 60, "the provider's new release")
        live.write({".terraform.lock.hcl": lock_file((f"{HOST}/infra/widget", "1.0.0", ""))})
        live.commit("locked")
        wait_until(
            lambda: picks() == [("consumer", "1.0.0"), ("module", "1.1.0")],
            60,
            "the consumer's new lock file",
        )
