"""Documents attached to module versions as OCI 1.1 referrers, over real HTTPS: the referrers
API (empty, one, two, filtered), their manifests and layers by digest, found again by a
process that never listed them, behind the gate as every /v2/ route; met by a client making
oras-go's checks (tests/support/oras_referrers.py), by oras-py and skopeo."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import oras.client
import pytest

from gitreg.oci.referrers import (
    CYCLONEDX,
    IN_TOTO,
    PROVENANCE,
    PROVENANCE_DSSE,
    SBOM,
    AttachedTo,
    attached_by,
    producing,
)
from gitreg.process.tlscert import TlsMaterial
from tests.support.gitrepo import GitRepo, git, module_files
from tests.support.oci_client import MANIFEST, TofuOci
from tests.support.oras_referrers import INDEX, Failed, Oras
from tests.support.private_registry import MIRROR, OTHER, READER, bearer, write_private_registry
from tests.support.site_snippets import claimed, run_sh
from tests.support.tls_clients import served_over_tls

EMPTY_CONFIG = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
NO_DIGEST = f"sha256:{'0' * 64}"


class Producers:
    """Attachments the tests make, with real bytes: a provenance-like DSSE envelope for every
    module but `secret/vpc`, an SBOM for the `open` namespace's; each call counted."""

    def __init__(self) -> None:
        self.calls: Counter[tuple[str, str]] = Counter()
        self.attached = attached_by(
            producing(PROVENANCE, self.provenance), producing(SBOM, self.sbom)
        )

    async def provenance(self, version: AttachedTo) -> bytes | None:
        address = version.entry.spec.address
        self.calls[(str(address), version.release.version)] += 1
        if (address.namespace, address.name) == ("secret", "vpc"):
            return None
        statement = {"subject": str(address), "commit": version.release.commit}
        envelope = {
            "payload": base64.b64encode(json.dumps(statement).encode()).decode(),
            "payloadType": IN_TOTO,
            "signatures": [],
        }
        return json.dumps(envelope).encode()

    async def sbom(self, version: AttachedTo) -> bytes | None:
        if version.entry.spec.address.namespace != "open":
            return None
        return json.dumps({"bomFormat": "CycloneDX", "specVersion": "1.6", "version": 1}).encode()


@dataclass
class Served:
    host: str
    client: httpx.Client
    root: Path
    producers: Producers
    tls: TlsMaterial


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, tls: TlsMaterial) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("oci-referrers")
    path = write_private_registry(root, "  signing_key_file: new.key\n")
    GitRepo.existing(root / "single").release("v1.1.0", module_files("1.1.0"))
    with path.open("a") as config:
        config.write("oci: {enabled: true}\n")
    producers = Producers()
    with served_over_tls(path, tls, attached=producers.attached) as (server, client):
        yield Served(f"127.0.0.1:{server.port}", client, root, producers, tls)


def _index(answer: httpx.Response) -> list[dict[str, object]]:
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == INDEX  # no charset: oras-go compares it whole
    body = answer.json()
    assert body["schemaVersion"] == 2 and body["mediaType"] == INDEX
    assert "link" not in answer.headers
    manifests: list[dict[str, object]] = body["manifests"]
    return manifests


def _digest(client: httpx.Client, repository: str, tag: str, token: str | None = None) -> str:
    headers = bearer(token) if token else {}
    answer = client.head(f"/v2/{repository}/manifests/{tag}", headers=headers)
    return answer.headers["docker-content-digest"]


def _sha256(data: bytes) -> str:
    return f"sha256:{hashlib.sha256(data).hexdigest()}"


def test_nothing_attached_is_an_empty_index(served: Served) -> None:
    subject = _digest(served.client, "secret/vpc/generic", "1.0.0", READER)
    answer = served.client.get(
        f"/v2/secret/vpc/generic/referrers/{subject}", headers=bearer(READER)
    )
    assert _index(answer) == []
    assert "oci-filters-applied" not in answer.headers


