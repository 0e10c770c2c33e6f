"""The `mirror:` section: the provider network mirror's folders, and what read-through may reach."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gitreg.catalog.secrets import SecretRef

# The origins read-through may read without being named in mirror.origins, and the hosts their
# providers' packages are downloaded from (HashiCorp's releases, GitHub's release assets).
PUBLIC_ORIGINS = ("registry.terraform.io", "registry.opentofu.org")
DOWNLOAD_HOSTS = (
    "releases.hashicorp.com",
    "github.com",
    "objects.githubusercontent.com",
    "release-assets.githubusercontent.com",
)


@dataclass(frozen=True)
class MirrorSettings:
    """The provider network mirror's sources besides the hosted providers, and what read-through
    may reach: the public origins and those named under `origins`, nothing else."""

    folders: tuple[Path, ...] = ()  # written by `terraform providers mirror`
    read_through: bool = False  # fetch from origin registries on a miss
    origins: tuple[tuple[str, str], ...] = ()  # hostname → base URL (https://hostname/ if listed)
    ca_file: Path | None = None  # the CA bundle that signs the origins' certificates
    tokens: tuple[tuple[str, SecretRef], ...] = ()  # hostname → its Bearer token's source
    download_hosts: tuple[str, ...] = DOWNLOAD_HOSTS  # besides the origins': https, port 443
    workers: int = 16  # threads read-through may hold at once, across all origins
    per_origin: int = 4  # ... of them for one origin
    deadline: float = 30.0  # seconds for one index.json or VERSION.json, every origin request in it
    download_deadline: float = 600.0  # seconds for one package, connect to last byte

    def origin_url(self, hostname: str) -> str:
        return dict(self.origins).get(hostname, f"https://{hostname}/")

    def token(self, hostname: str) -> SecretRef | None:
        return dict(self.tokens).get(hostname)

    @property
    def named(self) -> frozenset[str]:
        """The hostnames registry.yaml names under mirror.origins, in any form."""
        return frozenset(h for h, _ in self.origins) | {h for h, _ in self.tokens}
