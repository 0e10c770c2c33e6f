"""`gitreg demo`: the catalog served with a local CA and a certificate, and what to tell
Terraform."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import textwrap

from gitreg.catalog.model import Catalog
from gitreg.catalog.settings import Listen, TlsFiles
from gitreg.commands.endpoint import listen_flag
from gitreg.commands.serve import run_server
from gitreg.errors import StartupError
from gitreg.process.tlscert import TlsMaterial, ensure_local_tls, parse_host
from gitreg.terraform_services import host_block


def demo_tls(catalog: Catalog, listen: Listen) -> TlsMaterial:
    """The demo's CA and certificate in cache_dir/demo-tls, for localhost, 127.0.0.1 and the
    address it listens on; kept across runs, so SSL_CERT_FILE stays true."""
    hosts = dict.fromkeys(["localhost", "127.0.0.1"])
    if listen.host not in ("0.0.0.0", "::"):
        hosts[parse_host(listen.host)] = None
    return ensure_local_tls(catalog.cache_dir / "demo-tls", tuple(hosts))


def demo_banner(catalog: Catalog, listen: Listen, material: TlsMaterial) -> str:
    host = "127.0.0.1" if listen.host in ("0.0.0.0", "::") else listen.host
    address = f"[{host}]:{listen.port}" if ":" in host else f"{host}:{listen.port}"
    base = f"https://{address}"
    first = catalog.modules[0].address if catalog.modules else "NAMESPACE/NAME/SYSTEM"
    login = catalog.auth is not None and catalog.auth.login is not None
    block = textwrap.indent(host_block(catalog.server.hostname, base, login), "    ")
    return f"""
gitreg demo: the registry in {catalog.source.name}, served at {base}

TLS: a local CA made for this demo, {material.ca_cert} (its key beside it).
On Linux, Terraform trusts it through the environment:

    export SSL_CERT_FILE={material.ca_cert}

(It replaces the system's CA list for that shell: fine for these modules; to reach public
registries from the same shell, point it at a bundle holding both. On macOS and Windows,
Terraform ignores SSL_CERT_FILE: add the CA to the system's trust store, as
docs/own-registry.md shows.)

Module sources name the registry by a host with a dot, so use {address}:

    module "example" {{
      source  = "{address}/{first}"
      version = "~> 1.0"
    }}

    output "example" {{
      value = module.example
    }}

To write the friendly hostname {catalog.server.hostname} instead, for modules and providers, add to
your Terraform CLI config (~/.terraformrc, or the file TF_CLI_CONFIG_FILE names):

{block}

For `gitreg serve`, make a certificate with `gitreg cert --host NAME --out DIR`.
Stop with Ctrl-C.
"""


def demo(catalog: Catalog, args: argparse.Namespace) -> int:
    """Serve the catalog over HTTPS at `--listen` (or its own), with a throwaway certificate."""
    try:
        listen = listen_flag(args.listen) if args.listen else catalog.server.listen
    except StartupError as exc:
        print(f"gitreg: {exc}", file=sys.stderr)
        return exc.status
    material = demo_tls(catalog, listen)
    tls = TlsFiles(material.certfile, material.keyfile)
    banner = demo_banner(catalog, listen, material)
    catalog = dataclasses.replace(catalog, server=dataclasses.replace(catalog.server, tls=tls))
    return run_server(catalog, listen, tls, banner=banner)
