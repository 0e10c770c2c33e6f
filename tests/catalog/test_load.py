from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.catalog.load import load_catalog
from gitreg.git.archive_limits import ARCHIVE_MEMORY_BUDGET, ArchiveLimits
from gitreg.tags import TagTemplate
from tests.conftest import WriteCatalog
from tests.support.refused_catalogs import assert_refused, refusal, refused

GOOD_MODULE = """\
  - namespace: infra
    name: vpc
    system: aws
    repo: https://git.example.com/infra/vpc.git
"""


def test_full_catalog(write_catalog: WriteCatalog, tmp_path: Path) -> None:
    (tmp_path / "repos" / "thing").mkdir(parents=True)
    (tmp_path / "tls.crt").write_text("x")
    (tmp_path / "tls.key").write_text("x")
    catalog = write_catalog(
        """
        hostname: Registry.Example.com
        listen: 0.0.0.0:9443
        tls: {certfile: tls.crt, keyfile: tls.key}
        refresh_interval: 5m
        modules:
          - namespace: infra
            name: vpc
            system: aws
            repo: https://git.example.com/infra/mono.git
            path: modules/vpc/
            tags: "vpc/v{version}"
            download: git
            git_url: ssh://git@git.example.com/infra/mono.git
          - namespace: infra
            name: dns
            system: aws
            repo: https://git.example.com/infra/mono.git/
            path: ./modules/dns
            tags: ["dns/v{version}", "dns-{version}"]
            archive: folder
          - namespace: local
            name: thing
            system: generic
            repo: repos/thing
        """
    )
    assert catalog.server.hostname == "registry.example.com"
    assert str(catalog.server.listen) == "0.0.0.0:9443"
    assert catalog.server.tls and catalog.server.tls.certfile == tmp_path / "tls.crt"
    assert catalog.cache_dir == tmp_path / "cache"
    assert catalog.freshness.refresh_interval == 300
    vpc, dns, thing = catalog.modules
    assert (
        vpc.path == "modules/vpc"
        and vpc.download == "git"
        and vpc.tags == (TagTemplate("vpc/v", ""),)
    )
    assert dns.path == "modules/dns" and dns.archive == "folder" and len(dns.tags) == 2
    assert vpc.repo == dns.repo  # one repository, however it is spelled
    assert thing.repo.transport == "local" and thing.repo.url == str(tmp_path / "repos" / "thing")
    assert [str(t) for t in thing.tags] == ["v{version}", "{version}"]