def test_one_attachment_its_manifest_and_layer_by_digest(served: Served) -> None:
    repository, headers = "secret/single/generic", bearer(READER)
    subject = _digest(served.client, repository, "1.0.0", READER)
    (descriptor,) = _index(
        served.client.get(f"/v2/{repository}/referrers/{subject}", headers=headers)
    )
    commit = git(served.root / "single", "rev-parse", "v1.0.0^{commit}")
    seconds = int(git(served.root / "single", "log", "-1", "--format=%ct", commit))
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))  # the commit's, in UTC
    assert descriptor["artifactType"] == IN_TOTO and descriptor["mediaType"] == MANIFEST
    assert descriptor["annotations"] == {"org.opencontainers.image.created": when}
    manifest = served.client.get(
        f"/v2/{repository}/manifests/{descriptor['digest']}", headers=headers
    )
    assert manifest.status_code == 200
    assert manifest.headers["content-type"] == MANIFEST
    assert (
        manifest.headers["docker-content-digest"]
        == descriptor["digest"]
        == _sha256(manifest.content)
    )
    assert len(manifest.content) == descriptor["size"]
    document = manifest.json()
    assert document["subject"] == {
        "mediaType": MANIFEST,
        "digest": subject,
        "size": len(
            served.client.get(f"/v2/{repository}/manifests/1.0.0", headers=headers).content
        ),
    }
    assert document["config"] == {
        "mediaType": "application/vnd.oci.empty.v1+json",
        "digest": EMPTY_CONFIG,
        "size": 2,
        "data": "e30=",
    }
    (layer,) = document["layers"]
    assert layer["mediaType"] == PROVENANCE_DSSE
    assert layer["annotations"] == {
        "org.opencontainers.image.title": "secret-single-generic-1.0.0.intoto.json"
    }
    blob = served.client.get(f"/v2/{repository}/blobs/{layer['digest']}", headers=headers)
    assert blob.status_code == 200 and _sha256(blob.content) == layer["digest"]
    assert blob.headers["docker-content-digest"] == layer["digest"]
    assert len(blob.content) == layer["size"]
    statement = json.loads(base64.b64decode(json.loads(blob.content)["payload"]))
    assert statement == {"subject": "secret/single/generic", "commit": commit}
    config = served.client.get(f"/v2/{repository}/blobs/{EMPTY_CONFIG}", headers=headers)
    assert config.content == b"{}"


def test_two_attachments_in_the_producers_order(served: Served) -> None:
    subject = _digest(served.client, "open/single/generic", "1.0.0")
    referrers = _index(served.client.get(f"/v2/open/single/generic/referrers/{subject}"))
    assert [r["artifactType"] for r in referrers] == [IN_TOTO, CYCLONEDX]
    pulled = Oras(served.client).pull("open/single/generic", str(referrers[1]["digest"]))
    assert json.loads(pulled["open-single-generic-1.0.0.cdx.json"])["bomFormat"] == "CycloneDX"


@pytest.mark.parametrize(
    ("wanted", "types"),
    [(CYCLONEDX, [CYCLONEDX]), (IN_TOTO, [IN_TOTO]), ("application/x-none", [])],
)
def test_filtered_by_artifact_type_and_said_so(
    served: Served, wanted: str, types: list[str]
) -> None:
    subject = _digest(served.client, "open/single/generic", "1.0.0")
    answer = served.client.get(
        f"/v2/open/single/generic/referrers/{subject}", params={"artifactType": wanted}
    )
    assert [r["artifactType"] for r in _index(answer)] == types
    assert answer.headers["oci-filters-applied"] == "artifactType"


@pytest.mark.parametrize(
    "digest",
    [
        "sha256:abc",
        f"sha256:{'A' * 64}",
        f"sha512:{'a' * 64}",
        "latest",
        "1.0.0",
        f"sha256:{'a' * 64}x",
        f"SHA256:{'a' * 64}",
        "x" * 300,
    ],
)
def test_a_malformed_digest_is_a_400(served: Served, digest: str) -> None:
    answer = served.client.get(f"/v2/open/single/generic/referrers/{digest}")
    assert answer.status_code == 400, answer.text
    assert answer.json()["errors"][0]["code"] == "DIGEST_INVALID"


