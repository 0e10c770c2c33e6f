"""A forge names repositories, not places: a stand-in Gitea whose JSON names, beside a repository
of its own Git server, a `file://` URL and a local path to a private namespace's repository on
gitreg's disk, and an `http://` URL on another port of 127.0.0.1 where a listener counts
connections. The app serves the forge's own repository; the others are skipped with the reason
in `/v1/status`, `gitreg list` and `gitreg check`, nothing of them is fetched or made in
cache_dir, and the listener is never reached. `gitreg check` warns of plain http:// too."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.process.tlscert import TlsMaterial
from tests.conftest import WriteCatalog
from tests.support.forge_git import forge_git
from tests.support.forge_shapes import ForgeRepository
from tests.support.forges import StandInForge
from tests.support.gitrepo import GitRepo, module_files
from tests.support.listeners import SilentListener
from tests.support.servers import run_gitreg, wait_until
from tests.support.tls_clients import served_over_tls

TOKEN = "gitea-https-s3cret"
READER = "reader-7Qm2xVb9KpL4tWz8Rn3JcY6dFh1GsE5aUo0iXvNk"  # reads the private namespace


def test_a_forge_that_names_places_off_itself_gets_no_fetch_and_says_why(
    tmp_path: Path,
    tls: TlsMaterial,
    write_catalog: WriteCatalog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FORGE_TOKEN", TOKEN)
    monkeypatch.setenv("READER_TOKEN", READER)
    # Another namespace's private module, on gitreg's own disk, served by registry.yaml.
    secret = GitRepo(tmp_path / "private" / "terraform-aws-db")
    secret.release("v1.0.0", module_files("1.0.0"))
    with (
        forge_git(tmp_path, TOKEN, tls) as served,
        SilentListener() as elsewhere,
    ):
        port = elsewhere.port
        vpc = served.publish("platform/terraform-aws-vpc", [("v1.0.0", module_files("1.0.0"))])
        named = {
            "platform/terraform-aws-stolen": secret.path.as_uri(),
            "platform/terraform-aws-copied": str(secret.path),
            "platform/terraform-aws-fetched": f"http://127.0.0.1:{port}/p/x.git",
        }
        listed = [vpc] + [ForgeRepository(p, clone_https=url) for p, url in named.items()]
        with StandInForge("gitea", listed, token=TOKEN, tls=tls) as forge:
            catalog = write_catalog(
                served.credentials(forge.url, "FORGE_TOKEN") + "modules:\n"
                f"  - {{namespace: private, name: db, system: aws, repo: '{secret.path}'}}\n"
                "auth:\n"
                "  public: [platform]\n"
                "  tokens: [{name: reader, token_env: READER_TOKEN, read: [private], ops: true}]\n"
                f"sources:\n  - gitea: {{url: '{forge.url}', org: platform,"
                f" token_env: FORGE_TOKEN, interval: 1h, {served.clone_hosts}}}\n"
            )
            with served_over_tls(catalog, tls, refresh=True) as (_, client):

                def versions(address: str, token: str = "") -> int | list[str]:
                    headers = {"Authorization": f"Bearer {token}"} if token else {}
                    answer = client.get(f"/v1/modules/{address}/versions", headers=headers)
                    if answer.status_code != 200:
                        return answer.status_code
                    return [v["version"] for v in answer.json()["modules"][0]["versions"]]

                wait_until(lambda: versions("platform/vpc/aws") == ["1.0.0"], 30, "vpc served")
                assert versions("private/db/aws", READER) == ["1.0.0"]
                for name in ("stolen", "copied", "fetched"):
                    assert versions(f"platform/{name}/aws") == 404
                    assert versions(f"platform/{name}/aws", READER) == 404
                status = client.get("/v1/status", headers={"Authorization": f"Bearer {READER}"})
                (source,) = status.json()["sources"]
                assert source["modules"] == ["platform/vpc/aws"]
                said = {s["repository"]: s["why"] for s in source["skipped"]}
            listing = run_gitreg("list", "--config", str(catalog.source))
            checked = run_gitreg("check", "--config", str(catalog.source))
    assert elsewhere.accepted == 0  # no fetch, no ls-remote: not one connection

    reasons = {
        "platform/terraform-aws-stolen": (
            f"clone URL {secret.path.as_uri()!r} refused: file:// is a place on this machine,"
            " not on the forge"
        ),
        "platform/terraform-aws-copied": (
            f"clone URL {str(secret.path)!r} refused: a path on this machine, not a place on"
            " the forge"
        ),
        "platform/terraform-aws-fetched": (
            f"clone URL {named['platform/terraform-aws-fetched']!r} refused: port {port} is not"
            f" the forge's ({forge.url.rsplit(':', 1)[1]}): list '127.0.0.1:{port}' in"
            " clone_hosts if the forge serves its clones there"
        ),
    }
    assert said == reasons
    assert listing.returncode == 0, listing.stderr
    for repository, why in reasons.items():
        assert f"    skipped {repository}: {why}" in listing.stdout.splitlines(), listing.stdout
        assert f"warning: sources[0]: skipped {repository}: {why}" in checked.stdout.splitlines()
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "platform/vpc/aws" in listing.stdout

    # Nothing of theirs made in cache_dir: one clone the forge's vpc, one registry.yaml's db.
    clones = sorted(p.name.rsplit("-", 1)[0] for p in (catalog.cache_dir / "git").glob("*.git"))
    assert clones == ["terraform-aws-db", "terraform-aws-vpc"], clones
    names = [n.rsplit("/", 1)[1] for n in named]
    made = [p for p in catalog.cache_dir.rglob("*") if any(n in p.name for n in names)]
    assert made == []


def test_another_port_of_the_forges_host_is_another_server(
    tmp_path: Path,
    tls: TlsMaterial,
    write_catalog: WriteCatalog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The forge's own host, 127.0.0.1, on a port that is not the forge's: refused unless the
    source lists it; a forge's https URL on its own port is taken."""
    monkeypatch.setenv("FORGE_TOKEN", TOKEN)
    with SilentListener() as elsewhere:
        other = elsewhere.port
        with StandInForge("gitlab", token=TOKEN, tls=tls) as forge:
            url = f"https://127.0.0.1:{other}/platform/terraform-aws-dns.git"
            forge.repositories = [ForgeRepository("platform/terraform-aws-dns", clone_https=url)]
            catalog = write_catalog(
                f"credentials:\n  - {{url: '{forge.url}', ca_file: '{tls.ca_cert}'}}\n"
                f"sources:\n  - gitlab: {{url: '{forge.url}', group: platform,"
                " token_env: FORGE_TOKEN}\n"
            )
            checked = run_gitreg("check", "--config", str(catalog.source))
    assert elsewhere.accepted == 0
    port = forge.url.rsplit(":", 1)[1]
    assert (
        f"warning: sources[0]: skipped platform/terraform-aws-dns: clone URL {url!r} refused:"
        f" port {other} is not the forge's ({port}): list '127.0.0.1:{other}' in clone_hosts"
        " if the forge serves its clones there"
    ) in checked.stdout.splitlines(), checked.stdout


