"""The registry API over real HTTP: the public registry's documented shapes, paging, filters,
search, a version's docs from a monorepo, and the modules.v1 routes beside it untouched."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer

VPC_README = "# VPC\n\nA network with public and private subnets.\n\nMore words.\n"
VPC_FILES = {
    "modules/vpc/README.md": VPC_README,
    "modules/vpc/variables.tf": """
variable "cidr" {
  type        = string
  description = "The network's range."
  default     = "10.0.0.0/16"
}

variable "name" {
  type        = string
  description = "What to call it."
}

variable "password" {
  type      = string
  sensitive = true
  nullable  = false
}
""",
    "modules/vpc/main.tf": """
terraform {
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.0"
    }
  }
}

resource "aws_vpc" "this" {
  cidr_block = var.cidr
}

data "aws_region" "current" {}

module "naming" {
  source = "../naming"
}
""",
    "modules/vpc/outputs.tf": """
output "id" {
  value       = aws_vpc.this.id
  description = "The VPC's id."
}
""",
    "modules/vpc/broken.tf": 'variable "oops" {\n',
    "modules/vpc/modules/subnets/main.tf": 'variable "per_zone" {\n  type = number\n}\n',
    "modules/vpc/examples/simple/main.tf": 'module "vpc" {\n  source = "../.."\n}\n',
}

# The public registry's documented fields of a module in a list, and of a module's details.
LISTED = {
    "id", "owner", "namespace", "name", "version", "provider", "description", "source",
    "published_at", "downloads", "verified",
}  # fmt: skip
DETAILED = LISTED | {"root", "submodules", "providers", "versions"}
FOLDER = {"path", "readme", "empty", "inputs", "outputs", "dependencies", "resources"}
INPUT = {"name", "type", "description", "default", "required"}
META = {"limit", "current_offset"}


def write_registry(root: Path) -> Path:
    mono = GitRepo(root / "mono")
    mono.write(module_files("naming", "modules/naming"))
    mono.write({"modules/naming/README.md": "Names for everything.\n"})
    mono.release("vpc/v1.0.0", VPC_FILES)
    mono.release("naming/v0.3.0", {"modules/naming/variables.tf": 'variable "prefix" {}\n'})
    mono.release("vpc/v1.1.0", {"modules/vpc/extra.tf": 'output "extra" {\n  value = 1\n}\n'})
    mono.release("vpc/v2.0.0-rc.1", {"modules/vpc/rc.tf": "# a release candidate\n"})
    single = GitRepo(root / "single")
    single.release("v3.2.1", module_files("3.2.1"))
    bulk = GitRepo(root / "bulk")
    bulk.release("v1.0.0", module_files("1.0.0"))
    bulk_modules = "".join(
        f"  - {{namespace: bulk, name: m{i:02}, system: generic, repo: {bulk.path}}}\n"
        for i in range(23)
    )
    path = root / "registry.yaml"
    path.write_text(f"""