@pytest.mark.parametrize(
    ("text", "path", "line", "reason"),
    [
        ("modules: []\ncolour: blue\n", "colour", 3, "unknown key"),
        ("modules:\n" + GOOD_MODULE + "    tag: v{version}\n", "modules[0].tag", 7, "unknown key"),
        ("modules:\n" + GOOD_MODULE + GOOD_MODULE, "modules[1]", 7, "already listed at modules[0]"),
        (
            "modules:\n" + GOOD_MODULE.replace("vpc\n", "Vpc\n", 1) + GOOD_MODULE,
            "modules[1]",
            7,
            "already listed",
        ),
        (
            "modules:\n" + GOOD_MODULE.replace("name: vpc", "name: my.vpc"),
            "modules[0]",
            3,
            "name 'my.vpc' must be",
        ),
        (
            "modules:\n" + GOOD_MODULE.replace("name: vpc", "name: -vpc"),
            "modules[0]",
            3,
            "name '-vpc' must be",
        ),
        (
            "modules:\n" + GOOD_MODULE.replace("system: aws", "system: AWS"),
            "modules[0]",
            3,
            "lowercase",
        ),
        (
            "modules:\n" + GOOD_MODULE.replace("namespace: infra", "namespace: " + "x" * 65),
            "modules[0]",
            3,
            "1 to 64",
        ),
        ("modules:\n" + GOOD_MODULE + "    tags: v1.0\n", "modules[0].tags", 7, "exactly once"),
        (
            "modules:\n"
            + GOOD_MODULE.replace("    repo: https://git.example.com/infra/vpc.git\n", ""),
            "modules[0].repo",
            3,
            "is required",
        ),
        (
            "modules:\n" + GOOD_MODULE.replace("https://git", "https://me:secret@git"),
            "modules[0].repo",
            6,
            "must not carry a password",
        ),
        (
            "modules:\n" + GOOD_MODULE.replace("https://", "ftp://"),
            "modules[0].repo",
            6,
            "scheme 'ftp'",
        ),
        (
            "modules:\n" + GOOD_MODULE + "    path: ../other\n",
            "modules[0].path",
            7,
            "inside the repository",
        ),
        (
            "modules:\n" + GOOD_MODULE + "    path: a/.git/b\n",
            "modules[0].path",
            7,
            "inside the repository",
        ),
        (
            "modules:\n" + GOOD_MODULE + "    download: zip\n",
            "modules[0].download",
            7,
            "one of archive, git",
        ),
        (
            "modules:\n" + GOOD_MODULE + "    archive: folder\n",
            "modules[0].archive",
            7,
            "needs a path",
        ),
        ("modules: []\nlisten: 8443\n", "listen", 3, "must be a non-empty string"),
        ("modules: []\nlisten: localhost\n", "listen", 3, "HOST:PORT"),
        ("modules: []\nrefresh_interval: soon\n", "refresh_interval", 3, "positive duration"),
        ("modules: []\narchives: {max_size: lots}\n", "archives.max_size", 3, "positive size"),
        ("modules: []\narchives: {max_size: -2GiB}\n", "archives.max_size", 3, "positive size"),
        ("modules: []\narchives: {max_entries: 0}\n", "archives.max_entries", 3, "whole number"),
        ("modules: []\narchives: {max_files: 3}\n", "archives.max_files", 3, "unknown key"),
        (
            "modules: []\narchives: {memory_budget: -1MiB}\n",
            "archives.memory_budget",
            3,
            "100MB (or 0: off)",
        ),
        ("modules: []\narchives: {memory_budget: lots}\n", "archives.memory_budget", 3, "0: off"),
        ("modules: []\nrefresh_interval: 0s\n", "refresh_interval", 3, "positive duration"),
        ("modules: []\nfresh_reads: -1s\n", "fresh_reads", 3, "1h (or 0: off)"),
        ("modules: []\nfresh_reads: true\n", "fresh_reads", 3, "(or 0: off)"),
        (
            "modules:\n"
            + GOOD_MODULE.replace("https://git.example.com/infra/vpc.git", "no/such/dir"),
            "modules[0].repo",
            6,
            "no such directory",
        ),
        (
            "modules:\n"
            + GOOD_MODULE.replace("https://git.example.com/infra/vpc.git", "file:///no/such/dir"),
            "modules[0].repo",
            6,
            "no such directory",
        ),
        (
            "modules:\n" + GOOD_MODULE + "    git_url: ../relative/path\n",
            "modules[0].git_url",
            7,
            "must be a URL clients can clone",
        ),
        (
            "modules:\n" + GOOD_MODULE + "    git_url: 'https://x/y.git?ref=v1'\n",
            "modules[0].git_url",
            7,
            "without spaces or a ref",
        ),
        ("modules: []\nhostname: 'bad host'\n", "hostname", 3, "host name"),
        ("modules: {}\n", "modules", 2, "must be a list"),
        ("listen: 127.0.0.1:1\n", "modules", 1, "there is nothing to serve"),
        (
            "modules: []\ntls: {certfile: nope.crt, keyfile: nope.key}\n",
            "tls.certfile",
            3,
            "not a readable file",
        ),
        (
            "modules: []\ncredentials:\n  - url: https://x/\n",
            "credentials[0]",
            4,
            "needs token_env, token_file, ssh_key or ca_file",
        ),
        (
            "modules: []\ncredentials:\n  - url: https://x/\n    token_env: GITREG_TEST_UNSET\n",
            "credentials[0].token_env",
            5,
            "is not set",
        ),
        ("modules: []\nmirror: {colour: blue}\n", "mirror.colour", 3, "unknown key"),
        ("modules: []\nmirror: {folders: [nowhere]}\n", "mirror.folders[0]", 3, "is not a folder"),
        (
            "modules: []\nmirror: {origins: {a.example.test: 'http://x/'}}\n",
            "mirror.origins.a.example.test",
            3,
            "must be an https:// base URL ending in /",
        ),
        (
            "modules: []\nmirror:\n  origins:\n    'a.example.test:8443': 'https://x/'\n",
            "mirror.origins.a.example.test:8443",
            5,
            "without a port",
        ),
        (
            "modules: []\nmirror:\n  origins:\n    a.example.test: {url: 'https://x/', token_env: GITREG_TEST_UNSET}\n",
            "mirror.origins.a.example.test.token_env",
            5,
            "is not set",
        ),
        (
            "modules: []\nmirror:\n  origins:\n    a.example.test: {token_env: PATH, token_file: registry.yaml}\n",
            "mirror.origins.a.example.test",
            5,
            "not both",
        ),
        (
            "modules: []\nmirror:\n  origins:\n    a.example.test: {}\n",
            "mirror.origins.a.example.test",
            5,
            "give url, or token_env or token_file",
        ),
        (
            "providers:\n  - {namespace: acme, type: widget, artifacts: nowhere}\n",
            "providers[0].artifacts",
            3,
            "is not a folder",
        ),
        (
            "modules: []\nsigning: {keys: [registry.yaml]}\n",
            "signing.keys[0]",
            3,
            "is not an OpenPGP key",
        ),
        ("modules: []\nmodules: []\n", "(document)", 3, "given twice"),
        ("modules: [\n", "(document)", 3, "not valid YAML"),
        ("# cache_dir: none\n- just\n- a list\n", "(document)", 2, "must be a mapping"),
    ],
)
def test_config_errors(tmp_path: Path, text: str, path: str, line: int | None, reason: str) -> None:
    assert_refused(refusal(tmp_path, text), path, line, reason)