def test_check_warns_of_a_forge_and_credentials_over_plain_http(
    tmp_path: Path, write_catalog: WriteCatalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORGE_TOKEN", TOKEN)
    with StandInForge("gitea", token=TOKEN, groups=["platform"]) as forge:
        assert forge.url.startswith("http://")
        catalog = write_catalog(
            "credentials:\n"
            f"  - {{url: '{forge.url}/', token_env: FORGE_TOKEN}}\n"
            "  - {url: 'https://git.example.com/', token_env: FORGE_TOKEN}\n"
            f"sources:\n  - gitea: {{url: '{forge.url}', org: platform, token_env: FORGE_TOKEN}}\n"
        )
        checked = run_gitreg("check", "--config", str(catalog.source))
    lines = checked.stdout.splitlines()
    assert (
        f"warning: sources[0].gitea.url: {forge.url} is plain http://: its token and its"
        " answers, the clone URLs among them, can be read and changed on the way; give its"
        " https:// URL"
    ) in lines, checked.stdout
    assert (
        f"warning: credentials[0].url: {forge.url}/ is plain http://: its token, and what is"
        " fetched there, can be read and changed on the way; give its https:// URL"
    ) in lines, checked.stdout
    assert not any(line.startswith("warning: credentials[1]") for line in lines)
    assert TOKEN not in checked.stdout + checked.stderr
