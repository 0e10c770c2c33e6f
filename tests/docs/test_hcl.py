"""The normaliser of python-hcl2's values: quotes, escapes, heredocs, `${...}`, labels, and
values rendered back as HCL; tables of what python-hcl2 8 hands back and what people read."""

from __future__ import annotations

import gc

import pytest

from gitreg.docs import hcl


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('"plain"', "plain"),
        ('"say \\"hi\\"\\n\\tthere \\\\ \\u00e9"', 'say "hi"\n\tthere \\ é'),
        ('"${var.name}-suffix"', "${var.name}-suffix"),
        ('"literal $${x} and %%{y}"', "literal ${x} and %{y}"),
        ('"<<-EOT\n    one\n      two\n  EOT"', "one\n  two"),  # raw heredoc, as v8 keeps it
        ('"<<EOT\n  kept\nEOT"', "  kept"),
        ('""', ""),
        ("${var.description}", "var.description"),
        ("${a}-${b}", "${a}-${b}"),  # not one expression: left as written
        (True, "true"),
        (3, "3"),
        (None, "null"),
    ],
)
def test_text(value: object, expected: str) -> None:
    assert hcl.text(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("string", "string"),
        ("${list(string)}", "list(string)"),
        ('"eu-west-1"', '"eu-west-1"'),
        ({"a": 1, '"b-c"': ['"x"', True], "__is_block__": True}, '{a = 1, "b-c" = ["x", true]}'),
        ({}, "{}"),
        ([], "[]"),
        (1.5, "1.5"),
        (False, "false"),
        (None, "null"),
        ('${{ a = "}" }}', '{ a = "}" }'),  # a brace inside a string does not end it
    ],
)
def test_render(value: object, expected: str) -> None:
    assert hcl.render(value) == expected


@pytest.mark.parametrize(
    ("value", "default", "expected"),
    [
        (True, False, True),
        (False, True, False),
        ("${var.secret}", False, False),
        (None, True, True),
    ],
)
def test_flag(value: object, default: bool, expected: bool) -> None:
    assert hcl.flag(value, default) is expected


def test_labels_lose_their_quotes() -> None:
    body = hcl.parse('variable "vpc" {}\nresource "aws_vpc" "this" {}\n')
    assert [name for name, _ in hcl.labelled(body, "variable")] == ["vpc"]
    assert hcl.label('"aws_vpc"') == "aws_vpc"


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ('variable "x" {\n  type = \n}\n', "syntax error at line 2, column 10"),
        ('variable "x" {\n', "syntax error at line 2, column 1: unexpected end of file"),
        ('output "y" {\n  value = 1 +\n}\n', "syntax error at line"),
        ('resource "a" "b" {\n  x = "unterminated\n}\n', "syntax error at line"),
        ("}}}\n", "syntax error at line 1"),
    ],
)
def test_syntax_errors_say_where(source: str, message: str) -> None:
    with pytest.raises(hcl.HclSyntaxError) as caught:
        hcl.parse(source)
    assert str(caught.value).startswith(message)


def test_an_escape_of_no_character_is_left_as_written() -> None:
    assert hcl.text('"\\ud800 and \\U00110000"') == "\\ud800 and \\U00110000"


_EVERY_KIND = """
terraform {
  required_version = ">= 1.5"
  required_providers {
    aws = { source = "hashicorp/aws", version = "~> 5.0" }
  }
}
# a comment
variable "tags" {
  type    = map(object({ name = string, count = optional(number, 1) }))
  default = { a = { name = "x" } }
}
locals {
  names = [for k, v in var.tags : upper(v.name) if v.count > 0]
  text  = <<-EOT
    hello ${var.tags["a"].name}
  EOT
}
resource "aws_s3_bucket" "this" {
  count  = length(local.names) > 0 ? 1 : 0
  bucket = "b-${count.index}"
  dynamic "grant" {
    iterator = g
    content { id = g.key }
  }
}
module "vpc" {
  source  = "registry.example.test/team/vpc/aws"
  version = "1.2.0"
}
"""


def test_a_parse_leaves_no_garbage_for_the_collector() -> None:
    # python-hcl2's nodes point back at their parents: each parse's tree, left to the collector,
    # stayed in memory while paced work held the collector off (a cold docs warming's peak).
    # (python-hcl2 drops a keyword used as a name, `for_each`, as four objects of their own.)
    hcl.parse(_EVERY_KIND)
    gc.collect()
    gc.disable()
    try:
        for _ in range(5):
            body = hcl.parse(_EVERY_KIND)
        assert gc.collect() == 0
    finally:
        gc.enable()
    assert [name for name, _ in hcl.labelled(body, "module")] == ["vpc"]