def test_mirror_origins_with_urls_and_tokens(write_catalog: WriteCatalog, tmp_path: Path) -> None:
    (tmp_path / "token").write_text("t\n")
    mirror = write_catalog(
        """
        modules: []
        mirror:
          origins:
            registry.terraform.io: https://proxy.internal/terraform/
            App.Terraform.io: {token_file: token}
            private.example.test: {url: 'https://private.internal/', token_env: PATH}
        """
    ).mirror
    assert mirror.origin_url("registry.terraform.io") == "https://proxy.internal/terraform/"
    assert mirror.token("registry.terraform.io") is None
    assert mirror.origin_url("app.terraform.io") == "https://app.terraform.io/"
    token = mirror.token("app.terraform.io")
    assert token and token.file == tmp_path / "token" and token.value() == "t"
    assert mirror.origin_url("private.example.test") == "https://private.internal/"
    assert (private := mirror.token("private.example.test")) and private.env == "PATH"
    assert "t\n" not in repr(mirror)  # the settings name where a token is, never the token


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    refused = refusal(
        tmp_path, "colour: blue\nmodules:\n  - namespace: a.b\n    name: x\n    system: y\n"
    )
    paths = {p.path for p in refused.problems}
    assert {"colour", "modules[0].repo", "modules[0]"} <= paths
    assert "colour (line 2): unknown key" in str(refused)


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    assert "No such file" in str(refused(tmp_path / "absent.yaml"))


