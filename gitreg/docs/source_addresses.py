"""Provider and module source addresses as Terraform reads them, for the bill of materials.

A provider's source is normalised as Terraform does (`hashicorp/aws` is
`registry.terraform.io/hashicorp/aws`; no source at all is `hashicorp/<local name>`). A module's
is one of Terraform's three kinds: a local path, a registry address (`[HOST/]NS/NAME/SYSTEM`,
Terraform's own parser's rules) or a remote one, which go-getter fetches. Credentials a source
may carry (a user or password in a URL, go-getter's `sshkey` or cloud keys in its query) are
left out of what is shown."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import parse_qsl, urlencode

from gitreg.address import ModuleAddress, provider_problem

PUBLIC_REGISTRY = "registry.terraform.io"  # what Terraform assumes when a source names no host
BUILTIN = "terraform.io/builtin/terraform"  # the provider Terraform itself holds

SourceKind = Literal["local", "registry", "remote"]

_FORCED = re.compile(r"[A-Za-z0-9]+::")  # go-getter's forced getter: `git::`, `s3::`
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/@?#]*@")
_SCP_USER = re.compile(r"[^@/:]+@(?=[^/:]+:)")  # `git@` of `git@host:path`
_HOST = re.compile(r"[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?(?::[0-9]{1,5})?")
# Query parameters that say what is fetched; any other may carry a secret (go-getter's
# `sshkey`, `aws_access_key_secret`, a token of a signed URL), and is left out.
_SHOWN_QUERY = frozenset(("ref", "rev", "depth", "archive", "checksum", "region", "version"))
_GO_GETTER_HOSTS = frozenset(("github.com", "bitbucket.org"))  # never registry hosts


@dataclass(frozen=True)
class ModuleSource:
    """A `module` block's source: its kind, and what is shown of it (credentials left out; a
    registry address with its host). For a registry address, its host and module."""

    kind: SourceKind
    shown: str
    host: str = ""
    module: ModuleAddress | None = None
    subdir: str = ""


def provider_address(local_name: str, source: str) -> tuple[str, str]:
    """A `required_providers` entry's provider address as Terraform normalises it, and "", or
    the source as written and why Terraform would not read it."""
    if not source:
        if local_name == "terraform":
            return BUILTIN, ""
        source = local_name  # Terraform's implied provider: `hashicorp/<local name>`
    parts = source.split("/")
    if len(parts) > 3:
        return source, f"{source!r} has {len(parts)} parts; a provider source has at most three"
    host = normalised_host(parts[0]) if len(parts) == 3 else PUBLIC_REGISTRY
    namespace = parts[-2].lower() if len(parts) >= 2 else "hashicorp"
    provider_type = parts[-1].lower()
    if not _HOST.fullmatch(host):
        return source, f"{parts[0]!r} is not a registry host name"
    for problem in (
        provider_problem(namespace, "namespace"),
        provider_problem(provider_type, "type"),
    ):
        if problem:
            return source, problem
    return f"{host}/{namespace}/{provider_type}", ""


def module_source(source: str) -> ModuleSource:
    """A `module` block's source, read as Terraform's `addrs.ParseModuleSource` reads it."""
    if source.startswith(("./", "../", ".\\", "..\\")):
        return ModuleSource("local", source)
    registry = _registry_source(source)
    if registry is not None:
        return registry
    return ModuleSource("remote", without_credentials(source))


def normalised_host(host: str) -> str:
    """A host name as Terraform compares them: lower case, without https' default port."""
    return host.lower().removesuffix(":443")


def without_credentials(source: str) -> str:
    """`source` with any user and password of its URL, and query parameters other than those
    that say what is fetched, left out."""
    forced = _FORCED.match(source)
    prefix, rest = (forced.group(), source[forced.end() :]) if forced else ("", source)
    rest = _USERINFO.sub(r"\g<scheme>", rest, count=1)
    if "://" not in rest:
        rest = _SCP_USER.sub("", rest, count=1)
    base, mark, query = rest.partition("?")
    if mark:
        kept = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k in _SHOWN_QUERY]
        base += f"?{urlencode(kept, safe=':/')}" if kept else ""
    return prefix + base


def _registry_source(source: str) -> ModuleSource | None:
    """`[HOST/]NS/NAME/SYSTEM[//SUBDIR]` as Terraform's registry address parser takes it, or
    None: then Terraform hands the source to go-getter."""
    if "::" in source or "://" in source or "?" in source:
        return None
    address, _, subdir = source.partition("//")
    parts = address.split("/")
    if len(parts) == 4:
        host = normalised_host(parts[0])
        if not _HOST.fullmatch(host) or host in _GO_GETTER_HOSTS:
            return None
        parts = parts[1:]
    elif len(parts) == 3:
        host = PUBLIC_REGISTRY
    else:
        return None
    try:
        module = ModuleAddress.parse(*parts)
    except ValueError:
        return None
    shown = f"{host}/{module}" + (f"//{subdir}" if subdir else "")
    return ModuleSource("registry", shown, host, module, subdir)