def test_digests_that_nothing_refers_to_are_empty_indexes(served: Served) -> None:
    repository = "open/single/generic"
    subject = _digest(served.client, repository, "1.0.0")
    referrers = _index(served.client.get(f"/v2/{repository}/referrers/{subject}"))
    zip_layer = served.client.get(f"/v2/{repository}/manifests/1.0.0").json()["layers"][0]
    for digest in (
        str(referrers[0]["digest"]),  # a referrer's own: oras discover asks it next
        zip_layer["digest"],
        EMPTY_CONFIG,
        NO_DIGEST,
        f"sha512:{'a' * 128}",
        "blake3:abc",
    ):
        assert _index(served.client.get(f"/v2/{repository}/referrers/{digest}")) == [], digest


def test_providers_have_empty_indexes(served: Served) -> None:
    index = served.client.get("/v2/providers/open/widget/manifests/1.0.0")
    answer = served.client.get(f"/v2/providers/open/widget/referrers/{_sha256(index.content)}")
    assert _index(answer) == []
    mirrored = served.client.get(
        f"/v2/mirror/registry.example.test/open/widget/referrers/{NO_DIGEST}",
        headers=bearer(MIRROR),
    )
    assert _index(mirrored) == []
    unknown = served.client.get(
        f"/v2/mirror/registry.terraform.io/hashicorp/nothing/referrers/{NO_DIGEST}",
        headers=bearer(MIRROR),
    )
    assert unknown.status_code == 404
    assert unknown.json()["errors"][0]["code"] == "NAME_UNKNOWN"


@pytest.mark.parametrize(
    ("repository", "token", "status", "code"),
    [
        ("secret/single/generic", None, 401, "UNAUTHORIZED"),
        ("secret/nothing/generic", None, 401, "UNAUTHORIZED"),  # the same: nothing learnt
        ("secret/single/generic", OTHER, 403, "DENIED"),
        ("secret/nothing/generic", OTHER, 403, "DENIED"),
        ("secret/nothing/generic", READER, 404, "NAME_UNKNOWN"),
        ("secret/vpcgit/generic", READER, 404, "NAME_UNKNOWN"),  # cloned with git: no package
        ("open/nothing/generic", None, 404, "NAME_UNKNOWN"),
        ("Open/single/generic", None, 404, "NAME_UNKNOWN"),
    ],
)
def test_the_gate_answers_as_on_every_v2_route(
    served: Served, repository: str, token: str | None, status: int, code: str
) -> None:
    headers = bearer(token) if token else {}
    for digest in (NO_DIGEST, "not-a-digest"):  # the gate first: a bad digest learns nothing
        answer = served.client.get(f"/v2/{repository}/referrers/{digest}", headers=headers)
        assert answer.status_code == status, answer.text
        assert answer.json()["errors"][0]["code"] == code
        tags = served.client.get(f"/v2/{repository}/tags/list", headers=headers)
        assert (tags.status_code, tags.json()["errors"][0]["code"]) == (status, code)


def test_head_answers_what_get_answers(served: Served) -> None:
    subject = _digest(served.client, "open/single/generic", "1.0.0")
    path = f"/v2/open/single/generic/referrers/{subject}"
    got, head = served.client.get(path), served.client.head(path)
    assert head.status_code == 200 and head.content == b""
    for name in ("content-type", "content-length", "docker-content-digest"):
        assert head.headers[name] == got.headers[name]
    layer = served.client.get(
        f"/v2/open/single/generic/manifests/{got.json()['manifests'][0]['digest']}"
    ).json()["layers"][0]
    blob = served.client.head(f"/v2/open/single/generic/blobs/{layer['digest']}")
    assert blob.status_code == 200 and blob.content == b""
    assert blob.headers["content-length"] == str(layer["size"])


