"""The registry over real HTTP and TLS: discovery, modules.v1, archives, and every client mistake."""

from __future__ import annotations

import hashlib
import io
import socket
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from gitreg.process.tlscert import TlsMaterial
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer
from tests.support.tls_clients import served_over_tls


@dataclass
class Served:
    client: httpx.Client
    commits: dict[str, str]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, tls: TlsMaterial) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("http")
    single = GitRepo(root / "single")
    commits = {
        "1.0.0": single.release("v1.0.0", module_files("1.0.0")),
        "1.1.0": single.release("v1.1.0", module_files("1.1.0")),
        "1.2.0+meta.1": single.release("v1.2.0+meta.1", module_files("1.2.0+meta.1")),
    }
    mono = GitRepo(root / "mono")
    mono.write(module_files("naming", "modules/naming"))
    commits["vpc/1.0.0"] = mono.release("vpc/v1.0.0", module_files("vpc", "modules/vpc"))
    (root / "registry.yaml").write_text(f"""
cache_dir: cache
modules:
  - {{namespace: infra, name: single, system: aws, repo: {single.path}}}
  - {{namespace: infra, name: vpc, system: aws, repo: {mono.path}, path: modules/vpc, tags: "vpc/v{{version}}"}}
  - {{namespace: infra, name: vpcgit, system: aws, repo: {mono.path}, path: modules/vpc, tags: "vpc/v{{version}}",
      download: git, git_url: "https://git.example.com/infra/mono.git"}}
  - {{namespace: infra, name: singlegit, system: aws, repo: {single.path}, download: git}}
  - {{namespace: infra, name: vpconly, system: aws, repo: {mono.path}, path: modules/vpc, tags: "vpc/v{{version}}",
      archive: folder}}
""")
    catalog = load_catalog(root / "registry.yaml")
    with served_over_tls(catalog, tls, http2=True) as (_, client):
        yield Served(client, commits)


def test_discovery(served: Served) -> None:
    response = served.client.get("/.well-known/terraform.json")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"modules.v1": "/v1/modules/", "providers.v1": "/v1/providers/"}


def test_http2_over_tls(served: Served) -> None:
    assert served.client.get("/.well-known/terraform.json").http_version == "HTTP/2"


def test_versions_newest_first(served: Served) -> None:
    response = served.client.get("/v1/modules/infra/single/aws/versions")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {
        "modules": [
            {"versions": [{"version": "1.2.0+meta.1"}, {"version": "1.1.0"}, {"version": "1.0.0"}]}
        ]
    }


def test_download_archive_location(served: Served) -> None:
    response = served.client.get("/v1/modules/infra/single/aws/1.1.0/download")
    assert response.status_code == 200
    location = response.json()["location"]
    assert response.headers["x-terraform-get"] == location
    path, _, query = location.partition("?")
    assert path == f"/v1/archives/infra/single/aws/{served.commits['1.1.0']}.tar.gz"
    # The digest of the bytes served, which the client verifies before it unpacks them.
    assert query == f"checksum=sha256:{hashlib.sha256(served.client.get(path).content).hexdigest()}"
    # A v prefix and build metadata, as clients send them.
    assert (
        served.client.get("/v1/modules/infra/single/aws/v1.1.0/download").json()["location"]
        == location
    )
    meta = served.client.get("/v1/modules/infra/single/aws/1.2.0+meta.1/download")
    assert meta.status_code == 200 and served.commits["1.2.0+meta.1"] in meta.json()["location"]


def test_download_monorepo_archive_selects_the_folder(served: Served) -> None:
    location = served.client.get("/v1/modules/infra/vpc/aws/1.0.0/download").json()["location"]
    archive = served.client.get(location.partition("//")[0])
    digest = hashlib.sha256(archive.content).hexdigest()
    # The checksum after the folder: the one form go-getter splits into package and folder.
    commit = served.commits["vpc/1.0.0"]
    assert location == (
        f"/v1/archives/infra/vpc/aws/{commit}.tar.gz//modules/vpc?checksum=sha256:{digest}"
    )
    with tarfile.open(fileobj=io.BytesIO(archive.content), mode="r:gz") as tar:
        names = tar.getnames()
    assert "modules/vpc/main.tf" in names and "modules/naming/main.tf" in names  # the whole tree


