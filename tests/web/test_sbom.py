"""A module version's software bill of materials over real HTTP: valid CycloneDX 1.6, listing
the providers, module calls and Terraform versions of its root and submodules (not its examples),
calls to this registry resolved where the reader may read, files that do not parse named; behind
the gate as the version's docs are; the same bytes from another registry with a cold cache."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

from gitreg.catalog.load import load_catalog
from tests.support.gitrepo import GitRepo, module_files
from tests.support.private_registry import OTHER, READER, bearer
from tests.support.servers import RegistryServer
from tests.support.site_snippets import claimed, run_sh

VPC = "/v1/modules/acme/vpc/aws/1.2.0/sbom"
ROOT = "module:acme/vpc/aws@1.2.0"
SUBNETS = f"{ROOT}//modules/subnets"
CYCLONEDX = "application/vnd.cyclonedx+json; version=1.6"

VPC_FILES = {
    "README.md": "# VPC\n\nA network with subnets.\n",
    "main.tf": """
terraform {
  required_version = ">= 1.5, < 2.0"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.0, < 6.0"
    }
    random = {
      source = "HashiCorp/Random"
    }
    widget = {
      source  = "registry.example.test/acme/widget"
      version = "~> 1.0"
    }
  }
}

module "network" {
  source  = "registry.example.test/acme/network/aws"
  version = ">= 1.0"
}

module "by_pages_host" {
  source  = "pages.example.test:8443/acme/network/aws"
  version = "1.0.0"
}

module "label" {
  source  = "cloudposse/label/null"
  version = "0.25.0"
}

module "tags" {
  source = "git::https://oauth2:glpat-secret-token@git.example.com/infra/tags.git?ref=v1.0.0"
}

module "subnets" {
  source = "./modules/subnets"
}

module "absent" {
  source = "registry.example.test/acme/absent/aws"
}
""",
    "broken.tf": 'variable "oops" {\n',
    "modules/subnets/main.tf": """
terraform {
  required_providers {
    aws = { source = "hashicorp/aws", version = ">= 5.10" }
  }
}

module "thing" {
  source  = "registry.example.test/secret/thing/aws"
  version = "~> 0.4"
}
""",
    "examples/basic/main.tf": """
terraform {
  required_providers {
    google = { source = "hashicorp/google" }
  }
}

module "vpc" {
  source = "../.."
}
""",
}


def write_registry(root: Path, cache: str = "cache") -> Path:
    if not (root / "vpc").exists():
        network = GitRepo(root / "network")
        for version in ("1.0.0", "1.1.0", "2.0.0-rc.1"):
            network.release(f"v{version}", module_files(version))
        GitRepo(root / "vpc").release("v1.2.0", VPC_FILES)
        GitRepo(root / "thing").release("v0.4.0", module_files("0.4.0"))
    path = root / f"{cache}.yaml"
    path.write_text(f"""
hostname: registry.example.test
public_url: https://pages.example.test:8443
cache_dir: {cache}
mirror: {{read_through: false}}
modules:
  - {{namespace: acme, name: network, system: aws, repo: {root / "network"}}}
  - {{namespace: acme, name: vpc, system: aws, repo: {root / "vpc"}}}
  - {{namespace: acme, name: vpcgit, system: aws, repo: {root / "vpc"}, download: git,
      git_url: "https://git.example.com/infra/vpc.git"}}
  - {{namespace: secret, name: thing, system: aws, repo: {root / "thing"}}}
auth:
  public: [acme]
  tokens:
    - {{name: reader, token_sha256: "{_sha256(READER)}", read: [secret]}}
    - {{name: other, token_sha256: "{_sha256(OTHER)}", read: [elsewhere]}}
""")
    return path


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repositories, and `cache.yaml`: the registry that serves them."""
    folder = tmp_path_factory.mktemp("sbom")
    write_registry(folder)
    return folder


@pytest.fixture(scope="module")
def client(root: Path) -> Iterator[httpx.Client]:
    with (
        RegistryServer(load_catalog(root / "cache.yaml")) as server,
        httpx.Client(base_url=server.url, timeout=30) as http,
    ):
        yield http


def bill(client: httpx.Client, path: str = VPC, token: str | None = None) -> dict[str, Any]:
    response = client.get(path, headers=bearer(token) if token else {})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == CYCLONEDX
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(response.text) is None
    body: dict[str, Any] = response.json()
    return body


