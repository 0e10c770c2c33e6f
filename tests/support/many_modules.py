"""A catalogue of many modules, for the paging of `/` and `/v1/modules`: hundreds of modules
that cost two clones (each module the root of one of two repositories, released once).

Namespaces: `big` (BIG modules, `mod0000` on, systems `aws` and `google` in turn, and the hosted
provider `big/widget`), TEAMS namespaces `team-000` on of one module each, and `secret` (SECRET
modules, in a repository of its own). With auth, `secret` is private (TOKEN reads it), every
other namespace public."""

from __future__ import annotations

import hashlib
from pathlib import Path

from tests.support.gitrepo import GitRepo, module_files
from tests.support.provider_releases import new_key, write_key, write_release

TOKEN = "gitreg_paging-reader-token-0123456789"  # reads `secret`
BIG = 230
TEAMS = 120
SECRET = 150


def big_system(n: int) -> str:
    return "aws" if n % 2 == 0 else "google"


def write_many(root: Path, auth: bool = True) -> Path:
    """The repositories and the release folder under `root`, and its registry.yaml (returned)."""
    GitRepo(root / "public").release("v1.0.0", module_files("1.0.0"))
    GitRepo(root / "private").release("v2.0.0", module_files("2.0.0"))
    write_key(new_key("gitreg"), root / "gitreg.asc")
    write_release(root / "widget" / "1.0.0", "widget", "1.0.0", ("linux_amd64",))
    public, private = root / "public", root / "private"
    lines = [
        f"  - {{namespace: big, name: mod{n:04d}, system: {big_system(n)}, repo: {public}}}"
        for n in range(BIG)
    ]
    lines += [
        f"  - {{namespace: team-{n:03d}, name: net, system: aws, repo: {public}}}"
        for n in range(TEAMS)
    ]
    lines += [
        f"  - {{namespace: secret, name: db{n:04d}, system: aws, repo: {private}}}"
        for n in range(SECRET)
    ]
    digest = hashlib.sha256(TOKEN.encode()).hexdigest()
    auth_section = (
        "auth:\n  public: [big, team-*]\n  tokens:\n"
        f'    - {{name: reader, token_sha256: "{digest}", read: [secret]}}\n'
    )
    path = root / "registry.yaml"
    path.write_text(
        "hostname: registry.example.test\ncache_dir: cache\nmodules:\n"
        + "\n".join(lines)
        + "\nsigning: {keys: [gitreg.asc]}\n"
        + "providers:\n  - {namespace: big, type: widget, artifacts: widget}\n"
        + "mirror: {read_through: false}\n"
        + (auth_section if auth else "")
    )
    return path