def test_folder_only_archive(served: Served) -> None:
    location = served.client.get("/v1/modules/infra/vpconly/aws/1.0.0/download").json()["location"]
    path, _, query = location.partition("?")
    assert "//" not in location and path.endswith(".tar.gz")
    archive = served.client.get(path)
    assert query == f"checksum=sha256:{hashlib.sha256(archive.content).hexdigest()}"
    with tarfile.open(fileobj=io.BytesIO(archive.content), mode="r:gz") as tar:
        assert tar.getnames() == ["main.tf"]


def test_download_git_location(served: Served) -> None:
    """A git:: location names the commit gitreg publishes, never the tag a client would follow."""
    response = served.client.get("/v1/modules/infra/vpcgit/aws/1.0.0/download")
    commit = served.commits["vpc/1.0.0"]
    location = f"git::https://git.example.com/infra/mono.git//modules/vpc?ref={commit}"
    assert response.json() == {"location": location}
    assert response.headers["x-terraform-get"] == location
    meta = served.client.get("/v1/modules/infra/singlegit/aws/1.2.0+meta.1/download").json()
    assert meta["location"].startswith("git::file://")
    assert meta["location"].endswith(f"?ref={served.commits['1.2.0+meta.1']}")


def test_archive_headers_head_and_etag(served: Served) -> None:
    path = f"/v1/archives/infra/single/aws/{served.commits['1.0.0']}.tar.gz"
    got = served.client.get(path)
    assert got.status_code == 200
    assert got.headers["content-type"] == "application/gzip"
    assert int(got.headers["content-length"]) == len(got.content) > 0
    assert got.headers["etag"] == f'"{served.commits["1.0.0"]}"'
    assert "immutable" in got.headers["cache-control"]
    head = served.client.head(path)
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == got.headers["content-length"]
    assert head.headers["etag"] == got.headers["etag"]
    again = served.client.get(path, headers={"If-None-Match": got.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    for header in ("*", f'"other", W/{got.headers["etag"]}'):
        assert served.client.get(path, headers={"If-None-Match": header}).status_code == 304
    assert served.client.get(path, headers={"If-None-Match": '"other"'}).status_code == 200
    with tarfile.open(fileobj=io.BytesIO(got.content), mode="r:gz") as tar:
        main = tar.extractfile("main.tf")
        assert main is not None and b'"1.0.0"' in main.read()


@pytest.mark.parametrize(
    ("method", "path", "status", "message"),
    [
        ("GET", "/v1/modules/infra/nope/aws/versions", 404, "no module infra/nope/aws"),
        ("GET", "/v1/modules/infra/single/gcp/versions", 404, "no module"),
        ("GET", "/v1/modules/in.fra/single/aws/versions", 400, "namespace 'in.fra' must be"),
        ("GET", "/v1/modules/infra/single/a-w-s/versions", 400, "system 'a-w-s' must be"),
        ("GET", "/v1/modules/infra/single/aws/1.1/download", 400, "not a Semantic Version"),
        ("GET", "/v1/modules/infra/single/aws/latest/download", 400, "not a Semantic Version"),
        ("GET", "/v1/modules/infra/single/aws/9.9.9/download", 404, "has no version 9.9.9"),
        ("GET", "/v1/modules/infra/single/aws/1.2.0/download", 404, "has no version 1.2.0"),
        ("GET", "/v1/archives/infra/single/aws/not-a-commit.tar.gz", 400, "not an archive name"),
        ("GET", "/v1/archives/infra/single/aws/" + "a" * 40 + ".tar.gz", 404, "has no archive"),
        ("GET", "/v1/archives/infra/single/aws/../../../etc/passwd", 404, "no such endpoint"),
        ("GET", "/v1/modules/infra/single/aws/%2e%2e/download", 400, "not a Semantic Version"),
        ("GET", "/v1/nothing/here", 404, "no such endpoint"),
        ("POST", "/v1/modules/infra/single/aws/versions", 405, "Method Not Allowed"),
    ],
)
def test_client_mistakes_get_json_errors(
    served: Served, method: str, path: str, status: int, message: str
) -> None:
    response = served.client.request(method, path)
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    errors = response.json()["errors"]
    assert len(errors) == 1 and message in errors[0], errors


def test_archive_of_another_modules_commit_is_refused(served: Served) -> None:
    # The commit exists in the mirror, but it is not a release of this module.
    response = served.client.get(
        f"/v1/archives/infra/single/aws/{served.commits['vpc/1.0.0']}.tar.gz"
    )
    assert response.status_code == 404


def test_healthz(served: Served) -> None:
    assert served.client.get("/healthz").json() == {"status": "ok", "modules": 5}


def test_plain_http_serves_too(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.release("v0.1.0", module_files("0.1.0"))
    (tmp_path / "registry.yaml").write_text(
        f"cache_dir: cache\nmodules:\n  - {{namespace: a, name: b, system: c, repo: {repo.path}}}\n"
    )
    with RegistryServer(load_catalog(tmp_path / "registry.yaml")) as server:
        response = httpx.get(f"{server.url}/v1/modules/a/b/c/versions")
    assert response.json()["modules"][0]["versions"] == [{"version": "0.1.0"}]


def test_a_refused_post_does_not_break_the_http2_connection(served: Served) -> None:
    for _ in range(3):
        assert (
            served.client.post(
                "/v1/modules/infra/single/aws/versions", content=b"x" * 1000
            ).status_code
            == 405
        )
    assert served.client.get("/v1/modules/infra/single/aws/versions").status_code == 200


def test_oversized_body_is_refused(served: Served) -> None:
    response = served.client.post("/v1/modules/infra/single/aws/versions", content=b"x" * (2 << 20))
    assert response.status_code == 413 and "over" in response.json()["errors"][0]


def test_a_body_declared_far_over_the_limit_is_refused_unread(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.release("v0.1.0", module_files("0.1.0"))
    (tmp_path / "registry.yaml").write_text(
        f"cache_dir: cache\nmodules:\n  - {{namespace: a, name: b, system: c, repo: {repo.path}}}\n"
    )
    with (
        RegistryServer(load_catalog(tmp_path / "registry.yaml")) as server,
        socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw,
    ):
        # 10 GB announced, none sent: the answer comes without waiting for a byte of it.
        raw.sendall(
            b"POST /v1/webhooks/generic HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000000\r\n\r\n"
        )
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = raw.recv(4096)
            assert chunk, "the server closed the connection without answering"
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 413")
    assert b"connection: close" in answer.lower()


def test_an_archive_over_a_limit_is_refused_naming_it_and_shown_in_status(
    tmp_path: Path,
) -> None:
    repo = GitRepo(tmp_path / "repo")
    commit = repo.release("v0.1.0", {**module_files("0.1.0"), "data.json": "x" * 5000})
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\narchives: {max_file_size: 4KiB}\n"
        f"modules:\n  - {{namespace: a, name: b, system: c, repo: {repo.path}}}\n"
    )
    with RegistryServer(load_catalog(tmp_path / "registry.yaml")) as server:
        # The download names the archive's digest, so it is refused as the archive is.
        for path in ("/v1/modules/a/b/c/0.1.0/download", f"/v1/archives/a/b/c/{commit}.tar.gz"):
            for _ in range(2):  # the second refusal comes from memory, not from a second build
                response = httpx.get(f"{server.url}{path}")
                assert response.status_code == 413
                assert (
                    "data.json is 4.9 KiB: over the limit archives.max_file_size (4.0 KiB)"
                    in (response.json()["errors"][0])
                )
        refused = httpx.get(f"{server.url}/v1/status").json()["archives_refused"]
    assert [r["archive"] for r in refused] == [commit]
    assert "archives.max_file_size" in refused[0]["reason"]


def test_ready_once_every_repository_was_read(served: Served) -> None:
    ready = served.client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {
        "ready": True,
        "waiting": [],
        "stale": [],
        "outdated": [],
        "max_staleness": None,
        "degraded": False,
    }
