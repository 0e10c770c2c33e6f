"""A registry worth browsing, for the pages' tests: a documented module with a submodule and an
example, a module whose README is hostile, a private module, a hosted provider; with or without
auth (then `open` is public and the `reader` token reads `secret`)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from tests.support.gitrepo import GitRepo
from tests.support.provider_releases import new_key, write_key, write_release

HOSTNAME = "registry.example.test"
TOKEN = "gitreg_pages-reader-token-0123456789"  # reads `secret`

VPC_README = """\
# VPC

A network for one region, with public and private subnets.

## Usage

Set `cidr` and the subnets; see [the example](examples/basic) and [upstream](https://example.com/docs).

| Subnet | Purpose |
| --- | --- |
| public | load balancers |
| private | everything else |
"""

VARIABLES = """\
variable "cidr" {
  type        = string
  description = "The VPC's address range."
}

variable "subnets" {
  type = object({
    public  = list(string)
    private = optional(list(string), [])
  })
  default     = { public = [] }
  description = <<-EOT
    Subnets per kind.
  EOT
}

variable "password" {
  type      = string
  sensitive = true
  default   = null
}

variable "legacy_name" {
  type       = string
  default    = "vpc"
  deprecated = "Use name instead."
}
"""

OUTPUTS = """\
output "id" {
  value       = "vpc-1"
  description = "The VPC's id."
}

output "secret" {
  value     = "x"
  sensitive = true
}
"""

MAIN = """\
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
"""

# Each payload would set window.pwned (and the title) if the README's HTML ran in the page.
HOSTILE_README = """\
# Evil

A README that tries to run script.

<script>window.pwned = "script"; document.title = "pwned";</script>

<img src="https://example.invalid/x.png" alt="bad image" onerror="window.pwned = 'onerror'; document.title = 'pwned'">

<svg onload="window.pwned = 'svg'"><circle r="1"></circle></svg>

[click me](javascript:window.pwned='markdown-link')

<a href="javascript:window.pwned='html-link'" id="js-link">also click me</a>

<a href=" JaVaScRiPt:window.pwned='spaced'">and me</a>

<iframe src="javascript:window.parent.pwned='iframe'"></iframe>

<form action="javascript:window.pwned='form'"><button>submit</button></form>

<style>body { display: none; }</style>
"""


def write_catalogue(root: Path, auth: bool = True) -> Path:
    """The repositories and release folders under `root`, and its registry.yaml (returned)."""
    if not (root / "vpc").exists():
        vpc = GitRepo(root / "vpc")
        files = {
            "README.md": VPC_README,
            "variables.tf": VARIABLES,
            "outputs.tf": OUTPUTS,
            "main.tf": MAIN,
            "modules/subnet/main.tf": 'variable "cidr" {\n  type = string\n}\n',
            "modules/subnet/README.md": "# Subnet\n\nOne subnet.\n",
            "examples/basic/main.tf": 'module "vpc" {\n  source = "../.."\n  cidr = "10.0.0.0/16"\n}\n',
        }
        vpc.release("v1.2.0", files)
        vpc.release("v1.3.0", {"README.md": VPC_README + "\nNow with flow logs.\n"})
        GitRepo(root / "evil").release(
            "v0.1.0", {"README.md": HOSTILE_README, "main.tf": 'output "x" { value = 1 }\n'}
        )
        GitRepo(root / "db").release(
            "v2.0.0",
            {"README.md": "# Database\n\nA private database module.\n", "main.tf": ""},
        )
        GitRepo(root / "broken").release(
            "v1.0.0",
            {"README.md": "# Broken\n\nOne file does not parse.\n", "main.tf": "variable {\n"},
        )
        write_key(new_key("gitreg"), root / "gitreg.asc")
        write_release(root / "widget" / "1.0.0", "widget", "1.0.0", ("linux_amd64", "darwin_arm64"))
    digest = hashlib.sha256(TOKEN.encode()).hexdigest()
    auth_section = (
        "auth:\n  public: [open]\n  tokens:\n"
        f'    - {{name: reader, token_sha256: "{digest}", read: [secret]}}\n'
    )
    path = root / "registry.yaml"
    path.write_text(
        f"""\
hostname: {HOSTNAME}
cache_dir: cache
modules:
  - {{namespace: open, name: vpc, system: aws, repo: {root / "vpc"}}}
  - {{namespace: open, name: evil, system: generic, repo: {root / "evil"}}}
  - {{namespace: open, name: broken, system: generic, repo: {root / "broken"}}}
  - {{namespace: secret, name: db, system: aws, repo: {root / "db"}}}
signing: {{keys: [gitreg.asc]}}
providers:
  - {{namespace: open, type: widget, artifacts: widget}}
mirror: {{read_through: false}}
{auth_section if auth else ""}"""
    )
    return path
