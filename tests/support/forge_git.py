"""A forge's Git side for tests: repositories made with their releases, published bare under one
folder that a real `git http-backend` serves over HTTPS with a token (as a forge serves its
clones), each listed by a stand-in forge (tests/support/forges.py) with that clone URL; and the
`credentials` a user writes in registry.yaml for them.

    with forge_git(tmp_path, TOKEN, tls) as served:
        vpc = served.publish("platform/terraform-aws-vpc", [("v1.0.0", module_files("1.0.0"))])
        with StandInForge("gitlab", [vpc], token=TOKEN, tls=tls) as forge: ..."""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from gitreg.process.tlscert import TlsMaterial
from tests.support.forge_shapes import ForgeRepository
from tests.support.gitrepo import GitRepo, git
from tests.support.servers import GitHttpTap, bare_clone, git_http_server

Release = tuple[str, Mapping[str, str]]  # a tag, and the files its commit writes


@dataclass(frozen=True)
class ForgeGit:
    """The Git server's repositories: kept bare under `root`, served at `url` (HTTPS), made in
    work trees under `work`; `ca_file` signs its certificate."""

    root: Path
    url: str
    work: Path
    ca_file: Path

    def publish(
        self,
        path: str,
        releases: Sequence[Release],
        branch: str = "main",
        topics: Sequence[str] = (),
        archived: bool = False,
    ) -> ForgeRepository:
        """The repository at the forge's `path` (`group/name`), its `releases` committed and
        tagged in turn on `branch`, its default; as the forge lists it."""
        work = GitRepo(self.work / path)
        if branch != "main":
            git(work.path, "checkout", "-q", "-b", branch)
        for tag, files in releases:
            work.release(tag, dict(files))
        bare_clone(work.path, self.root / f"{path}.git")
        return ForgeRepository(
            path,
            topics=tuple(topics),
            archived=archived,
            default_branch=branch,
            clone_https=f"{self.url}/{path}.git",
        )

    @property
    def clone_hosts(self) -> str:
        """A source's `clone_hosts:` key, flow style, that lets its forge name this server's
        clone URLs: a forge serves its clones from its own address; here they are two servers."""
        return f"clone_hosts: ['{urlsplit(self.url).netloc}']"

    def delete(self, repository: ForgeRepository) -> None:
        """The repository gone from the Git server, as a deleted project's is."""
        shutil.rmtree(self.root / f"{repository.path}.git")

    def credentials(self, forge_url: str, token_env: str) -> str:
        """registry.yaml's `credentials:` for a forge at `forge_url` whose clones this server
        serves: its API trusted by the test CA, its clones by the CA and the token. (A forge
        serves both from one address, one entry; here they are two servers.)"""
        return (
            "credentials:\n"
            f"  - {{url: '{forge_url}', ca_file: '{self.ca_file}'}}\n"
            f"  - {{url: '{self.url}', token_env: {token_env}, ca_file: '{self.ca_file}'}}\n"
        )


@contextmanager
def forge_git(
    folder: Path, token: str, tls: TlsMaterial, tap: GitHttpTap | None = None
) -> Iterator[ForgeGit]:
    """A Git server over HTTPS, on 127.0.0.1, that takes `token` (any user name), serving
    `folder/served`; `tap` records what it is asked."""
    root = folder / "served"
    root.mkdir(parents=True, exist_ok=True)
    with git_http_server(root, token=token, tls=tls, tap=tap) as url:
        yield ForgeGit(root, url, folder / "work", tls.ca_cert)
