"""Found modules served by the real app over HTTPS: at start-up, a new repository within
the interval, registry.yaml's entries winning, and a restart with the source gone serving what
was surveyed before (cache_dir/sources.json)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import httpx

from gitreg.catalog.load import load_catalog
from gitreg.process.tlscert import TlsMaterial
from gitreg.sources.surveys import SourceSurveys
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import free_port, run_gitreg, wait_until
from tests.support.tls_clients import served_over_tls


def versions(client: httpx.Client, address: str) -> list[str]:
    answer = client.get(f"/v1/modules/{address}/versions")
    if answer.status_code != 200:
        return []
    return sorted(v["version"] for v in answer.json()["modules"][0]["versions"])


def catalog_text(root: Path, explicit: str = "") -> str:
    return f"""
cache_dir: cache
sources:
  - folder: {{path: srv, glob: "terraform-*", namespace: local, interval: 1s}}
modules:
  - {{namespace: infra, name: keep, system: generic, repo: {root / "explicit"}}}
{explicit}"""


def test_found_modules_are_served_and_new_ones_appear(tmp_path: Path, tls: TlsMaterial) -> None:
    srv = tmp_path / "srv"
    GitRepo(srv / "terraform-aws-vpc").release("v1.0.0", module_files("1.0.0"))
    GitRepo(tmp_path / "explicit").release("v0.1.0", module_files("0.1.0"))
    (tmp_path / "registry.yaml").write_text(catalog_text(tmp_path))
    catalog = load_catalog(tmp_path / "registry.yaml")
    with served_over_tls(catalog, tls, refresh=True) as (_, client):
        wait_until(lambda: versions(client, "local/vpc/aws") == ["1.0.0"], 30, "vpc served")
        assert versions(client, "infra/keep/generic") == ["0.1.0"]
        GitRepo(srv / "terraform-google-dns").release("v2.0.0", module_files("2.0.0"))
        wait_until(lambda: versions(client, "local/dns/google") == ["2.0.0"], 30, "dns served")
    # A restart with the source's folder gone: what it surveyed last still serves.
    shutil.move(srv, tmp_path / "moved")
    (tmp_path / "srv").mkdir()
    with served_over_tls(catalog, tls, fetch_first=False) as (_, client):
        assert versions(client, "local/vpc/aws") == ["1.0.0"]
        assert versions(client, "local/dns/google") == ["2.0.0"]


def listed(client: httpx.Client) -> list[str]:
    modules = client.get("/v1/modules").json()["modules"]
    return sorted(f"{m['namespace']}/{m['name']}/{m['provider']}" for m in modules)


def source_status(client: httpx.Client) -> dict[str, Any]:
    (source,) = client.get("/v1/status").json()["sources"]
    assert isinstance(source, dict)
    return source


def test_status_says_what_a_source_found_and_removal_keeps_versions(
    tmp_path: Path, tls: TlsMaterial
) -> None:
    srv = tmp_path / "srv"
    for name in ("terraform-aws-vpc", "terraform-aws-dns", "terraform-aws-nat"):
        GitRepo(srv / name).release("v1.0.0", module_files("1.0.0"))
    GitRepo(srv / "terraform-provider-widget").release("v1.0.0", module_files("1.0.0"))
    GitRepo(tmp_path / "explicit").release("v0.1.0", module_files("0.1.0"))
    # registry.yaml names local/nat/aws itself: its own entry serves, the found one not.
    own = f"  - {{namespace: local, name: nat, system: aws, repo: {tmp_path / 'explicit'}}}\n"
    (tmp_path / "registry.yaml").write_text(
        catalog_text(tmp_path, own).replace("interval: 1s", "interval: 1s, on_removed: hide")
    )
    catalog = load_catalog(tmp_path / "registry.yaml")
    with served_over_tls(catalog, tls, refresh=True) as (_, client):
        wait_until(lambda: versions(client, "local/dns/aws") == ["1.0.0"], 30, "dns served")
        source = source_status(client)
        assert source["state"] == "ok" and source["last_discovery"]
        assert source["source"] == f"sources[0] (folder {srv} terraform-*)"
        assert source["modules"] == ["local/dns/aws", "local/vpc/aws"]
        assert source["skipped"] == [
            {
                "repository": "terraform-provider-widget",
                "why": "terraform-provider-<TYPE> is a provider's repository, but a folder"
                " source has no releases API: list it under providers: with artifacts",
            }
        ]
        assert source["set_aside"] == [
            "local/nat/aws (terraform-aws-nat): registry.yaml's modules: lists it"
        ]
        assert versions(client, "local/nat/aws") == ["0.1.0"]  # the explicit entry's
        assert "local/dns/aws" in listed(client)
        shutil.rmtree(srv / "terraform-aws-dns")
        wait_until(lambda: source_status(client)["removed"] == ["terraform-aws-dns"], 30, "removed")
        assert source_status(client)["hidden"] == ["terraform-aws-dns"]
        # Hidden from lists, and its published versions still resolve.
        wait_until(lambda: "local/dns/aws" not in listed(client), 30, "dns unlisted")
        assert versions(client, "local/dns/aws") == ["1.0.0"]
        assert "local/vpc/aws" in listed(client)
        assert client.get("/v1/modules/local/dns/aws").json()["removed"] is True
        assert "removed" not in client.get("/v1/modules/local/vpc/aws").json()


def test_gitreg_list_shows_each_source(tmp_path: Path) -> None:
    srv = tmp_path / "srv"
    GitRepo(srv / "terraform-aws-vpc").release("v1.0.0", module_files("1.0.0"))
    GitRepo(srv / "terraform-aws-old").release("v1.0.0", module_files("1.0.0"))
    GitRepo(tmp_path / "explicit").release("v0.1.0", module_files("0.1.0"))
    text = catalog_text(tmp_path).replace("interval: 1s", 'interval: 1s, exclude: "*-old"')
    (tmp_path / "registry.yaml").write_text(text)
    before = run_gitreg("list", "--config", str(tmp_path / "registry.yaml"))
    assert "sources[0] (folder" in before.stdout and "last discovery: never" in before.stdout
    done = run_gitreg("check", "--config", str(tmp_path / "registry.yaml"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 modules, 0 providers, 0 problems" in done.stdout
    # check surveys without writing: a server's last survey is its own. A server writes it.
    catalog = load_catalog(tmp_path / "registry.yaml")
    SourceSurveys(catalog).survey(catalog.sources[0])
    after = run_gitreg("list", "--config", str(tmp_path / "registry.yaml"))
    assert after.returncode == 0, after.stderr
    lines = after.stdout.splitlines()
    assert "127.0.0.1:8443/local/vpc/aws" in lines
    at = lines.index(f"  sources[0] (folder {srv} terraform-*)")
    assert lines[at + 1 : at + 3] == ["    state: ok", lines[at + 2]]
    assert lines[at + 2].startswith("    last discovery: 20")
    assert lines[at + 3 :][:3] == [
        "    found 1 repositories, serving 1 modules",
        "      local/vpc/aws",
        "    skipped terraform-aws-old: its name matches exclude '*-old'",
    ]
    # Gone from the folder: still listed, with its versions, and marked.
    shutil.rmtree(srv / "terraform-aws-vpc")
    SourceSurveys(catalog).survey(catalog.sources[0])
    gone = run_gitreg("list", "--offline", "--config", str(tmp_path / "registry.yaml")).stdout
    lines = gone.splitlines()
    at = lines.index("127.0.0.1:8443/local/vpc/aws")
    assert lines[at + 2] == "  removed from its source: its published versions still serve"
    assert lines[at + 3].startswith("  1.0.0 ")
    assert "    removed terraform-aws-vpc: its published versions still serve" in lines
    assert not any(line.startswith("    this run:") for line in lines)  # it surveyed nothing
    # --fetch surveys every source first, and says what this run's surveys counted.
    fetched = run_gitreg("list", "--fetch", "--config", str(tmp_path / "registry.yaml"))
    assert fetched.returncode == 0, fetched.stderr
    counted = "    this run: 1 discoveries (1 ok), 0 API calls, 0 rate-limit waits, 0 errors"
    assert counted in fetched.stdout.splitlines()


def test_gitreg_check_reports_two_sources_claiming_one_address(tmp_path: Path) -> None:
    for folder in ("a", "b"):
        GitRepo(tmp_path / folder / "terraform-aws-vpc").release("v1.0.0", module_files("1.0.0"))
    GitRepo(tmp_path / "c" / "terraform-aws-dns").release(
        "v1.0.0", {".gitreg.yaml": "modules: [1]\n"}
    )
    down = f"https://127.0.0.1:{free_port()}"  # a forge with nothing listening
    (tmp_path / "registry.yaml").write_text(
        f"""
cache_dir: cache
sources:
  - folder: {{path: a, namespace: local}}
  - folder: {{path: b, namespace: local}}
  - folder: {{path: c, namespace: local}}
  - gitea: {{url: '{down}', org: infra}}
"""
    )
    done = run_gitreg("check", "--config", str(tmp_path / "registry.yaml"))
    assert done.returncode == 1
    assert (
        "sources: module local/vpc/aws is claimed by sources[0] terraform-aws-vpc and by"
        " sources[1] terraform-aws-vpc: neither is served until one of them stops claiming it"
    ) in done.stdout.splitlines()
    assert (
        "sources[2]: terraform-aws-dns: terraform-aws-dns/.gitreg.yaml is invalid:" in done.stdout
    )
    assert "modules[0] (line 1): must be a mapping, not a number" in done.stdout
    assert any(
        line.startswith(f"sources[3]: gitea {down} infra: unavailable: ")
        and "cannot be reached" in line
        for line in done.stdout.splitlines()
    ), done.stdout
    assert "0 modules, 0 providers, 3 problems" in done.stdout
