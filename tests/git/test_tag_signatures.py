"""Tags' signatures checked with the real `git verify-tag`, `ssh-keygen` and `gpg`: SSH and
OpenPGP, valid, by a key not listed, missing, and of the other kind than the one required."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from gitreg.git.tag_signatures import SignatureKind, Verdict, signers_problem, verify_tag
from tests.support.gitrepo import GitRepo
from tests.support.pacing import Recording, installed
from tests.support.tag_signing import (
    PgpSigner,
    SshSigner,
    allowed_signers,
    four_signers,
    tag_object,
)


@dataclass(frozen=True)
class Signed:
    repo: GitRepo
    alice: SshSigner
    allowed: Path  # lists alice only
    bob: PgpSigner
    keyring: Path  # holds bob's key only


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Signed]:
    root = tmp_path_factory.mktemp("signatures")
    with four_signers(root) as keys:
        repo = GitRepo(root / "repo")
        repo.write({"main.tf": ""}).commit()
        keys.alice.sign(repo, "ssh-good")
        keys.mallory.sign(repo, "ssh-unlisted")
        keys.bob.sign(repo, "pgp-good")
        keys.eve.sign(repo, "pgp-unknown")
        repo.tag("annotated", annotated=True)
        repo.tag("lightweight")
        allowed = allowed_signers(root / "allowed", keys.alice)
        yield Signed(repo, keys.alice, allowed, keys.bob, keys.bob.export(root / "bob.asc"))


def _verify(signed: Signed, tag: str, kind: SignatureKind) -> Verdict:
    signers = signed.allowed if kind == "ssh" else signed.keyring
    return verify_tag(signed.repo.path / ".git", tag_object(signed.repo, tag), kind, signers)


def test_an_ssh_signature_by_a_listed_key_names_its_principal_and_key(signed: Signed) -> None:
    verdict = _verify(signed, "ssh-good", "ssh")
    assert verdict.refusal == ""
    assert verdict.signer.startswith("alice@example.com (ED25519 key SHA256:")


def test_an_openpgp_signature_by_a_held_key_names_its_user_and_fingerprint(signed: Signed) -> None:
    verdict = _verify(signed, "pgp-good", "openpgp")
    assert verdict == (f"Bob <bob@example.com> (OpenPGP key {signed.bob.fingerprint()})", "")


@pytest.mark.parametrize(
    ("tag", "kind", "refusal"),
    [
        # ssh-keygen says "Good" of an unlisted key, and exits 1: the exit code decides.
        ("ssh-unlisted", "ssh", "signed by SSH key SHA256:"),
        ("pgp-unknown", "openpgp", "signed by OpenPGP key "),
        ("annotated", "ssh", "missing signature (require_signed_tags wants an SSH signature)"),
        ("annotated", "openpgp", "missing signature (require_signed_tags wants an OpenPGP"),
        ("lightweight", "ssh", "missing signature"),
        # git picks its verifier by the signature's armor: the other kind is refused, not tried
        # against the process's own keyring.
        ("pgp-good", "ssh", "signed with OpenPGP (require_signed_tags wants an SSH signature)"),
        ("ssh-good", "openpgp", "signed with SSH (require_signed_tags wants an OpenPGP"),
    ],
)
def test_a_refused_signature_says_why(
    signed: Signed, tag: str, kind: SignatureKind, refusal: str
) -> None:
    verdict = _verify(signed, tag, kind)
    assert verdict.signer == ""
    assert verdict.refusal.startswith(refusal)


def test_the_unlisted_key_is_named_beside_the_file_that_lacks_it(signed: Signed) -> None:
    assert _verify(signed, "ssh-unlisted", "ssh").refusal.endswith(", which allowed does not list")
    assert _verify(signed, "pgp-unknown", "openpgp").refusal.endswith(
        ", which bob.asc does not hold"
    )


def test_the_signers_files_are_checked_line_by_line(signed: Signed, tmp_path: Path) -> None:
    assert signers_problem("ssh", signed.allowed) is None
    assert signers_problem("openpgp", signed.keyring) is None
    good = signed.alice.allowed_line()
    cases = {
        "# a comment\n\n" + good + "alice@example.com ssh-ed25519\n": (
            4,
            "is not `PRINCIPALS [OPTIONS] KEYTYPE KEY`, as ssh-keygen reads it",
        ),
        good + "bob@example.com ssh-ed25519 not*base64\n": (2, "its ssh-ed25519 key is not base64"),
        good.replace("ssh-ed25519", "ssh-rsa"): (1, "its key is not an ssh-rsa key"),
        "# only a comment\n": (None, "lists no signer"),
    }
    for text, problem in cases.items():
        (tmp_path / "allowed").write_text(text)
        assert signers_problem("ssh", tmp_path / "allowed") == problem, text
    assert signers_problem("openpgp", signed.allowed) == (
        None,
        "holds no OpenPGP public key (gpg: no valid OpenPGP data found.)",
    )
    assert signers_problem("ssh", tmp_path / "absent") == (
        None,
        f"cannot read {tmp_path / 'absent'}: No such file or directory",
    )


def test_no_gpg_agent_outlives_the_verdicts(signed: Signed) -> None:
    """Public keys need no agent: gitreg's keyrings start none (one would outlive gitreg)."""
    _verify(signed, "pgp-good", "openpgp")
    _verify(signed, "pgp-good", "ssh")
    agents = subprocess.run(["pgrep", "-af", "gpg-agent"], capture_output=True, text=True)
    assert "gitreg-keyring-" not in agents.stdout


def test_the_cpu_git_verify_tag_spent_is_told_to_the_cpu_budget(signed: Signed) -> None:
    """A background sync's signature checks are paid back as its other git is
    (`pacing.charge`): a refused signature's too."""
    pacer = Recording()
    with installed(pacer):
        assert _verify(signed, "ssh-good", "ssh").signer
        assert _verify(signed, "pgp-unknown", "openpgp").refusal
    assert len(pacer.charged) == 2 and all(spent > 0 for spent in pacer.charged)
