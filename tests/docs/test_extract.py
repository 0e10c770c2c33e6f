"""The extraction of a module's docs from its files, on shapes real modules have: typed objects
with optional attributes, heredoc descriptions, sensitive and non-nullable inputs, validation
blocks, variables over several files, `deprecated`, a file that does not parse, an empty module,
submodules and examples."""

from __future__ import annotations

from gitreg.docs.extract import module_docs
from gitreg.docs.model import (
    FolderDocs,
    Input,
    ModuleCall,
    ModuleDocs,
    Output,
    ParseProblem,
    ProviderRequirement,
    Resource,
)
from gitreg.git.trees import DocFile


def _docs(files: dict[str, str | None], folder: str = "") -> ModuleDocs:
    listed = [
        DocFile(path, None if text is None else text.encode()) for path, text in files.items()
    ]
    return module_docs(sorted(listed), commit="c0ffee", folder=folder, commit_time=42)


def _root(files: dict[str, str | None]) -> FolderDocs:
    return _docs(files).root


def test_a_typed_object_with_optional_attributes() -> None:
    root = _root(
        {
            "variables.tf": """
variable "network" {
  description = "The network to make"
  type = object({
    cidr    = string
    azs     = optional(list(string), ["eu-west-1a"])
    tags    = optional(map(string), {})
    nat     = optional(object({ enabled = bool, count = optional(number, 1) }))
  })
}
"""
        }
    )
    assert root.inputs == (
        Input(
            name="network",
            type='object({cidr = string, azs = optional(list(string), ["eu-west-1a"]), '
            "tags = optional(map(string), {}), "
            "nat = optional(object({enabled = bool, count = optional(number, 1)}))})",
            description="The network to make",
        ),
    )


def test_heredoc_descriptions_lose_their_indentation() -> None:
    root = _root(
        {
            "main.tf": """
variable "policy" {
  type        = string
  description = <<-EOT
    The IAM policy, as JSON.
      Indented lines keep what they have beyond the common indentation.
  EOT
}
output "arn" {
  value       = "x"
  description = <<EOF
Raw heredoc: kept as written.
EOF
}
"""
        }
    )
    assert root.inputs[0].description == (
        "The IAM policy, as JSON.\n"
        "  Indented lines keep what they have beyond the common indentation."
    )
    assert root.outputs[0].description == "Raw heredoc: kept as written."


def test_sensitive_nullable_deprecated_and_validation() -> None:
    root = _root(
        {
            "main.tf": """
variable "password" {
  type      = string
  sensitive = true
  nullable  = false
  validation {
    condition     = length(var.password) >= 16
    error_message = "At least 16 characters."
  }
  validation {
    condition     = can(regex("[0-9]", var.password))
    error_message = "At least one digit."
  }
}
variable "old_name" {
  type       = string
  default    = null
  deprecated = "Use name instead."
}
variable "flag_from_expression" {
  type      = bool
  default   = false
  sensitive = var.hide
}
output "secret" {
  value      = var.password
  sensitive  = true
  deprecated = "Read secret_arn."
}
"""
        }
    )
    assert root.inputs == (
        Input(name="flag_from_expression", type="bool", default="false", required=False),
        Input(
            name="old_name",
            type="string",
            default="null",
            required=False,
            deprecated="Use name instead.",
        ),
        Input(name="password", type="string", sensitive=True, nullable=False),
    )
    assert root.outputs == (Output("secret", sensitive=True, deprecated="Read secret_arn."),)
    assert root.problems == ()


def test_defaults_are_hcl_as_written() -> None:
    root = _root(
        {
            "main.tf": """
variable "region" { default = "eu-west-1" }
variable "count_of" { default = 3 }
variable "ratio" { default = 0.5 }
variable "zones" { default = ["a", "b"] }
variable "tags" {
  default = {
    Team  = "net"
    "cost-centre" = 42
  }
}
variable "computed" { default = "${upper("x")}-y" }
variable "empty" { default = "" }
"""
        }
    )
    assert {i.name: i.default for i in root.inputs} == {
        "count_of": "3",
        "computed": '"${upper("x")}-y"',
        "empty": '""',
        "ratio": "0.5",
        "region": '"eu-west-1"',
        "tags": '{Team = "net", "cost-centre" = 42}',
        "zones": '["a", "b"]',
    }
    assert not any(i.required for i in root.inputs)


def test_variables_across_several_files_merge_and_a_second_declaration_is_a_problem() -> None:
    root = _root(
        {
            "a.tf": 'variable "zeta" {}\nvariable "alpha" { default = 1 }\n',
            "b.tf": 'variable "mid" { type = number }\noutput "o1" { value = 1 }\n',
            "c.tf": 'variable "alpha" { default = 2 }\noutput "o0" { value = 0 }\n',
        }
    )
    assert [(i.name, i.default) for i in root.inputs] == [
        ("alpha", "1"),
        ("mid", None),
        ("zeta", None),
    ]
    assert [o.name for o in root.outputs] == ["o0", "o1"]
    assert root.problems == (ParseProblem("c.tf", 'variable "alpha" is declared twice'),)