@pytest.mark.parametrize("method", ["PUT", "POST", "DELETE"])
def test_writes_are_refused(served: Served, method: str) -> None:
    answer = served.client.request(method, f"/v2/open/single/generic/referrers/{NO_DIGEST}")
    assert answer.status_code == 405
    assert answer.json()["errors"][0]["code"] == "UNSUPPORTED"


def test_oras_discover_and_pull_by_oras_go_rules(served: Served) -> None:
    """The oras CLI is not installable here: this client makes oras-go's own checks."""
    oras_ = Oras(served.client)
    found = oras_.discover("open/single/generic", "1.0.0")
    subject = _digest(served.client, "open/single/generic", "1.0.0")
    assert [(f.subject, f.descriptor["artifactType"]) for f in found] == [
        (subject, IN_TOTO),
        (subject, CYCLONEDX),
    ]
    asked = [path for method, path, _ in oras_.requests if "/referrers/" in path]
    assert len(asked) == 3  # the version, then each referrer (empty), never a fallback tag
    assert not any("/manifests/sha256-" in path for _, path, _ in oras_.requests)
    only = oras_.discover("open/single/generic", "1.0.0", artifact_type=CYCLONEDX)
    assert [f.descriptor["artifactType"] for f in only] == [CYCLONEDX]
    pulled = Oras(served.client).pull("open/single/generic", str(found[0].descriptor["digest"]))
    assert list(pulled) == ["open-single-generic-1.0.0.intoto.json"]
    private = Oras(served.client, bearer(READER))
    assert len(private.discover("secret/single/generic", "1.0.0")) == 1
    with pytest.raises(Failed, match="401"):
        Oras(served.client).discover("secret/single/generic", "1.0.0")


def test_oras_py_pulls_a_referrer_by_digest(served: Served, tmp_path: Path) -> None:
    found = Oras(served.client).discover("open/single/generic", "1.0.0")
    client = oras.client.OrasClient(hostname=served.host, tls_verify=str(served.tls.ca_cert))
    digest = found[0].descriptor["digest"]
    files = client.pull(target=f"{served.host}/open/single/generic@{digest}", outdir=str(tmp_path))
    (pulled,) = (Path(f) for f in files)
    assert pulled.name == "open-single-generic-1.0.0.intoto.json"
    assert json.loads(pulled.read_bytes())["payloadType"] == IN_TOTO


def test_tags_and_opentofu_installs_are_unchanged(served: Served) -> None:
    tags = served.client.get("/v2/open/single/generic/tags/list").json()["tags"]
    assert tags == ["1.0.0", "1.1.0", "latest"]  # no `sha256-<hex>` fallback tags
    manifest = served.client.get("/v2/open/single/generic/manifests/1.0.0").json()
    assert "subject" not in manifest
    assert "main.tf" in TofuOci(served.client).module("open/single/generic", "1.0.0").namelist()


def test_a_process_that_never_listed_them_finds_them_by_digest(
    served: Served, tls: TlsMaterial
) -> None:
    """After a restart (or on another replica) the same bytes are made again: found by digest
    without the referrers API asked first, each version's attachments made once (newest
    first), and again after a reload, whose catalog the producers may read differently."""
    repository = "open/single/generic"
    subject = _digest(served.client, repository, "1.0.0")
    listed = served.client.get(f"/v2/{repository}/referrers/{subject}")
    (provenance, sbom) = _index(listed)
    layer = served.client.get(f"/v2/{repository}/manifests/{sbom['digest']}").json()["layers"][0]
    producers = Producers()
    yaml = served.root / "registry.yaml"
    with served_over_tls(yaml, tls, attached=producers.attached) as (server, client):
        manifest = client.get(f"/v2/{repository}/manifests/{provenance['digest']}")
        assert manifest.status_code == 200 and _sha256(manifest.content) == provenance["digest"]
        blob = client.get(f"/v2/{repository}/blobs/{layer['digest']}")
        assert blob.status_code == 200 and _sha256(blob.content) == layer["digest"]
        for path in (f"manifests/{NO_DIGEST}", f"blobs/{NO_DIGEST}", f"manifests/{NO_DIGEST}"):
            assert client.get(f"/v2/{repository}/{path}").status_code == 404
        once = {(repository, "1.1.0"): 1, (repository, "1.0.0"): 1}
        assert producers.calls == once
        assert client.get(f"/v2/{repository}/referrers/{subject}").content == listed.content
        assert producers.calls == once
        assert server.reload()
        assert client.get(f"/v2/{repository}/referrers/{subject}").content == listed.content
        assert producers.calls[(repository, "1.0.0")] == 2