def props(component: dict[str, Any]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for p in component.get("properties", []):
        found.setdefault(p["name"], []).append(p["value"])
    return found


def by_ref(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["bom-ref"]: c for c in body["components"]}


def test_the_bill_names_the_version_its_commit_and_its_archive(client: httpx.Client) -> None:
    body = bill(client)
    assert body["specVersion"] == "1.6" and body["bomFormat"] == "CycloneDX"
    assert re.fullmatch(r"urn:uuid:[0-9a-f-]{36}", body["serialNumber"])
    assert body["metadata"]["timestamp"] == "2023-11-14T22:13:20+00:00"  # the commit's time
    assert body["metadata"]["tools"]["components"][0]["name"] == "gitreg"
    module = body["metadata"]["component"]
    assert (module["name"], module["version"], module["bom-ref"]) == ("acme/vpc/aws", "1.2.0", ROOT)
    assert module["description"] == "A network with subnets."
    location = client.get("/v1/modules/acme/vpc/aws/1.2.0/download").headers["x-terraform-get"]
    digest = location.partition("?checksum=sha256:")[2]
    assert len(digest) == 64
    assert module["hashes"] == [{"alg": "SHA-256", "content": digest}]
    found = props(module)
    assert found["gitreg:registry:source"] == ["registry.example.test/acme/vpc/aws"]
    assert found["gitreg:git:tag"] == ["v1.2.0"]
    assert len(found["gitreg:git:commit"][0]) == 40
    (unparsed,) = found["gitreg:terraform:unparsed_file"]
    assert unparsed.startswith("broken.tf: ")


def test_providers_are_normalised_with_their_constraints(client: httpx.Client) -> None:
    components = by_ref(bill(client))
    aws = components[f"{ROOT}#provider:aws"]
    assert aws["name"] == "registry.terraform.io/hashicorp/aws" and "version" not in aws
    assert props(aws)["gitreg:terraform:version_constraint"] == [">= 5.0, < 6.0"]
    assert props(aws)["gitreg:terraform:folder"] == ["."]
    random = components[f"{ROOT}#provider:random"]
    assert random["name"] == "registry.terraform.io/hashicorp/random"
    assert "gitreg:terraform:version_constraint" not in props(random)
    widget = components[f"{ROOT}#provider:widget"]
    assert widget["name"] == "registry.example.test/acme/widget"
    terraform = components[f"{ROOT}#terraform"]
    assert (terraform["type"], terraform["name"]) == ("platform", "terraform")
    assert props(terraform)["gitreg:terraform:version_constraint"] == [">= 1.5, < 2.0"]


def test_module_calls_say_their_kind_and_this_registrys_resolve(client: httpx.Client) -> None:
    components = by_ref(bill(client))
    network = components[f"{ROOT}#module:network"]
    assert network["name"] == "registry.example.test/acme/network/aws"
    assert network["version"] == "1.1.0"  # the newest `>= 1.0` admits, not 2.0.0-rc.1
    assert props(network)["gitreg:registry:this_registry"] == ["true"]
    assert network["externalReferences"] == [
        {
            "type": "bom",
            "url": "https://registry.example.test/v1/modules/acme/network/aws/1.1.0/sbom",
            "comment": "its bill of materials, at the version the constraint admits today",
        }
    ]
    assert components[f"{ROOT}#module:by_pages_host"]["version"] == "1.0.0"
    label = components[f"{ROOT}#module:label"]
    assert label["name"] == "registry.terraform.io/cloudposse/label/null"
    assert props(label)["gitreg:terraform:module_source_kind"] == ["registry"]
    assert props(label)["gitreg:terraform:version_constraint"] == ["0.25.0"]
    assert "version" not in label and "gitreg:registry:this_registry" not in props(label)
    tags = components[f"{ROOT}#module:tags"]
    assert tags["name"] == "git::https://git.example.com/infra/tags.git?ref=v1.0.0"
    assert props(tags)["gitreg:terraform:module_source_kind"] == ["remote"]
    absent = components[f"{ROOT}#module:absent"]
    assert props(absent)["gitreg:registry:unresolved"] == [
        "no module acme/absent/aws on this registry"
    ]


def test_submodules_are_attributed_and_examples_left_out(client: httpx.Client) -> None:
    body = bill(client)
    components = by_ref(body)
    assert components[SUBNETS]["name"] == "acme/vpc/aws//modules/subnets"
    aws = components[f"{SUBNETS}#provider:aws"]
    assert props(aws)["gitreg:terraform:folder"] == ["modules/subnets"]
    assert props(aws)["gitreg:terraform:version_constraint"] == [">= 5.10"]
    assert not [c for c in body["components"] if "google" in c["name"]]
    graph = {d["ref"]: set(d.get("dependsOn", [])) for d in body["dependencies"]}
    assert SUBNETS in graph[ROOT] and f"{ROOT}#module:subnets" in graph[ROOT]
    assert graph[f"{ROOT}#module:subnets"] == {SUBNETS}  # the local call is the submodule
    assert graph[SUBNETS] == {f"{SUBNETS}#provider:aws", f"{SUBNETS}#module:thing"}


def test_a_call_resolves_only_where_the_reader_may_read(client: httpx.Client) -> None:
    anyone = by_ref(bill(client))[f"{SUBNETS}#module:thing"]
    assert "version" not in anyone and "gitreg:registry:unresolved" not in props(anyone)
    assert props(anyone)["gitreg:registry:this_registry"] == ["true"]
    reader = by_ref(bill(client, token=READER))[f"{SUBNETS}#module:thing"]
    assert reader["version"] == "0.4.0"


def test_a_git_download_has_its_clone_url_and_no_digest(client: httpx.Client) -> None:
    module = bill(client, "/v1/modules/acme/vpcgit/aws/1.2.0/sbom")["metadata"]["component"]
    assert "hashes" not in module
    assert module["externalReferences"] == [
        {
            "type": "vcs",
            "url": "https://git.example.com/infra/vpc.git",
            "comment": f"tag v1.2.0, commit {props(module)['gitreg:git:commit'][0]}",
        }
    ]


def test_the_version_page_links_to_its_bill(client: httpx.Client) -> None:
    page = client.get("/modules/acme/vpc/aws/1.2.0", headers={"Accept": "text/html"})
    assert page.status_code == 200
    assert f'<a id="sbom" href="{VPC}"' in page.text


def test_head_answers_as_get_without_the_body(client: httpx.Client) -> None:
    got, head = client.get(VPC), client.head(VPC)
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-type"] == CYCLONEDX
    assert head.headers["content-length"] == got.headers["content-length"]


def test_the_gate_answers_as_for_the_versions_docs(client: httpx.Client) -> None:
    thing = "/v1/modules/secret/thing/aws/0.4.0/sbom"
    assert client.get(thing).status_code == 401
    refused = client.get(thing, headers=bearer(OTHER))
    absent = client.get("/v1/modules/secret/absent/aws/0.4.0/sbom", headers=bearer(OTHER))
    assert refused.status_code == absent.status_code == 403
    assert refused.json()["errors"] == [
        e.replace("absent", "thing") for e in absent.json()["errors"]
    ]
    assert bill(client, thing, READER)["metadata"]["component"]["version"] == "0.4.0"
    unknown = client.get("/v1/modules/acme/vpc/aws/9.9.9/sbom")
    assert unknown.status_code == 404
    assert unknown.json()["errors"] == ["acme/vpc/aws has no version 9.9.9"]
    assert client.get("/v1/modules/acme/vpc/aws/not-a-version/sbom").status_code == 400


def test_the_same_version_gives_the_same_bytes(client: httpx.Client, root: Path) -> None:
    first = client.get(VPC).content
    assert client.get(VPC).content == first
    # Another registry on the same repositories, its cache cold: docs and archive built anew.
    with (
        RegistryServer(load_catalog(write_registry(root, "cold"))) as server,
        httpx.Client(base_url=server.url, timeout=30) as http,
    ):
        assert http.get(VPC).content == first


def test_the_documented_commands_fetch_the_bill(client: httpx.Client, tmp_path: Path) -> None:
    with claimed("verifying.md", "test_the_documented_commands_fetch_the_bill") as page:
        commands = page.take("sh", "curl")
    served = commands.replace("https://registry.example.com", str(client.base_url).rstrip("/"))
    done = run_sh(served, tmp_path, {**os.environ, "GITREG_TOKEN": READER})
    listed = done.stdout.splitlines()
    assert "registry.terraform.io/hashicorp/aws\t-" in listed
    assert "registry.example.test/acme/network/aws\t1.1.0" in listed
    assert "registry.example.test/secret/thing/aws\t0.4.0" in listed  # the token reads it
    saved = (tmp_path / "vpc-1.2.0.cdx.json").read_text()
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(saved) is None


def test_an_archive_over_a_limit_leaves_the_digest_out(root: Path, tmp_path: Path) -> None:
    path = tmp_path / "registry.yaml"
    path.write_text(f"""
cache_dir: cache
mirror: {{read_through: false}}
archives: {{max_entries: 2}}
modules:
  - {{namespace: acme, name: vpc, system: aws, repo: {root / "vpc"}}}
""")
    with (
        RegistryServer(load_catalog(path)) as server,
        httpx.Client(base_url=server.url, timeout=30) as http,
    ):
        assert http.get("/v1/modules/acme/vpc/aws/1.2.0/download").status_code == 413
        module = bill(http)["metadata"]["component"]
        assert "hashes" not in module and module["version"] == "1.2.0"
