"""Signed tags for tests, made with the real `ssh-keygen` and `gpg`: keys, the files that list
them (an allowed-signers file, an exported OpenPGP key), and tags signed in a `GitRepo`."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.gitrepo import GitRepo, git


@dataclass(frozen=True)
class SshSigner:
    principal: str
    key: Path  # the private key; its public half beside it, `.pub`

    def allowed_line(self) -> str:
        keytype, blob = self.key.with_suffix(".pub").read_text().split()[:2]
        return f'{self.principal} namespaces="git" {keytype} {blob}\n'

    def sign(self, repo: GitRepo, tag: str) -> None:
        pub = str(self.key.with_suffix(".pub"))
        args = ["-c", "gpg.format=ssh", "-c", f"user.signingkey={pub}"]
        git(repo.path, *args, "tag", "-s", "-m", f"release {tag}", tag)


def ssh_signer(folder: Path, principal: str) -> SshSigner:
    folder.mkdir(parents=True, exist_ok=True)
    key = folder / principal.split("@")[0]
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", principal, "-f", str(key)],
        check=True,
    )
    return SshSigner(principal, key)


def allowed_signers(path: Path, *signers: SshSigner) -> Path:
    path.write_text("".join(s.allowed_line() for s in signers))
    return path


@dataclass(frozen=True)
class PgpSigner:
    uid: str
    home: Path  # the GNUPGHOME holding its secret key

    def export(self, path: Path) -> Path:
        path.write_bytes(self._gpg("--armor", "--export", self.uid))
        return path

    def fingerprint(self) -> str:
        out = self._gpg("--with-colons", "--fingerprint", self.uid).decode()
        return next(line.split(":")[9] for line in out.splitlines() if line.startswith("fpr:"))

    def sign(self, repo: GitRepo, tag: str) -> None:
        subprocess.run(
            ["git", "-c", f"user.signingkey={self.uid}", "tag", "-s", "-m", f"release {tag}", tag],
            cwd=repo.path,
            env={**os.environ, **_IDENTITY, "GNUPGHOME": str(self.home)},
            check=True,
            capture_output=True,
        )

    def close(self) -> None:
        """End the gpg-agent that signing started for this home."""
        subprocess.run(["gpgconf", "--homedir", str(self.home), "--kill", "all"], check=False)

    def _gpg(self, *args: str) -> bytes:
        done = subprocess.run(
            ["gpg", "--batch", "--homedir", str(self.home), *args], check=True, capture_output=True
        )
        return done.stdout


_IDENTITY = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def pgp_signer(home: Path, uid: str) -> PgpSigner:
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    new_key = ["--passphrase", "", "--quick-gen-key", uid, "ed25519", "sign", "never"]
    subprocess.run(
        ["gpg", "--batch", "--homedir", str(home), *new_key],
        check=True,
        capture_output=True,
    )
    return PgpSigner(uid, home)


@dataclass(frozen=True)
class Signers:
    """Two SSH signers and two OpenPGP ones: alice and bob the trusted, mallory and eve not."""

    alice: SshSigner
    mallory: SshSigner
    bob: PgpSigner
    eve: PgpSigner


@contextmanager
def four_signers(root: Path) -> Iterator[Signers]:
    """alice, mallory, bob and eve, their keys under `root`; gpg's agents ended after."""
    ssh = (ssh_signer(root / "ssh", "alice@example.com"), ssh_signer(root / "ssh", "m@x"))
    bob = pgp_signer(root / "bob", "Bob <bob@example.com>")
    eve = pgp_signer(root / "eve", "Eve <eve@example.com>")
    try:
        yield Signers(*ssh, bob, eve)
    finally:
        bob.close()
        eve.close()


def tag_object(repo: GitRepo, tag: str) -> str:
    return git(repo.path, "rev-parse", f"refs/tags/{tag}")