def test_the_referrers_block_runs(tmp_path: Path, tls: TlsMaterial) -> None:
    """docs/opentofu-oci.md's curl commands, as they are, against a server on 127.0.0.1; the
    version the HEAD by tag made is found again with no other version's zip built."""
    vpc = GitRepo(tmp_path / "vpc")
    vpc.release("v1.2.0", module_files("1.2.0"))
    vpc.release("v1.3.0", module_files("1.3.0"))
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\noci: {enabled: true}\n"
        "modules:\n  - {namespace: infra, name: vpc, system: aws, repo: vpc}\n"
    )
    producers = Producers()
    yaml = tmp_path / "registry.yaml"
    with (
        claimed("opentofu-oci.md", "test_the_referrers_block_runs") as page,
        served_over_tls(yaml, tls, attached=producers.attached) as (server, _),
    ):
        block = page.take("sh", "/referrers/").replace("https://registry.example.com", server.url)
        env = {"PATH": os.environ["PATH"], "CURL_CA_BUNDLE": str(tls.ca_cert)}
        index = json.loads(run_sh(block, tmp_path, env).stdout)
    assert index["mediaType"] == INDEX
    assert [m["artifactType"] for m in index["manifests"]] == [IN_TOTO]
    assert len(list((tmp_path / "cache" / "zips").rglob("*.zip"))) == 1
    assert producers.calls == {("infra/vpc/aws", "1.2.0"): 1}


SKOPEO = shutil.which("skopeo")


@pytest.mark.skipif(SKOPEO is None, reason="skopeo is not installed (apt-get install skopeo)")
def test_skopeo_inspects_and_copies_a_referrer(served: Served, tmp_path: Path) -> None:
    assert SKOPEO is not None
    found = Oras(served.client).discover("open/single/generic", "1.0.0")
    digest = str(found[1].descriptor["digest"])
    certs = tmp_path / "certs"
    certs.mkdir()
    shutil.copy(served.tls.ca_cert, certs / "ca.crt")
    (tmp_path / "auth.json").write_text('{"auths": {}}')  # never the user's credentials
    options = ["--cert-dir", str(certs), "--authfile", str(tmp_path / "auth.json")]
    reference = f"docker://{served.host}/open/single/generic@{digest}"
    inspected = subprocess.run(
        [SKOPEO, "inspect", *options, "--raw", reference], capture_output=True, timeout=60
    )
    assert inspected.returncode == 0, inspected.stderr
    assert _sha256(inspected.stdout) == digest  # skopeo verified it too
    copied = subprocess.run(
        [
            SKOPEO,
            "copy",
            "--src-cert-dir",
            str(certs),
            "--authfile",
            str(tmp_path / "auth.json"),
            reference,
            f"dir:{tmp_path / 'copy'}",
        ],
        capture_output=True,
        timeout=60,
    )
    assert copied.returncode == 0, copied.stderr
    layer = json.loads(inspected.stdout)["layers"][0]["digest"]
    data = (tmp_path / "copy" / layer.removeprefix("sha256:")).read_bytes()
    assert json.loads(data)["bomFormat"] == "CycloneDX"
