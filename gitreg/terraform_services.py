"""The services this registry offers Terraform (what discovery answers), and the `host` block of
a Terraform CLI config that names them for a hostname that does not lead here: `gitreg demo`
prints it, and a module page shows it when the browser reached the registry at another address."""

from __future__ import annotations

SERVICES = {"modules.v1": "/v1/modules/", "providers.v1": "/v1/providers/"}


def host_block(hostname: str, base: str) -> str:
    """`host "HOSTNAME" { services = { ... } }` with each service at `base` (`https://HOST:PORT`),
    aligned as `terraform fmt` aligns it."""
    quoted = {f'"{name}"': f"{base}{path}" for name, path in SERVICES.items()}
    width = max(map(len, quoted))
    services = "\n".join(f'    {name:<{width}} = "{url}"' for name, url in quoted.items())
    return f'host "{hostname}" {{\n  services = {{\n{services}\n  }}\n}}'


def same_host(hostname: str, address: str) -> bool:
    """Whether a browser that reached the registry at `address` (a Host header: `name[:port]`)
    reached it by `hostname`, where Terraform looks for it (https: port 443 by default)."""

    def plain(text: str) -> str:
        text = text.strip().lower().rstrip(".")
        return text.removesuffix(":443")

    return plain(hostname) == plain(address)
