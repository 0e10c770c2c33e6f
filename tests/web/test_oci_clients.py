"""Real third-party OCI clients against /v2/: oras-py pulls a module and lists its tags (with
Basic credentials traded at the Bearer realm for a private one), and skopeo lists tags and
inspects manifests, verifying digests as it goes. skopeo is a Debian package: without it, its
tests are skipped with the reason."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import oras.client
import pytest

from gitreg.process.tlscert import TlsMaterial
from tests.support.private_registry import READER, write_private_registry
from tests.support.tls_clients import served_over_tls


@dataclass
class Served:
    host: str  # 127.0.0.1:PORT
    client: httpx.Client
    tls: TlsMaterial


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, tls: TlsMaterial) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("oci-clients")
    path = write_private_registry(root, "  signing_key_file: new.key\n")
    with path.open("a") as config:
        config.write("oci: {enabled: true}\n")
    with served_over_tls(path, tls) as (server, client):
        yield Served(f"127.0.0.1:{server.port}", client, tls)


def _oras(served: Served) -> oras.client.OrasClient:
    return oras.client.OrasClient(hostname=served.host, tls_verify=str(served.tls.ca_cert))


def test_oras_pulls_a_public_module(served: Served, tmp_path: Path) -> None:
    files = _oras(served).pull(
        target=f"{served.host}/open/single/generic:1.0.0", outdir=str(tmp_path)
    )
    (pulled,) = (Path(f) for f in files)
    assert pulled.name == "open-single-generic-1.0.0.zip"
    with zipfile.ZipFile(pulled) as package:
        assert "1.0.0" in package.read("main.tf").decode()


def test_oras_lists_tags(served: Served) -> None:
    tags = _oras(served).get_tags(f"{served.host}/open/single/generic")
    assert tags == ["1.0.0", "latest"]


def test_oras_logs_in_with_a_gitreg_token_for_a_private_module(
    served: Served, tmp_path: Path
) -> None:
    client = _oras(served)
    client.login(
        username="oauth2",
        password=READER,
        hostname=served.host,
        tls_verify=str(served.tls.ca_cert),
        config_path=str(tmp_path / "docker-config.json"),  # never the user's own
    )
    files = client.pull(target=f"{served.host}/secret/vpc/generic:1.0.0", outdir=str(tmp_path))
    data = Path(files[0]).read_bytes()
    manifest = served.client.get(
        "/v2/secret/vpc/generic/manifests/1.0.0", headers={"Authorization": f"Bearer {READER}"}
    ).json()
    assert manifest["layers"][0]["digest"] == f"sha256:{hashlib.sha256(data).hexdigest()}"


SKOPEO = shutil.which("skopeo")
needs_skopeo = pytest.mark.skipif(
    SKOPEO is None, reason="skopeo is not installed (apt-get install skopeo)"
)


def _skopeo(served: Served, *args: str) -> subprocess.CompletedProcess[str]:
    assert SKOPEO is not None
    certs = served.tls.ca_cert.parent / "skopeo-certs"
    certs.mkdir(exist_ok=True)
    shutil.copy(served.tls.ca_cert, certs / "ca.crt")
    # An empty auth file of its own: never credentials the user's files hold.
    authfile = served.tls.ca_cert.parent / "skopeo-auth.json"
    authfile.write_text('{"auths": {}}')
    return subprocess.run(
        [SKOPEO, *args[:1], "--cert-dir", str(certs), "--authfile", str(authfile), *args[1:]],
        capture_output=True,
        text=True,
        timeout=60,
    )


@needs_skopeo
def test_skopeo_lists_tags(served: Served) -> None:
    done = _skopeo(served, "list-tags", f"docker://{served.host}/open/single/generic")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["Tags"] == ["1.0.0", "latest"]


@needs_skopeo
def test_skopeo_inspects_a_manifest_and_an_index(served: Served) -> None:
    done = _skopeo(served, "inspect", "--raw", f"docker://{served.host}/open/single/generic:1.0.0")
    assert done.returncode == 0, done.stderr
    raw = served.client.get("/v2/open/single/generic/manifests/1.0.0").content
    assert done.stdout.encode() == raw
    index = _skopeo(
        served, "inspect", "--raw", f"docker://{served.host}/providers/open/widget:1.0.0"
    )
    assert index.returncode == 0, index.stderr
    assert json.loads(index.stdout)["artifactType"] == "application/vnd.opentofu.provider"


@needs_skopeo
def test_skopeo_with_credentials_for_a_private_namespace(served: Served) -> None:
    target = f"docker://{served.host}/secret/single/generic"
    refused = _skopeo(served, "list-tags", target)
    assert refused.returncode != 0
    done = _skopeo(served, "list-tags", "--creds", f"oauth2:{READER}", target)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["Tags"] == ["1.0.0", "latest"]
