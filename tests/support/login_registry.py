"""A registry that signs people in through the stand-in OpenID provider: its registry.yaml, with
an auth.login section against the provider and one repository released at v1.0.0, and that
registry served over TLS by the real app."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from gitreg.catalog.load import load_catalog
from gitreg.catalog.settings import TlsFiles
from gitreg.process.tlscert import TlsMaterial
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer, free_port

SECRET_ENV = "GITREG_TEST_OIDC_SECRET"  # auth.login.client_secret_env
PLATFORM_READS_PLATFORM = "{match: {groups: platform}, read: [platform]}"


def claim_line(rule: str) -> str:
    """The line of registry.yaml that `rule`, one of auth.login.claims, is written as."""
    return f"      - {rule}\n"


@dataclass(frozen=True)
class LoginCatalog:
    """What a test's registry.yaml says beyond what every sign-in test's says (the hostname and
    public_url of 127.0.0.1:PORT, no read-through, the provider as auth.login.issuer, client id
    `gitreg` and its secret in SECRET_ENV, the tests' CA as its ca_file)."""

    modules: tuple[str, ...] = ("platform/net/aws",)  # addresses, all of the one repository
    tokens: Mapping[str, str] = field(default_factory=dict)  # name: token_sha256, reading platform
    name: str | None = "Acme SSO"  # auth.login.name
    scopes: tuple[str, ...] | None = ("openid", "email")  # None: the default scopes
    claims: tuple[str, ...] = (PLATFORM_READS_PLATFORM,)
    login: tuple[str, ...] = ()  # further keys of auth.login, one a line: "token_ttl: 30d"
    top: tuple[str, ...] = ()  # further top-level lines: "oci: {enabled: true}"
    hostname: str | None = None  # 127.0.0.1:PORT when None

    def text(self, repo: Path, issuer: str, port: int, ca: Path) -> str:
        """registry.yaml, its modules in `repo`, signing in at `issuer`, served on `port`."""
        modules = "".join(
            f"  - {{namespace: {namespace}, name: {name}, system: {system}, repo: {repo}}}\n"
            for namespace, name, system in (address.split("/") for address in self.modules)
        )
        tokens = "".join(
            f'    - {{name: {name}, token_sha256: "{sha256}", read: [platform]}}\n'
            for name, sha256 in self.tokens.items()
        )
        login = [
            *([f"name: {self.name}"] if self.name else []),
            f"issuer: {issuer}",
            "client_id: gitreg",
            f"client_secret_env: {SECRET_ENV}",
            *([f"scopes: [{', '.join(self.scopes)}]"] if self.scopes is not None else []),
            *self.login,
            f"ca_file: {ca}",
            "claims:",
        ]
        return (
            "cache_dir: cache\n"
            f"hostname: {self.hostname or f'127.0.0.1:{port}'}\n"
            f"public_url: https://127.0.0.1:{port}\n"
            f"modules:\n{modules}"
            "mirror: {read_through: false}\n"
            + "".join(f"{line}\n" for line in self.top)
            + "auth:\n"
            + (f"  tokens:\n{tokens}" if tokens else "")
            + "  login:\n"
            + "".join(f"    {line}\n" for line in login)
            + "".join(claim_line(rule) for rule in self.claims)
        )

    def write(self, root: Path, issuer: str, port: int, ca: Path, repo: Path | None = None) -> Path:
        """`text` written as `root`/registry.yaml, its modules in `repo`, else in a repository
        made in `root`/repo and released at v1.0.0; returns its path."""
        if repo is None:
            made = GitRepo(root / "repo")
            made.release("v1.0.0", module_files("1.0.0"))
            repo = made.path
        path = root / "registry.yaml"
        path.write_text(self.text(repo, issuer, port, ca))
        return path


@contextlib.contextmanager
def login_registry(
    root: Path,
    issuer: str,
    tls: TlsMaterial,
    catalog: LoginCatalog | None = None,
    *,
    secret: str = "the-client-secret-of-gitreg",
    access_log: bool = False,
) -> Iterator[tuple[RegistryServer, Path]]:
    """`catalog` written in `root` (`LoginCatalog.write`, trusting `tls`'s CA) and served over TLS
    with `tls`'s certificate, the client secret `secret` in SECRET_ENV until the block ends:
    the server, and the registry.yaml's path."""
    port = free_port()
    config = (catalog or LoginCatalog()).write(root, issuer, port, tls.ca_cert)
    with pytest.MonkeyPatch.context() as env:
        env.setenv(SECRET_ENV, secret)
        files = TlsFiles(tls.certfile, tls.keyfile)
        with RegistryServer(
            load_catalog(config), files, port=port, access_log=access_log
        ) as server:
            yield server, config
