"""One repository holding a public module and a private one, served over TLS: an anonymous
archive of the public module holds nothing of its private neighbour (issue 18: it held the
neighbour's main.tf and README), neither by the URL its download answers nor by any other."""

from __future__ import annotations

import hashlib
import io
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from gitreg.process.tlscert import TlsMaterial
from tests.support.gitrepo import GitRepo
from tests.support.servers import wait_until
from tests.support.tls_clients import served_over_tls

TOKEN = "gitreg_secret-reader-0123456789"
MARK = "PRIVATE-NEIGHBOUR"  # in every file of the private module, and nowhere else
PUBLIC_FILES = {
    "modules/open/main.tf": 'output "who" {\n  value = "open"\n}\n',
    "modules/open/README.md": "# Open\n\nAnyone reads this.\n",
}
PRIVATE_FILES = {
    "modules/secret/main.tf": f'output "who" {{\n  value = "{MARK}"\n}}\n',
    "modules/secret/README.md": f"# Secret\n\n{MARK}: for the secret namespace only.\n",
}
AUTH = f"""auth:
  public: [open]
  tokens:
    - {{name: reader, token_sha256: "{hashlib.sha256(TOKEN.encode()).hexdigest()}",
        read: [secret]}}
"""


@dataclass
class Served:
    client: httpx.Client
    commit: str
    catalog: Path


def _write_catalog(root: Path, auth: str) -> Path:
    mono = root / "mono"
    path = root / "registry.yaml"
    path.write_text(
        f"""hostname: registry.example.test
cache_dir: cache
refresh_interval: 1h
mirror: {{read_through: false}}
modules:
  - {{namespace: open, name: net, system: x, repo: {mono}, path: modules/open}}
  - {{namespace: open, name: netgit, system: x, repo: {mono}, path: modules/open,
      download: git, git_url: "https://git.example.test/mono.git"}}
  - {{namespace: secret, name: db, system: x, repo: {mono}, path: modules/secret}}
{auth}"""
    )
    return path


def _repository(root: Path) -> str:
    mono = GitRepo(root / "mono")
    return mono.release("v1.0.0", {**PUBLIC_FILES, **PRIVATE_FILES})


@pytest.fixture
def served(tmp_path: Path, tls: TlsMaterial) -> Iterator[Served]:
    commit = _repository(tmp_path)
    catalog = _write_catalog(tmp_path, AUTH)
    with served_over_tls(catalog, tls, timeout=30) as (_, client):
        yield Served(client, commit, catalog)


def _members(archive: bytes) -> dict[str, bytes]:
    """Every entry of a .tar.gz: files with their bytes, folders and links with none."""
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        found = {}
        for member in tar.getmembers():
            extracted = tar.extractfile(member) if member.isfile() else None
            found[member.name] = extracted.read() if extracted else b""
        return found


def _anonymous_archive(client: httpx.Client, module: str) -> tuple[str, dict[str, bytes]]:
    """The download answer's location for `module` 1.0.0, followed without a token, opened."""
    download = client.get(f"/v1/modules/{module}/1.0.0/download")
    assert download.status_code == 200, download.text
    location = download.headers["x-terraform-get"]
    assert download.json()["location"] == location
    archive = client.get(location.partition("//")[0])  # relative: no scheme, the subdir
    assert archive.status_code == 200, archive.text
    return location, _members(archive.content)


def _holds_nothing_private(members: dict[str, bytes]) -> None:
    assert members, "an empty archive proves nothing"
    for name, data in members.items():
        assert "secret" not in name, name
        assert MARK.encode() not in data, name


def test_the_public_modules_archive_holds_its_folder_and_nothing_of_its_neighbour(
    served: Served,
) -> None:
    location, members = _anonymous_archive(served.client, "open/net/x")
    assert "//" not in location  # its folder is the archive's root: no subdir to select
    assert sorted(members) == ["README.md", "main.tf"]
    assert members["main.tf"].decode() == PUBLIC_FILES["modules/open/main.tf"]
    _holds_nothing_private(members)


def test_no_other_archive_url_of_the_public_module_serves_the_whole_repository(
    served: Served,
) -> None:
    """The whole repository's archive name, under the public module's address or its git-mode
    twin's (which gets no archive from gitreg: its clients clone with their own credentials)."""
    for module in ("open/net/x", "open/netgit/x"):
        whole = served.client.get(f"/v1/archives/{module}/{served.commit}.tar.gz")
        assert whole.status_code == 404, (module, whole.text)
    assert "downloaded with git" in whole.json()["errors"][0]
    download = served.client.get("/v1/modules/open/netgit/x/1.0.0/download")
    assert download.headers["x-terraform-get"].startswith("git::https://git.example.test/")


def test_the_private_module_is_narrowed_too_and_still_opens_with_its_token(
    served: Served,
) -> None:
    anonymous = served.client.get("/v1/modules/secret/db/x/1.0.0/download")
    assert anonymous.status_code == 401
    download = served.client.get(
        "/v1/modules/secret/db/x/1.0.0/download", headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert download.status_code == 200
    signed = download.headers["x-terraform-get"]
    assert "signature=" in signed and "//" not in signed.partition("?")[0]
    members = _members(served.client.get(signed).content)
    assert sorted(members) == ["README.md", "main.tf"]
    assert MARK.encode() in members["main.tf"]


def test_an_auth_section_added_live_narrows_the_archives_at_once(
    tmp_path: Path, tls: TlsMaterial
) -> None:
    """The reload reads registry.yaml with the same loader: once the edit is served, the public
    module's download and archive hold its folder only, and the whole archive is gone."""
    commit = _repository(tmp_path)
    catalog = _write_catalog(tmp_path, "")
    with served_over_tls(catalog, tls, refresh=True, timeout=30) as (_, client):
        before, members = _anonymous_archive(client, "open/net/x")
        # Open: the whole tree, and its folder selected before the checksum.
        assert before.partition("?checksum=sha256:")[0].endswith(f"/{commit}.tar.gz//modules/open")
        assert "modules/secret/main.tf" in members
        catalog.write_text(_write_catalog(tmp_path, AUTH).read_text())

        def private_now() -> bool:
            return client.get("/v1/modules/secret/db/x/versions").status_code == 401

        wait_until(private_now, 30, "the reload of registry.yaml with auth:")
        location, members = _anonymous_archive(client, "open/net/x")
        assert "//" not in location
        _holds_nothing_private(members)
        assert client.get(before.partition("//")[0]).status_code == 404
