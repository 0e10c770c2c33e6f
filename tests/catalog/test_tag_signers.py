"""`require_signed_tags` per module, per source and per namespace: which one a module gets, and
signers' files refused at start with the key path, its line, and the file's line at fault."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import WriteCatalog
from tests.support.refused_catalogs import assert_refused, refusal
from tests.support.tag_signing import SshSigner, allowed_signers, ssh_signer


@pytest.fixture(scope="module")
def alice(tmp_path_factory: pytest.TempPathFactory) -> SshSigner:
    return ssh_signer(tmp_path_factory.mktemp("keys"), "alice@example.com")


def test_a_module_s_own_then_its_namespace_s(
    write_catalog: WriteCatalog, tmp_path: Path, alice: SshSigner
) -> None:
    allowed_signers(tmp_path / "team_signers", alice)
    allowed_signers(tmp_path / "vpc_signers", alice)
    catalog = write_catalog(
        """
        require_signed_tags:
          - {namespaces: [infra, "team-*"], allowed_signers: team_signers}
        modules:
          - {namespace: infra, name: vpc, system: aws, repo: https://git.example.com/a.git,
             require_signed_tags: {allowed_signers: vpc_signers}}
          - {namespace: Team-A, name: dns, system: aws, repo: https://git.example.com/b.git}
          - {namespace: other, name: dns, system: aws, repo: https://git.example.com/c.git}
        """
    )
    vpc, dns, other = catalog.modules
    assert vpc.signed_tags and vpc.signed_tags.file == tmp_path / "vpc_signers"
    assert dns.signed_tags and dns.signed_tags.file == tmp_path / "team_signers"
    assert dns.signed_tags.kind == "ssh" and len(dns.signed_tags.digest) == 64
    assert other.signed_tags is None


def test_a_source_s_for_every_module_it_finds(
    write_catalog: WriteCatalog, tmp_path: Path, alice: SshSigner
) -> None:
    allowed_signers(tmp_path / "signers", alice)
    (tmp_path / "repos").mkdir()
    catalog = write_catalog(
        """
        sources:
          - folder: {path: repos, namespace: local, require_signed_tags: {allowed_signers: signers}}
        """
    )
    signers = catalog.sources[0].signed_tags
    assert signers and signers.kind == "ssh" and signers.file == tmp_path / "signers"


def test_a_signers_file_that_does_not_parse_is_refused_with_its_line(
    tmp_path: Path, alice: SshSigner
) -> None:
    (tmp_path / "signers").write_text(alice.allowed_line() + "bob@example.com ssh-ed25519\n")
    (tmp_path / "keys.asc").write_text("not a key\n")
    error = refusal(
        tmp_path,
        """\
        modules:
          - namespace: infra
            name: vpc
            system: aws
            repo: https://git.example.com/a.git
            require_signed_tags:
              allowed_signers: signers
          - namespace: infra
            name: dns
            system: aws
            repo: https://git.example.com/b.git
            require_signed_tags: {keyring: keys.asc}
          - namespace: infra
            name: lb
            system: aws
            repo: https://git.example.com/c.git
            require_signed_tags: {keyring: absent.asc, allowed_signers: signers}
        require_signed_tags:
          - {namespaces: ["not a pattern"], allowed_signers: gone}
        """,
    )
    where = "modules[0].require_signed_tags.allowed_signers"
    assert_refused(error, where, 8, f"{tmp_path / 'signers'}, line 2: is not `PRINCIPALS")
    where = "modules[1].require_signed_tags.keyring"
    assert_refused(error, where, 13, "holds no OpenPGP public key")
    assert_refused(error, "modules[2].require_signed_tags", 18, "not allowed_signers and keyring")
    assert_refused(error, "require_signed_tags[0].namespaces[0]", 20, "must be a namespace")
    assert_refused(error, "require_signed_tags[0].allowed_signers", 20, "is not a readable file")