def test_credentials_longest_prefix_wins(
    write_catalog: WriteCatalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITREG_TEST_TOKEN", "t0ken")
    (tmp_path / "token").write_text("from-file\n")
    catalog = write_catalog(
        """
        credentials:
          - {url: "https://git.example.com/", token_env: GITREG_TEST_TOKEN}
          - {url: "https://git.example.com/team/", token_file: token, username: x-token-auth}
        mirror: {}
        """
    )
    team = catalog.credential_for("https://git.example.com/team/repo.git")
    other = catalog.credential_for("https://git.example.com/other/repo.git")
    assert team and team.token() == "from-file" and team.username == "x-token-auth"
    assert other and other.token() == "t0ken"
    assert catalog.credential_for("https://elsewhere.example.com/repo.git") is None
    assert "t0ken" not in repr(other) and "from-file" not in repr(team)


def test_example_catalog_is_valid() -> None:
    catalog = load_catalog(Path(__file__).resolve().parents[2] / "registry.yaml")
    assert {str(m.address) for m in catalog.modules} >= {
        "examples/greeting/generic",
        "examples/network/generic",
    }


@pytest.mark.parametrize(
    ("written", "size"),
    [("1024", 1024), ("512MiB", 512 * 2**20), ("2 GiB", 2 * 2**30), ("100MB", 10**8), ("7B", 7)],
)
def test_archive_limits_take_sizes_with_units(tmp_path: Path, written: str, size: int) -> None:
    (tmp_path / "registry.yaml").write_text(
        f"mirror: {{}}\narchives:\n  max_file_size: {written}\n  max_entries: 500\n"
    )
    limits = load_catalog(tmp_path / "registry.yaml").archives.limits
    assert (limits.max_file_size, limits.max_entries) == (size, 500)
    assert limits.max_size == ArchiveLimits().max_size


@pytest.mark.parametrize(
    ("written", "budget"),
    [
        ("", ARCHIVE_MEMORY_BUDGET),
        ("memory_budget: 0", 0),
        ("memory_budget: 0MB", 0),
        ("memory_budget: 64MB", 64 * 10**6),
        ("memory_budget: 1GiB", 2**30),
    ],
)
def test_archive_memory_budget(tmp_path: Path, written: str, budget: int) -> None:
    (tmp_path / "registry.yaml").write_text(f"mirror: {{}}\narchives: {{{written}}}\n")
    assert load_catalog(tmp_path / "registry.yaml").archives.memory_budget == budget


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("", 5.0),
        ("fresh_reads: 0\n", 0.0),
        ("fresh_reads: 0s\n", 0.0),
        ("fresh_reads: 2s\n", 2.0),
        ("fresh_reads: 500ms\n", 0.5),
    ],
)
def test_fresh_reads(write_catalog: WriteCatalog, text: str, seconds: float) -> None:
    assert write_catalog(f"modules: []\nmirror: {{}}\n{text}").freshness.fresh_reads == seconds


def test_a_catalog_that_is_not_utf8_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "registry.yaml"
    path.write_bytes(b"modules: []\nhostname: caf\xe9.example.com\n")
    assert [str(p) for p in refused(path).problems] == [
        "(document) (line 2): not UTF-8 text (byte 0xe9)"
    ]


def test_problems_are_listed_in_the_order_the_keys_are_read(tmp_path: Path) -> None:
    """`gitreg check` lists them in this order, which the catalog's sections do not follow."""
    keys = [
        "listen",
        "hostname",
        "credentials",
        "providers",
        "signing",
        "sources",
        "refresh_interval",
        "archives",
        "public_url",
        "tls",
        "fetch_timeout",
        "webhooks",
        "poll_concurrency",
        "max_backoff",
        "fresh_reads",
        "watch_catalog",
        "mirror",
        "auth",
        "readiness",
        "log_format",
        "shutdown_grace",
        "state",
        "hsts",
        "mcp",
        "oci",
    ]
    wrong = {"hostname": "-bad-", "listen": "nowhere", "log_format": "xml"}
    text = "".join(f"{key}: {wrong.get(key, 'soon')}\n" for key in sorted(keys))
    error = refusal(tmp_path, text + "modules:\n" + GOOD_MODULE)
    assert [problem.path for problem in error.problems] == keys
