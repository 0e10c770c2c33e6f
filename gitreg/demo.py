"""`gitreg demo`: build the example repositories and a throwaway certificate, then explain.

This is the one module besides gitsource that drives Git: it writes repositories, which the
registry itself never does.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import git
import yaml

from gitreg.catalog import Catalog, Listen, TlsFiles
from gitreg.tlscert import ensure_local_tls

# Fixed identities and dates: the example commits, and so their archives, are the same everywhere.
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "gitreg demo",
    "GIT_AUTHOR_EMAIL": "demo@gitreg.invalid",
    "GIT_COMMITTER_NAME": "gitreg demo",
    "GIT_COMMITTER_EMAIL": "demo@gitreg.invalid",
}
_EPOCH = 1_767_225_600  # 2026-01-01T00:00:00Z


def build_examples(examples: Path) -> list[Path]:
    """Create the repositories releases.yaml describes, unless they exist already."""
    plan: dict[str, Any] = yaml.safe_load((examples / "releases.yaml").read_text())
    built = []
    for repository in plan["repositories"]:
        target = examples / "repos" / repository["name"]
        if not (target / ".git").is_dir():
            _build(examples / repository["name"], repository["releases"], target)
        built.append(target)
    return built


def _build(source: Path, releases: list[dict[str, Any]], target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    repo = git.Repo.init(work, initial_branch="main")
    _copy(source, work, "", "0.0.0-unreleased")
    _commit(repo, "Initial layout", 0)
    for n, release in enumerate(releases, start=1):
        _copy(source, work, release.get("path", ""), release["version"])
        _commit(repo, f"Release {release['tag']}", n)
        message = f"Release {release['version']}" if release.get("annotated") else None
        with repo.git.custom_environment(**_dated(n)):
            repo.create_tag(release["tag"], message=message)
    os.replace(work, target)  # a half-built repository never appears under its name


def _copy(source: Path, work: Path, folder: str, version: str) -> None:
    for path in sorted((source / folder).rglob("*")):
        if path.is_file():
            destination = work / path.relative_to(source)
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_text(path.read_text().replace("__VERSION__", version))


def _commit(repo: git.Repo, message: str, n: int) -> None:
    repo.git.add("--all")
    with repo.git.custom_environment(**_dated(n)):
        repo.git.commit("--allow-empty", "-m", message)


def _dated(n: int) -> dict[str, str]:
    date = f"{_EPOCH + n * 86400} +0000"
    return {**_GIT_ENV, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}


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
