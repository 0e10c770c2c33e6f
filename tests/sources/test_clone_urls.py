"""Which clone URLs a forge may name, by a table of good and bad ones: the forge's own host (over
http(s) on its port too; over ssh or git on any), a host its source lists, and nothing else:
no path or file:// URL of this machine, no remote helper, no password, no other server."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.address import ModuleAddress
from gitreg.catalog.load import load_catalog
from gitreg.catalog.specs import ModuleSpec, SourceKind, SourceSpec
from gitreg.git.location import RepoLocation
from gitreg.sources import persisted
from gitreg.sources.clone_urls import ClonePlaces
from gitreg.sources.survey import FoundModule, Skipped, Survey
from tests.conftest import WriteCatalog
from tests.support.site_snippets import block, claimed

PAGE = "sources.md"


def places(
    where: str = "https://git.example.com:8443",
    kind: SourceKind = "gitea",
    clone_hosts: tuple[tuple[str, int | None], ...] = (),
) -> ClonePlaces:
    spec = SourceSpec(
        key_path="sources[0]",
        kind=kind,
        where=where,
        scope="infra",
        namespace="infra",
        clone_hosts=clone_hosts,
    )
    return ClonePlaces.of(spec)


FORGE = places()
LISTED = places(clone_hosts=(("ssh.example.com", 2222), ("mirror.example.com", None)))


@pytest.mark.parametrize(
    ("url", "refused"),
    [
        # The forge's own clone URLs, as forges write them.
        ("https://git.example.com:8443/infra/terraform-aws-vpc.git", ""),
        ("https://GIT.Example.COM:8443/infra/vpc.git", ""),  # a host's case is not its name
        ("HTTPS://git.example.com:8443/infra/vpc.git", ""),
        ("https://admin@git.example.com:8443/scm/infra/vpc.git", ""),  # Bitbucket's user
        ("ssh://git@git.example.com:2222/infra/vpc.git", ""),  # its ssh: any port
        ("ssh://git@git.example.com/infra/vpc.git", ""),
        ("git@git.example.com:infra/vpc.git", ""),  # scp-like: ssh
        ("git.example.com:infra/vpc.git", ""),
        ("git://git.example.com/infra/vpc.git", ""),
        # A place on this machine.
        ("file:///srv/git/secret/terraform-aws-db.git", "file:// is a place on this machine"),
        ("FILE:///srv/git/secret.git", "file:// is a place on this machine"),
        ("/srv/git/secret/terraform-aws-db.git", "a path on this machine"),
        ("~/secret.git", "a path on this machine"),
        ("~git/secret.git", "a path on this machine"),
        ("../secret.git", "a path on this machine"),
        ("./x:y", "a path on this machine"),
        ("secret.git", "a path on this machine"),
        # A program of this machine, or a scheme git would hand to one.
        ("ext::sh -c touch% /tmp/pwned", "whitespace or control characters"),
        ("ext::sh", "ext:: runs a program of this machine"),
        ("fd::17", "fd:: runs a program of this machine"),
        ("https::git.example.com:8443/infra/vpc.git", "https:: runs a program"),
        ("git.example.com::infra/vpc.git", "git.example.com:: runs a program"),
        ("ftp://git.example.com/infra/vpc.git", "scheme 'ftp' is none of https, http, ssh, git"),
        ("git+ssh://git.example.com/infra/vpc.git", "scheme 'git+ssh' is none of"),
        # Another server: another host, or another port over http(s).
        ("https://evil.example.com/infra/vpc.git", "host evil.example.com is neither the forge's"),
        ("https://git.example.com.evil.com:8443/x.git", "host git.example.com.evil.com is"),
        ("https://git.example.com@evil.example.com/x.git", "host evil.example.com is"),
        ("https://git.example.com:8443@evil.example.com/x.git", "it carries a password"),
        ("git@evil.example.com:infra/vpc.git", "host evil.example.com is neither"),
        ("https://127.0.0.1:8443/infra/vpc.git", "host 127.0.0.1 is neither the forge's"),
        ("https://[::1]:8443/infra/vpc.git", "host [::1] is neither the forge's"),
        ("git@[::1]:infra/vpc.git", "host [::1] is neither the forge's"),
        ("https://git.example.com/infra/vpc.git", "port 443 is not the forge's (8443)"),
        ("https://git.example.com:9999/infra/vpc.git", "port 9999 is not the forge's (8443)"),
        ("http://git.example.com:8443/infra/vpc.git", "http:// where the forge is reached over"),
        ("http://git.example.com/infra/vpc.git", "port 80 is not the forge's (8443)"),
        # User parts that do not fit.
        ("https://user:pw@git.example.com:8443/x.git", "it carries a password"),
        ("https://:pw@git.example.com:8443/x.git", "it carries a password"),
        ("ssh://-oProxyCommand=x@git.example.com/x.git", "is not a plain user name"),
        ("-oProxyCommand=x@git.example.com:x.git", "is not a plain user name"),
        ("git://git@git.example.com/x.git", "git:// takes no user name"),
        # Malformed.
        ("https:///infra/vpc.git", "it names no host"),
        ("https://git.example.com:port/x.git", "its port is not a number"),
        ("https://[zz]/x.git", "it names no host"),
        ("git@[zz]:x.git", "[zz] is not an IPv6 address"),
        ("https://git.example.com:8443/x.git\n", "whitespace or control characters"),
        ("https://git.example.com:8443/x\tgit", "whitespace or control characters"),
    ],
)
def test_a_forge_names_only_places_on_itself(url: str, refused: str) -> None:
    said = FORGE.refusal(url)
    if not refused:
        assert said == ""
    else:
        assert said.startswith("clone URL ") and refused in said, said


@pytest.mark.parametrize(
    ("url", "refused"),
    [
        ("ssh://git@ssh.example.com:2222/infra/vpc.git", ""),
        ("ssh://git@SSH.example.com:2222/infra/vpc.git", ""),
        ("ssh://git@ssh.example.com/infra/vpc.git", "host ssh.example.com is neither"),  # 22
        ("git@ssh.example.com:infra/vpc.git", "host ssh.example.com is neither"),
        ("https://mirror.example.com/infra/vpc.git", ""),  # no port listed: the scheme's own
        ("http://mirror.example.com/infra/vpc.git", ""),  # listed, over http: as registry.yaml says
        ("git@mirror.example.com:infra/vpc.git", ""),
        ("https://mirror.example.com:8443/infra/vpc.git", "host mirror.example.com is neither"),
        ("https://git.example.com:8443/infra/vpc.git", ""),  # the forge's own still
        ("file:///srv/mirror.example.com/x.git", "file:// is a place on this machine"),
    ],
)
def test_a_host_the_source_lists_as_written(url: str, refused: str) -> None:
    said = LISTED.refusal(url)
    assert (refused in said) if refused else said == "", said


@pytest.mark.parametrize(
    ("where", "kind", "url", "refused"),
    [
        ("https://api.github.com", "github", "https://github.com/acme/vpc.git", ""),
        ("https://api.github.com", "github", "git@github.com:acme/vpc.git", ""),
        ("https://api.github.com", "github", "https://api.github.com/acme/vpc.git", ""),
        ("https://api.github.com", "github", "https://gist.github.com/x.git", "host gist"),
        ("https://ghe.example.com/api/v3", "github", "https://ghe.example.com/acme/vpc.git", ""),
        ("https://api.gitea.example.com", "gitea", "https://gitea.example.com/x.git", "host"),
        ("http://git.example.com", "gitea", "http://git.example.com/x.git", ""),
        ("http://git.example.com", "gitea", "https://git.example.com/x.git", "port 443 is not"),
        ("https://[2001:db8::1]:8443", "gitea", "https://[2001:DB8::1]:8443/x.git", ""),
        ("https://[2001:db8::1]:8443", "gitea", "git@[2001:db8::1]:x.git", ""),
        ("https://[2001:db8::1]:8443", "gitea", "https://[2001:db8::2]:8443/x.git", "host"),
    ],
)
def test_the_forges_own_host_by_its_url(
    where: str, kind: SourceKind, url: str, refused: str
) -> None:
    said = places(where, kind).refusal(url)
    assert (refused in said) if refused else said == "", said


def test_a_refusal_never_shows_a_password() -> None:
    said = FORGE.refusal("https://user:s3cret@evil.example.com/x.git")
    assert "s3cret" not in said and "it carries a password" in said


def test_the_guides_clone_hosts_admit_the_forges_ssh_host(tmp_path: Path) -> None:
    with claimed(PAGE, "test_the_guides_clone_hosts_admit_the_forges_ssh_host") as page:
        text = page.take("yaml", "clone_hosts:")
    (tmp_path / "registry.yaml").write_text(text)
    (spec,) = load_catalog(tmp_path / "registry.yaml", secrets=()).sources
    guide = ClonePlaces.of(spec)
    for url in (
        "ssh://git@ssh.gitlab.example.com:2222/platform/terraform/terraform-aws-vpc.git",
        "git@ssh.gitlab.example.com:platform/terraform/terraform-aws-vpc.git",
        "git@gitlab.example.com:platform/terraform/terraform-aws-vpc.git",
        "https://gitlab.example.com/platform/terraform/terraform-aws-vpc.git",
    ):
        assert guide.refusal(url) == "", url
    assert "host ssh.evil.example.com is" in guide.refusal("git@ssh.evil.example.com:x.git")
    assert "port 2200 is not" in guide.refusal("https://gitlab.example.com:2200/x.git")
    # The page's line of `gitreg list`, as the rule words it.
    skipped = guide.refusal("file:///srv/git/private/terraform-aws-db.git")
    shown = block(PAGE, "text", "clone URL 'file://").strip().splitlines()
    assert shown == [f"skipped platform/terraform-aws-db: {skipped}"]


def test_a_survey_kept_from_before_the_rule_serves_nothing_off_its_forge(
    write_catalog: WriteCatalog, tmp_path: Path
) -> None:
    """cache_dir/sources.json written by a gitreg that fetched what the forge named: a restart
    with the forge down serves its modules on the forge, not one on this machine's disk."""
    catalog = write_catalog("sources:\n  - gitea: {url: 'https://git.example.com', org: infra}\n")
    (source,) = catalog.sources
    (tmp_path / "private.git").mkdir()

    def module(name: str, repo: RepoLocation) -> FoundModule:
        spec = ModuleSpec(ModuleAddress.parse("infra", name, "aws"), repo)
        return FoundModule(spec, source.key_path, f"infra/terraform-aws-{name}")

    vpc = RepoLocation("https://git.example.com/infra/terraform-aws-vpc.git", "https")
    stolen = RepoLocation(str(tmp_path / "private.git"), "local")
    refused = Skipped("infra/terraform-aws-db", "clone URL '/x' refused: …", clone_refused=True)
    kept = Survey(
        source.key_path,
        100.0,
        ("infra/terraform-aws-vpc", "infra/terraform-aws-stolen"),
        (module("vpc", vpc), module("stolen", stolen)),
        skipped=(refused, Skipped("infra/docs", "its name makes no module")),
    )
    persisted.save(catalog.cache_dir, {persisted.identity(source): kept})
    loaded = persisted.load(catalog.cache_dir, catalog.sources)[persisted.identity(source)]
    assert [m.spec.repo for m in loaded.modules] == [vpc]
    assert loaded.skipped == kept.skipped
