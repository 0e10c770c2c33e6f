"""A registry whose hosted providers are used by its modules and by consumers' lock files, for
the provider dependents' tests: real Git repositories and release folders under one folder.

- providers `platform/widget` 1.0.0 and 1.1.0 (1.0.x deprecated), `secret/gadget` 1.0.0;
- `net` (module platform/net/aws): `required_providers` widget `~> 1.0` by this registry's
  address, and hashicorp/null;
- `team` (module secret/team/aws): widget `< 1.1.0`, the host in capitals;
- `live`, a consumer in platform: prod's lock file locks widget 1.0.0 (`~> 1.0`) and
  registry.terraform.io's null; stage's locks secret/gadget; broken's does not parse;
- `hush`, a consumer in secret: its lock file locks widget 1.1.0.
Readers: no token reads platform (public); READER reads secret too; OTHER reads elsewhere."""

from __future__ import annotations

from pathlib import Path

from tests.support.dependents_world import HOST, OTHER, READER, consumers_and_readers
from tests.support.gitrepo import GitRepo, module_files
from tests.support.provider_releases import new_key, write_key, write_release

__all__ = ["HOST", "OTHER", "READER", "lock_file", "write_provider_world"]


def lock_file(*locked: tuple[str, str, str]) -> str:
    """A `.terraform.lock.hcl` as `terraform init` writes it: (address, version, constraints)."""
    blocks = []
    for address, version, constraints in locked:
        wanted = f'\n  constraints = "{constraints}"' if constraints else ""
        blocks.append(
            f'provider "{address}" {{\n  version     = "{version}"{wanted}\n'
            '  hashes = [\n    "h1:AAAA",\n  ]\n}\n'
        )
    return '# This file is maintained automatically by "terraform init".\n\n' + "\n".join(blocks)


def _requires(**providers: tuple[str, str]) -> str:
    entries = "".join(
        f'    {name} = {{\n      source  = "{source}"\n'
        + (f'      version = "{version}"\n' if version else "")
        + "    }\n"
        for name, (source, version) in providers.items()
    )
    return f"terraform {{\n  required_providers {{\n{entries}  }}\n}}\n"


def write_provider_world(root: Path) -> Path:
    """The repositories, release folders and key under `root`, and its registry.yaml; returns
    that file's path."""
    write_key(new_key("gitreg"), root / "gitreg.asc")
    for version in ("1.0.0", "1.1.0"):
        write_release(root / "widget" / version, "widget", version, ("linux_amd64",))
    write_release(root / "gadget" / "1.0.0", "gadget", "1.0.0", ("linux_amd64",))
    net = GitRepo(root / "net")
    widget = f"{HOST}/platform/widget"
    uses = _requires(widget=(widget, "~> 1.0"), null=("hashicorp/null", "~> 3.0"))
    net.release("v1.0.0", module_files("net", "", uses))
    team = GitRepo(root / "team")
    team.release("v2.0.0", module_files("team", "", _requires(widget=(widget.upper(), "< 1.1.0"))))
    live = GitRepo(root / "live")
    live.write(
        {
            "prod/main.tf": uses,
            "prod/.terraform.lock.hcl": lock_file(
                (widget, "1.0.0", "~> 1.0"),
                ("registry.terraform.io/hashicorp/null", "3.2.2", "~> 3.0"),
            ),
            "stage/.terraform.lock.hcl": lock_file((f"{HOST}/secret/gadget", "1.0.0", "")),
            "broken/.terraform.lock.hcl": 'provider "x" {\n  version =\n',
        }
    )
    live.commit("infrastructure")
    hush = GitRepo(root / "hush")
    hush.write({".terraform.lock.hcl": lock_file((widget, "1.1.0", ">= 1.1.0"))})
    hush.commit("secret infrastructure")
    path = root / "registry.yaml"
    path.write_text(
        f"""
hostname: {HOST}
cache_dir: cache
mirror: {{read_through: false}}
signing: {{keys: [gitreg.asc]}}
modules:
  - {{namespace: platform, name: net, system: aws, repo: {net.path}}}
  - {{namespace: secret, name: team, system: aws, repo: {team.path}}}
providers:
  - {{namespace: platform, type: widget, artifacts: widget,
      deprecated: [{{versions: "< 1.1.0", reason: "1.0 drops tags: take 1.1"}}]}}
  - {{namespace: secret, type: gadget, artifacts: gadget}}
{consumers_and_readers(live.path, hush.path)}"""
    )
    return path