hostname: registry.example.test
cache_dir: cache
mirror: {{read_through: false}}
modules:
  - {{namespace: Infra, name: vpc, system: aws, repo: {mono.path}, path: modules/vpc, tags: "vpc/v{{version}}"}}
  - {{namespace: infra, name: naming, system: generic, repo: {mono.path}, path: modules/naming, tags: "naming/v{{version}}"}}
  - {{namespace: infra, name: vpc, system: azurerm, repo: {single.path}}}
{bulk_modules}""")
    return path


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    catalog = load_catalog(write_registry(tmp_path_factory.mktemp("api")))
    with (
        RegistryServer(catalog) as server,
        httpx.Client(base_url=server.url, timeout=20) as http,
    ):
        yield http


def get(client: httpx.Client, path: str, status: int = 200, **params: Any) -> Any:
    # httpx drops a URL's own query string when given params, even none.
    response = client.get(path, params=params) if params else client.get(path)
    assert response.status_code == status, (path, params, response.text)
    assert response.headers["content-type"] == "application/json"
    return response.json()


def test_a_list_has_the_public_registrys_shape(client: httpx.Client) -> None:
    body = get(client, "/v1/modules", namespace="infra")
    assert set(body) == {"meta", "modules"}
    assert body["meta"] == {"limit": 15, "current_offset": 0}
    modules = body["modules"]
    assert [m["id"] for m in modules] == [
        "infra/naming/generic/0.3.0",
        "Infra/vpc/aws/1.1.0",  # not 2.0.0-rc.1: a prerelease is not the newest version
        "infra/vpc/azurerm/3.2.1",
    ]
    for module in modules:
        assert set(module) >= LISTED
        assert module["downloads"] == 0 and module["verified"] is False
        assert module["owner"] == "" and module["source"] == ""  # local repositories: no web URL
        assert module["published_at"] == "2023-11-14T22:13:20Z"  # the tests' commit time
    vpc = modules[1]
    assert vpc["description"] in ("", "A network with public and private subnets.")
    assert vpc["tag"] == "vpc/v1.1.0" and len(vpc["commit"]) == 40


def test_paging_forward_and_back_across_the_end(client: httpx.Client) -> None:
    first = get(client, "/v1/modules", limit=10, namespace="bulk")
    assert first["meta"] == {
        "limit": 10,
        "current_offset": 0,
        "next_offset": 10,
        "next_url": "/v1/modules?namespace=bulk&limit=10&offset=10",
    }
    seen = [m["name"] for m in first["modules"]]
    page = first
    for _ in range(5):
        if "next_url" not in page["meta"]:
            break
        page = get(client, page["meta"]["next_url"])
        seen += [m["name"] for m in page["modules"]]
    assert seen == [f"m{i:02}" for i in range(23)]
    assert page["meta"] == {
        "limit": 10,
        "current_offset": 20,
        "prev_offset": 10,
        "prev_url": "/v1/modules?namespace=bulk&limit=10&offset=10",
    }
    beyond = get(client, "/v1/modules", limit=10, offset=40, namespace="bulk")
    assert beyond["modules"] == [] and beyond["meta"]["prev_offset"] == 13


def test_filters_by_namespace_and_system(client: httpx.Client) -> None:
    assert len(get(client, "/v1/modules", limit=100)["modules"]) == 26
    by_path = get(client, "/v1/modules/INFRA", provider="aws")["modules"]
    assert [m["id"] for m in by_path] == ["Infra/vpc/aws/1.1.0"]
    assert get(client, "/v1/modules/nobody")["modules"] == []
    assert get(client, "/v1/modules", verified="true")["modules"] == []
    systems = get(client, "/v1/modules/infra/vpc")["modules"]
    assert [m["provider"] for m in systems] == ["aws", "azurerm"]


def test_search_ranks_the_exact_name_first(client: httpx.Client) -> None:
    body = get(client, "/v1/modules/search", q="vpc")
    assert [m["id"] for m in body["modules"]][:2] == [
        "Infra/vpc/aws/1.1.0",
        "infra/vpc/azurerm/3.2.1",
    ]
    assert (
        get(client, "/v1/modules/search", q="infra/vpc/azurerm")["modules"][0]["provider"]
        == "azurerm"
    )
    assert [m["name"] for m in get(client, "/v1/modules/search", q="m1", limit=3)["modules"]] == [
        "m10",
        "m11",
        "m12",
    ]
    nothing = get(client, "/v1/modules/search", q="vpc", namespace="bulk")
    assert nothing["modules"] == [] and nothing["meta"] == {"limit": 15, "current_offset": 0}
    next_url = get(client, "/v1/modules/search", q="m", limit=5)["meta"]["next_url"]
    assert next_url == "/v1/modules/search?q=m&limit=5&offset=5"


def test_a_version_with_its_docs(client: httpx.Client) -> None:
    body = get(client, "/v1/modules/infra/vpc/aws/1.0.0")
    assert set(body) >= DETAILED and "examples" in body
    assert body["id"] == "Infra/vpc/aws/1.0.0" and body["version"] == "1.0.0"
    assert body["versions"] == ["2.0.0-rc.1", "1.1.0", "1.0.0"]
    assert body["providers"] == ["aws", "azurerm"]
    assert body["description"] == "A network with public and private subnets."
    root = body["root"]
    assert set(root) >= FOLDER and root["path"] == "" and root["name"] == "vpc"
    assert root["readme"] == VPC_README and root["empty"] is False
    inputs = {i["name"]: i for i in root["inputs"]}
    assert all(set(i) >= INPUT for i in inputs.values())
    assert inputs["cidr"]["required"] is False and inputs["cidr"]["type"] == "string"
    assert "10.0.0.0/16" in inputs["cidr"]["default"]
    assert inputs["name"] == {
        "name": "name",
        "type": "string",
        "description": "What to call it.",
        "default": None,
        "required": True,
        "sensitive": False,
        "nullable": True,
        "deprecated": "",
    }
    assert inputs["password"]["sensitive"] is True and inputs["password"]["nullable"] is False
    assert root["outputs"] == [
        {"name": "id", "description": "The VPC's id.", "sensitive": False, "deprecated": ""}
    ]
    assert root["provider_dependencies"] == [
        {"name": "aws", "namespace": "hashicorp", "source": "hashicorp/aws", "version": ">= 5.0"}
    ]
    assert root["resources"] == [{"name": "this", "type": "aws_vpc"}]
    assert root["data_sources"] == [{"name": "current", "type": "aws_region"}]
    assert root["dependencies"] == [{"name": "naming", "source": "../naming", "version": ""}]
    assert [p["path"] for p in root["problems"]] == ["modules/vpc/broken.tf"]
    assert [(s["path"], s["name"]) for s in body["submodules"]] == [("modules/subnets", "subnets")]
    assert body["submodules"][0]["inputs"][0]["name"] == "per_zone"
    assert [e["path"] for e in body["examples"]] == ["examples/simple"]


def test_the_latest_version_and_its_download(client: httpx.Client) -> None:
    assert get(client, "/v1/modules/infra/vpc/aws")["version"] == "1.1.0"
    assert get(client, "/v1/modules/infra/vpc/aws/v1.1.0")["version"] == "1.1.0"
    assert get(client, "/v1/modules/infra/vpc/aws/2.0.0-rc.1")["version"] == "2.0.0-rc.1"
    moved = client.get("/v1/modules/infra/vpc/aws/download")
    assert moved.status_code == 302
    assert moved.headers["location"].endswith("/v1/modules/infra/vpc/aws/1.1.0/download")


def test_the_routes_terraform_uses_are_untouched(client: httpx.Client) -> None:
    versions = get(client, "/v1/modules/infra/vpc/aws/versions")
    assert versions == {
        "modules": [{"versions": [{"version": v} for v in ("2.0.0-rc.1", "1.1.0", "1.0.0")]}]
    }
    download = client.get("/v1/modules/infra/vpc/aws/1.1.0/download")
    assert download.status_code == 200 and download.headers["x-terraform-get"]


@pytest.mark.parametrize(
    ("path", "params", "status", "says"),
    [
        ("/v1/modules", {"limit": "0"}, 400, "limit must be a whole number from 1 to 100"),
        ("/v1/modules", {"limit": "101"}, 400, "limit"),
        ("/v1/modules", {"limit": "+5"}, 400, "limit"),
        ("/v1/modules", {"offset": "-1"}, 400, "offset"),
        ("/v1/modules", {"offset": "1_0"}, 400, "offset"),
        ("/v1/modules", {"offset": "9" * 40}, 400, "offset"),
        ("/v1/modules", {"namespace": "no/pe"}, 400, "namespace"),
        ("/v1/modules", {"provider": "a-b"}, 400, "provider"),
        ("/v1/modules", {"provider": "a" * 5000}, 400, "at most 64"),
        ("/v1/modules", {"namespace": "n" * 5000}, 400, "at most 64"),
        ("/v1/modules", {"verified": "yes"}, 400, "verified"),
        ("/v1/modules/search", {}, 400, "search needs a query"),
        ("/v1/modules/search", {"q": "   "}, 400, "search needs a query"),
        ("/v1/modules/search", {"q": "x" * 201}, 400, "at most 200"),
        ("/v1/modules/-bad-", {}, 400, "namespace"),
        ("/v1/modules/infra/vpc/AWS", {}, 200, ""),
        ("/v1/modules/infra/vpc/a_b", {}, 400, "system"),
        ("/v1/modules/infra/vpc/aws/1.0", {}, 400, "Semantic Version"),
        ("/v1/modules/infra/vpc/aws/9.9.9", {}, 404, "has no version 9.9.9"),
        ("/v1/modules/infra/absent/aws", {}, 404, "no module infra/absent/aws"),
        ("/v1/modules/infra/absent/aws/1.0.0", {}, 404, "no module"),
        ("/v1/modules/a/b/c/d/e", {}, 404, "no such endpoint"),
    ],
)
def test_bad_and_unknown_requests(
    client: httpx.Client, path: str, params: dict[str, str], status: int, says: str
) -> None:
    body = get(client, path, status, **params)
    if status >= 400:
        assert says in body["errors"][0]
