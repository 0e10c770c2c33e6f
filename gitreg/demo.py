"""`gitreg demo`: a throwaway certificate for the catalog, and what to tell Terraform."""

from __future__ import annotations

from gitreg.catalog import Catalog, Listen, TlsFiles
from gitreg.tlscert import ensure_local_tls


def prepare_demo(catalog: Catalog, listen: Listen) -> TlsFiles:
    material = ensure_local_tls(catalog.cache_dir / "demo-tls")
    host = "127.0.0.1" if listen.host in ("0.0.0.0", "::") else listen.host
    base = f"https://{host}:{listen.port}"
    first = catalog.modules[0].address if catalog.modules else "NAMESPACE/NAME/SYSTEM"
    print(
        f"""
gitreg demo: the registry in {catalog.source.name}, served at {base}

TLS: this is a throwaway local CA, made for this demo only: {material.ca_cert}
Terraform trusts it through the environment:

    export SSL_CERT_FILE={material.ca_cert}

(It replaces the system's CA list for that shell: fine for these modules; to reach public
registries from the same shell, point it at a bundle holding both.)

Module sources name the registry by a host with a dot, so use {host}:{listen.port}:

    module "example" {{
      source  = "{host}:{listen.port}/{first}"
      version = "~> 1.0"
    }}

To write the friendly hostname {catalog.hostname} instead, add to your Terraform CLI
config (~/.terraformrc, or the file TF_CLI_CONFIG_FILE names):

    host "{catalog.hostname}" {{
      services = {{ "modules.v1" = "{base}/v1/modules/" }}
    }}

Stop with Ctrl-C.
""",
        flush=True,
    )
    return TlsFiles(material.certfile, material.keyfile)