def test_a_file_that_does_not_parse_is_named_and_the_rest_documented() -> None:
    docs = _docs(
        {
            "README.md": "# Net\n\nThe network.\n",
            "broken.tf": 'variable "half" {\n  type = string\n',
            "latin1.tf": None,  # replaced below
            "main.tf": 'variable "whole" {}\n',
        },
        folder="infra/net",
    )
    assert [i.name for i in docs.root.inputs] == ["whole"]
    assert docs.root.description == "The network."
    assert [p.path for p in docs.root.problems] == ["infra/net/broken.tf", "infra/net/latin1.tf"]
    assert docs.root.problems[0].message.startswith("syntax error at line 3")
    assert "not read" in docs.root.problems[1].message  # too large (None): left out, said so
    not_utf8 = module_docs([DocFile("x.tf", b'variable "caf\xe9" {}')], commit="c")
    assert not_utf8.root.problems == (ParseProblem("x.tf", "not UTF-8 text"),)


def test_an_empty_module() -> None:
    docs = _docs({})
    assert docs == ModuleDocs(commit="c0ffee", root=FolderDocs(path=""), commit_time=42)
    assert _root({"main.tf": "", "README.md": ""}) == FolderDocs(path="")
    assert _root({"main.tf": "# only a comment\n"}) == FolderDocs(path="")


def test_providers_calls_and_resources() -> None:
    root = _root(
        {
            "versions.tf": """
terraform {
  required_version = ">= 1.5.0"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.0, < 6.0"
      configuration_aliases = [aws.peer]
    }
    legacy = "~> 1.0"
  }
}
""",
            "more_versions.tf": """
terraform {
  required_providers {
    random = { source = "hashicorp/random" }
  }
}
""",
            "main.tf": """
module "labels" {
  source  = "cloudposse/label/null"
  version = "0.25.0"
}
module "local" {
  source = "./modules/x"
}
resource "aws_vpc" "this" {
  count = var.create ? 1 : 0
}
resource "aws_subnet" "private" {}
resource "aws_subnet" "public" {}
data "aws_availability_zones" "available" {
  state = "available"
}
""",
        }
    )
    assert root.terraform_version == ">= 1.5.0"
    assert root.providers == (
        ProviderRequirement("aws", "hashicorp/aws", ">= 5.0, < 6.0"),
        ProviderRequirement("legacy", "", "~> 1.0"),
        ProviderRequirement("random", "hashicorp/random", ""),
    )
    assert root.module_calls == (
        ModuleCall("labels", "cloudposse/label/null", "0.25.0"),
        ModuleCall("local", "./modules/x", ""),
    )
    assert root.resources == (
        Resource("aws_availability_zones", "available", "data"),
        Resource("aws_subnet", "private"),
        Resource("aws_subnet", "public"),
        Resource("aws_vpc", "this"),
    )


def test_submodules_and_examples_have_the_same_fields() -> None:
    docs = _docs(
        {
            "main.tf": 'module "sub" {\n  source = "./modules/sub"\n}\n',
            "modules/sub/README.md": "The part.\n",
            "modules/sub/main.tf": 'variable "x" {\n  type = string\n}\noutput "y" { value = 1 }\n',
            "modules/sub/bad.tf": "variable {",
            "modules/other/main.tf": 'resource "null_resource" "n" {}\n',
            "examples/complete/README.md": "# Complete\n\nEvery option.\n",
            "examples/complete/main.tf": 'module "this" {\n  source = "../../"\n}\n',
        },
        folder="mod",
    )
    assert [s.path for s in docs.submodules] == ["modules/other", "modules/sub"]
    sub = docs.submodules[1]
    assert sub.description == "The part."
    assert [i.name for i in sub.inputs] == ["x"] and [o.name for o in sub.outputs] == ["y"]
    assert [p.path for p in sub.problems] == ["mod/modules/sub/bad.tf"]
    assert docs.submodules[0].resources == (Resource("null_resource", "n"),)
    (example,) = docs.examples
    assert example.path == "examples/complete"
    assert example.description == "Every option."
    assert example.module_calls == (ModuleCall("this", "../../"),)
    assert docs.root.problems == ()


def test_odd_shapes_are_documented_as_far_as_they_go() -> None:
    root = _root(
        {
            "odd.tf": """
variable "two" "labels" {}
variable "typed_legacy" { type = "string" }
resource "one_label" {}
output "no_value" {}
module "no_source" {}
terraform { required_providers {} }
terraform {}
locals {}
moved {
  from = a.b
  to   = a.c
}
"""
        }
    )
    assert [i.name for i in root.inputs] == ["two", "typed_legacy"]
    assert root.inputs[1].type == '"string"'  # before 0.12, types were strings: as written
    assert root.outputs == (Output("no_value"),)
    assert root.module_calls == (ModuleCall("no_source", ""),)
    assert root.resources == () and root.providers == () and root.problems == ()


def test_the_repository_root_examples_of_a_module_in_a_folder() -> None:
    docs = _docs(
        {
            "main.tf": 'variable "x" {}\n',
            "examples/own/main.tf": 'module "m" {\n  source = "../.."\n}\n',
            "../../examples/net/main.tf": 'module "n" {\n  source = "../../modules/net"\n}\n',
            "../../examples/net/broken.tf": "module {",
        },
        folder="modules/net",
    )
    assert [e.path for e in docs.examples] == ["examples/own"]
    (root_example,) = docs.repository_examples
    assert root_example.path == "../../examples/net"
    assert root_example.module_calls == (ModuleCall("n", "../../modules/net"),)
    # Named by its path in the repository, as every problem is.
    assert [p.path for p in root_example.problems] == ["examples/net/broken.tf"]
