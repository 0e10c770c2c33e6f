"""What a module page tells Terraform users to write, as tables of cases: placeholders per type
constraint, the version constraint per version shown, the CLI `host` block per address the
browser used, and which of a monorepo's root examples call a module."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from gitreg.address import ModuleAddress
from gitreg.catalog.specs import ModuleSpec
from gitreg.docs.model import FolderDocs, Input, ModuleCall
from gitreg.git.location import RepoLocation
from gitreg.pages.placeholders import placeholder
from gitreg.pages.related import calling_examples, siblings
from gitreg.pages.usage import cli_host_block, constraint, module_snippet
from gitreg.terraform_services import host_block, same_host


@pytest.mark.parametrize(
    ("constraint_", "expected"),
    [
        ("", '"..."'),
        ("any", '"..."'),
        ("string", '"..."'),
        ("number", "0"),
        ("bool", "false"),
        ("list(string)", "[]"),
        ("set(number)", "[]"),
        ("map(object({a = string}))", "{}"),
        ("tuple([string, number, bool])", '["...", 0, false]'),
        ("tuple([])", "[]"),
        ("object({a = string, b = optional(number)})", '{ a = "..." }'),
        ('object({a = optional(list(string), ["x", "y"]), "b" = bool})', '{ "b" = false }'),
        ('object({a = optional(object({b = string}), { b = "z" })})', "{}"),
        (
            "object({inner = object({n = number, m = optional(bool, true)})})",
            "{ inner = { n = 0 } }",
        ),
        ("list(object({n = number}))", "[]"),
        ("string # note", "null"),  # not the type language: null, which a nullable input takes
        ("custom(string)", "null"),
        ("list(string", "null"),
    ],
)
def test_placeholders_by_type(constraint_: str, expected: str) -> None:
    assert placeholder(constraint_) == expected


@pytest.mark.parametrize(
    ("version", "newest", "expected"),
    [
        ("1.3.0", True, "~> 1.3"),
        ("1.2.0", False, "1.2.0"),
        ("2.0.0-rc.1", True, "2.0.0-rc.1"),
        ("2.0.0-rc.1", False, "2.0.0-rc.1"),
        ("1.3.0+build.5", True, "~> 1.3"),
    ],
)
def test_the_version_constraint_of_the_version_shown(
    version: str, newest: bool, expected: str
) -> None:
    assert constraint(version, newest) == expected


def test_the_snippet_lists_the_required_inputs_aligned() -> None:
    inputs = (
        Input("name", "string"),
        Input("optional", "string", default='"x"', required=False),
        Input("zones", "list(string)"),
    )
    assert module_snippet("my-net", "reg.example.com/a/my-net/aws", "~> 1.0", inputs) == (
        'module "my_net" {\n'
        '  source  = "reg.example.com/a/my-net/aws"\n'
        '  version = "~> 1.0"\n'
        "\n"
        '  name  = "..."\n'
        "  zones = []\n"
        "}"
    )
    assert "\n\n" not in module_snippet("n", "h.example/a/n/s", "1.0.0", inputs[1:2])


@pytest.mark.parametrize(
    ("address", "shown"),
    [
        ("registry.example.com", False),
        ("Registry.Example.com:443", False),
        ("registry.example.com.", False),
        ("registry.example.com:8443", True),
        ("127.0.0.1:8443", True),
        ("[::1]:8443", True),
        ("", False),
        ("evil.example/<script>", False),  # not a host and a port: no block
        ("a b", False),
    ],
)
def test_the_host_block_shows_where_the_browser_used_another_address(
    address: str, shown: bool
) -> None:
    block = cli_host_block("registry.example.com", address)
    assert bool(block) == shown
    if shown:
        assert block == host_block("registry.example.com", f"https://{address.lower()}")
        assert f'"modules.v1"   = "https://{address.lower()}/v1/modules/"' in block


def test_the_host_block_is_the_demos() -> None:
    assert host_block("registry.example.com", "https://127.0.0.1:8443") == (
        'host "registry.example.com" {\n'
        "  services = {\n"
        '    "modules.v1"   = "https://127.0.0.1:8443/v1/modules/"\n'
        '    "providers.v1" = "https://127.0.0.1:8443/v1/providers/"\n'
        "  }\n"
        "}"
    )
    assert same_host("registry.example.com", "REGISTRY.example.com:443")
    assert not same_host("registry.example.com", "registry.example.com:8443")


def test_with_sign_in_the_host_block_names_login_v1_as_terraform_fmt_writes_it() -> None:
    block = cli_host_block("registry.example.com", "127.0.0.1:8443", login=True)
    assert block == host_block("registry.example.com", "https://127.0.0.1:8443", login=True)
    assert block == (
        'host "registry.example.com" {\n'
        "  services = {\n"
        '    "modules.v1"   = "https://127.0.0.1:8443/v1/modules/"\n'
        '    "providers.v1" = "https://127.0.0.1:8443/v1/providers/"\n'
        '    "login.v1" = {\n'
        '      client      = "terraform-cli"\n'
        '      grant_types = ["authz_code"]\n'
        '      authz       = "https://127.0.0.1:8443/oauth/authorize"\n'
        '      token       = "https://127.0.0.1:8443/oauth/token"\n'
        "      ports       = [10000, 10010]\n"
        "    }\n"
        "  }\n"
        "}"
    )
    terraform = shutil.which("terraform")
    if terraform is not None:  # the block as `terraform fmt` would leave it
        formatted = subprocess.run(
            [terraform, "fmt", "-"], input=block + "\n", capture_output=True, text=True
        )
        assert formatted.stdout == block + "\n", formatted.stderr


def _spec(name: str, path: str) -> ModuleSpec:
    return ModuleSpec(
        ModuleAddress("infra", name, "aws"),
        RepoLocation.parse("https://git.example.com/mono.git", Path("/")),
        path,
    )


def _example(path: str, *sources: str) -> FolderDocs:
    calls = tuple(ModuleCall(f"m{i}", source) for i, source in enumerate(sources))
    return FolderDocs(path, module_calls=calls)


def test_the_root_examples_that_call_a_module() -> None:
    net = _spec("net", "modules/net")
    examples = (
        _example("../../examples/relative", "../../modules/net"),
        _example("../../examples/dotted", "./../../modules/net/"),
        _example("../../examples/other", "../../modules/dns"),
        _example("../../examples/git", "git::https://example.com/mono.git//modules/net?ref=v1"),
        _example("../../examples/registry", "registry.example.com/infra/net/aws"),
        _example("../../examples/elsewhere", "registry.example.com/infra/net2/aws"),
        _example("../../examples/none"),
    )
    found = [e.path for e in calling_examples(net, examples)]
    assert found == ["examples/relative", "examples/dotted", "examples/git", "examples/registry"]


def test_the_siblings_leave_the_module_out_and_are_sorted() -> None:
    net, dns, db = _spec("net", "modules/net"), _spec("dns", "modules/dns"), _spec("db", "db")
    assert [s.address for s in siblings(net, (net, dns, db))] == ["infra/db/aws", "infra/dns/aws"]
    assert siblings(net, (dns,))[0].url == "/modules/infra/dns/aws"
