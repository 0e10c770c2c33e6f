"""`gitreg docs` as a user runs it: a real process on a real monorepo, its tables, and a clear
error (exit 2) for a module or version the registry does not have."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.gitrepo import GitRepo
from tests.support.servers import run_gitreg as gitreg

MODULE = {
    "README.md": "# VPC\n\n[![ci](https://ci/b.svg)](https://ci)\n\nMakes a *VPC*.\n",
    "versions.tf": (
        'terraform {\n  required_version = ">= 1.5"\n  required_providers {\n'
        '    aws = { source = "hashicorp/aws", version = ">= 5.0" }\n  }\n}\n'
    ),
    "variables.tf": (
        'variable "cidr" {\n  type = string\n  description = <<-EOT\n    The block.\n'
        "    Second line, not shown in the table.\n  EOT\n}\n"
        'variable "password" {\n  type = string\n  default = "x"\n  sensitive = true\n'
        '  nullable = false\n  description = "Bell \\u0007 and escape \\u001b[2J"\n}\n'
    ),
    "outputs.tf": 'output "vpc_id" {\n  value = 1\n  description = "The id"\n}\n',
    "broken.tf": 'variable "half" {\n',
    "modules/subnet/README.md": "One subnet.\n",
    "modules/subnet/main.tf": 'variable "zone" {}\n',
    "examples/basic/main.tf": 'module "vpc" {\n  source = "../.."\n}\n',
}


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    mono = GitRepo(tmp_path / "mono")
    mono.release("vpc/v1.0.0", {f"net/vpc/{k}": v for k, v in MODULE.items()})
    mono.release("vpc/v1.1.0", {"net/vpc/more.tf": 'output "arn" {\n  value = 2\n}\n'})
    (tmp_path / "registry.yaml").write_text(
        "hostname: registry.example.com\ncache_dir: cache\nmodules:\n"
        "  - {namespace: infra, name: vpc, system: aws, repo: mono, path: net/vpc, tags: 'vpc/v{version}'}\n"
    )
    return tmp_path / "registry.yaml"


def test_docs_prints_the_latest_version_as_tables(catalog: Path) -> None:
    done = gitreg("docs", "infra/vpc/aws", "--config", str(catalog))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("registry.example.com/infra/vpc/aws 1.1.0 (tag vpc/v1.1.0, commit ")
    assert lines[0].endswith(", 2023-11-14)")
    assert lines[2] == "Makes a VPC."
    assert '    source  = "registry.example.com/infra/vpc/aws"' in lines
    assert '    version = "~> 1.1"' in lines
    assert '    cidr = "..."' in lines  # the required input, as the page's snippet has it
    inputs = lines[lines.index("Inputs") + 1 : lines.index("Outputs") - 1]
    assert inputs[0].split() == ["NAME", "TYPE", "DEFAULT", "DESCRIPTION"]
    assert inputs[1].split() == ["cidr", "string", "(required)", "The", "block."]
    assert inputs[2].split()[:5] == ["password", "string", '"x"', "sensitive,", "not"]
    # Columns line up: each cell starts where its header does.
    assert inputs[1].index("(required)") == inputs[0].index("DEFAULT")
    assert inputs[2].index("Bell") == inputs[0].index("DESCRIPTION")
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout
    outputs = lines[lines.index("Outputs") + 1 : lines.index("Requirements") - 1]
    assert [line.split()[0] for line in outputs] == ["NAME", "arn", "vpc_id"]
    assert "  aws        hashicorp/aws  >= 5.0" in lines
    assert "  terraform                 >= 1.5" in lines
    assert any(line.split()[:3] == ["modules/subnet", "1", "input"] for line in lines)
    assert any(line.startswith("  examples/basic") for line in lines)
    assert "  net/vpc/broken.tf: syntax error at line 2, column 1: unexpected end of file" in lines


def test_docs_of_a_given_version_and_offline(catalog: Path) -> None:
    done = gitreg("docs", "infra/vpc/aws", "v1.0.0", "--config", str(catalog))
    assert done.returncode == 0, done.stderr
    assert " 1.0.0 (tag vpc/v1.0.0" in done.stdout.splitlines()[0]
    assert "arn" not in done.stdout
    # An older version's snippet asks for that version exactly, as its page does.
    assert '    version = "1.0.0"' in done.stdout.splitlines()
    again = gitreg("docs", "INFRA/vpc/aws", "1.0.0", "--offline", "--config", str(catalog))
    assert again.stdout == done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["infra/nope/aws"], "gitreg: infra/nope/aws: no such module in "),
        (["infra/vpc"], "gitreg: infra/vpc: give the module as NAMESPACE/NAME/SYSTEM"),
        (
            ["infra/vpc/aws", "3.0.0"],
            "gitreg: infra/vpc/aws 3.0.0: no such version (it has 1.1.0, 1.0.0)",
        ),
        (["infra/vpc/aws", "latest"], "gitreg: infra/vpc/aws latest: no such version"),
    ],
)
def test_an_unknown_module_or_version_is_a_clear_error(
    catalog: Path, args: list[str], message: str
) -> None:
    done = gitreg("docs", *args, "--config", str(catalog))
    assert done.returncode == 2
    assert done.stderr.startswith(message) and done.stderr.count("\n") == 1
    assert done.stdout == ""


def test_a_module_never_fetched_offline_has_no_versions(catalog: Path) -> None:
    done = gitreg("docs", "infra/vpc/aws", "--offline", "--config", str(catalog))
    assert done.returncode == 2
    assert "gitreg: infra/vpc/aws: has no versions: " in done.stderr


def test_docs_says_a_version_is_deprecated(catalog: Path) -> None:
    text = catalog.read_text().replace(
        "tags: 'vpc/v{version}'}",
        "tags: 'vpc/v{version}',\n      deprecated: [{versions: '< 1.1.0', reason: 'Use 1.1.'}]}",
    )
    catalog.write_text(text)
    old = gitreg("docs", "infra/vpc/aws", "1.0.0", "--config", str(catalog))
    assert old.returncode == 0, old.stderr
    assert old.stdout.splitlines()[1] == "Deprecated: Use 1.1. (it still installs)"
    newest = gitreg("docs", "infra/vpc/aws", "--offline", "--config", str(catalog))
    assert "Deprecated" not in newest.stdout
