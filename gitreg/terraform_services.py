"""The services this registry offers Terraform, and a CLI `host` block that names them.

Discovery answers the services. A Terraform CLI config's `host` block names them for a hostname
that does not lead here: `gitreg demo` prints it, and a module page shows it when the browser
reached the registry at another address. A host block replaces discovery for its hostname, so it
names `login.v1` too whenever sign-in is on: without it, `terraform login` says the host "does
not support Terraform tokens API"."""

from __future__ import annotations

import json

SERVICES = {"modules.v1": "/v1/modules/", "providers.v1": "/v1/providers/"}
LOGIN_CLIENT_ID = "terraform-cli"  # what login.v1 names, and Terraform sends back
LOGIN_PORTS = (10000, 10010)  # Terraform's local listener's ports (login.v1 `ports`)
AUTHORIZE, TOKEN = "/oauth/authorize", "/oauth/token"


def login_v1(base: str = "") -> dict[str, object]:
    """The `login.v1` service: gitreg's authorization and token endpoints, under `base` (a host
    block's `https://HOST:PORT`; discovery's are paths, which Terraform resolves itself)."""
    return {
        "client": LOGIN_CLIENT_ID,
        "grant_types": ["authz_code"],
        "authz": f"{base}{AUTHORIZE}",
        "token": f"{base}{TOKEN}",
        "ports": list(LOGIN_PORTS),
    }


def host_block(hostname: str, base: str, login: bool = False) -> str:
    """`host "HOSTNAME" { services = { ... } }` with each service at `base` (`https://HOST:PORT`),
    `login.v1` among them when `login`, aligned as `terraform fmt` aligns it."""
    quoted = {f'"{name}"': f"{base}{path}" for name, path in SERVICES.items()}
    width = max(map(len, quoted))
    lines = [f'    {name:<{width}} = "{url}"' for name, url in quoted.items()]
    if login:
        fields = {key: json.dumps(value) for key, value in login_v1(base).items()}
        indent = max(map(len, fields))
        lines.append('    "login.v1" = {')
        lines += [f"      {key:<{indent}} = {value}" for key, value in fields.items()]
        lines.append("    }")
    services = "\n".join(lines)
    return f'host "{hostname}" {{\n  services = {{\n{services}\n  }}\n}}'


def same_host(hostname: str, address: str) -> bool:
    """Whether a browser that reached the registry at `address` (a Host header: `name[:port]`)
    reached it by `hostname`, where Terraform looks for it (https: port 443 by default)."""

    def plain(text: str) -> str:
        text = text.strip().lower().rstrip(".")
        return text.removesuffix(":443")

    return plain(hostname) == plain(address)
