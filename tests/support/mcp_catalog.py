"""A private registry for the MCP tests: `secret/vpc/aws` (1.0.0 deprecated, 2.0.0; typed and
deprecated inputs, outputs, a resource, a provider, a submodule and an example), the public
`open/naming/generic` (0.1.0 deprecated by its tag's own `.gitreg.yaml`), and the hosted provider `secret/widget` (0.9.0 deprecated, 1.0.0);
`mcp: {enabled: true}`. READER reads `secret`; OTHER reads another namespace."""

from __future__ import annotations

import hashlib
from pathlib import Path

from tests.support.gitrepo import GitRepo, module_files
from tests.support.provider_releases import new_key, write_key, write_release

READER = "reader-token-0123456789abcdef"
OTHER = "other-token-0123456789abcdef"
MODULE_REASON = "1.x keeps its state in the retired bucket; use 2.x."
PROVIDER_REASON = "0.9 mangles tags on update; use 1.0.0."
TAG_REASON = "Names change in 0.2.0: do not start with 0.1.0."

VPC = """\
terraform {
  required_providers {
    aws = { source = "hashicorp/aws", version = ">= 5.0" }
  }
}

variable "cidr" {
  type        = string
  description = "The VPC's CIDR block."
}

variable "azs" {
  type    = list(string)
  default = ["eu-west-1a"]
}

variable "legacy_name" {
  type       = string
  default    = "vpc"
  deprecated = "Use name instead."
}

resource "aws_vpc" "this" {
  cidr_block = var.cidr
}

output "id" {
  value       = aws_vpc.this.id
  description = "The VPC's id."
}
"""


def _sha256(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def mcp_catalog(root: Path) -> Path:
    """registry.yaml in `root`, with the repositories and release files it names."""
    vpc = GitRepo(root / "vpc")
    files = {
        "README.md": "# VPC\n\nA VPC with subnets in every zone.\n",
        "main.tf": VPC,
        "modules/flow-logs/main.tf": 'variable "bucket" {\n  type = string\n}\n',
        "examples/basic/main.tf": 'module "vpc" {\n  source = "../.."\n  cidr = "10.0.0.0/16"\n}\n',
    }
    vpc.release("v1.0.0", files)
    vpc.release("v2.0.0", {**files, "README.md": "# VPC\n\nA VPC, version two.\n"})
    naming = GitRepo(root / "naming")
    naming.release(
        "v0.1.0", {**module_files("0.1.0"), ".gitreg.yaml": f"deprecated: '{TAG_REASON}'\n"}
    )
    key = new_key("gitreg")
    write_key(key, root / "signing.asc")
    for version in ("0.9.0", "1.0.0"):
        write_release(root / "widget" / version, "widget", version, ("linux_amd64",), signer=key)
    path = root / "registry.yaml"
    path.write_text(
        f"""\
hostname: registry.example.test
cache_dir: cache
mcp: {{enabled: true}}
modules:
  - namespace: secret
    name: vpc
    system: aws
    repo: {vpc.path}
    deprecated: [{{versions: "< 2.0.0", reason: "{MODULE_REASON}"}}]
  - {{namespace: open, name: naming, system: generic, repo: {naming.path}}}
signing: {{keys: [signing.asc]}}
providers:
  - namespace: secret
    type: widget
    artifacts: widget
    deprecated: [{{versions: "< 1.0.0", reason: "{PROVIDER_REASON}"}}]
mirror: {{read_through: false}}
auth:
  public: [open]
  tokens:
    - {{name: reader, token_sha256: "{_sha256(READER)}", read: [secret]}}
    - {{name: other, token_sha256: "{_sha256(OTHER)}", read: [elsewhere]}}
"""
    )
    return path
