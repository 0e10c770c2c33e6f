"""What OpenTofu (1.12+, read from its source: it cannot be installed here) relies on from a
private registry: the download answer's JSON body, no `use_registry_credentials` (so tofu takes
go-getter's path, which verifies `?checksum=sha256:` and splits `//folder`), and archives that
also open to the registry's token alone, byte for byte what the signed URL gives."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator
from urllib.parse import parse_qs, urlencode

import pytest

from gitreg.process.tlscert import TlsMaterial
from tests.support.private_registry import (
    OTHER,
    READER,
    PrivateRegistry,
    bearer,
    private_registry,
)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, tls: TlsMaterial) -> Iterator[PrivateRegistry]:
    with private_registry(tmp_path_factory.mktemp("tofu"), tls) as registry:
        yield registry


def _download(
    served: PrivateRegistry, module: str, token: str | None = READER
) -> dict[str, object]:
    response = served.client.get(
        f"/v1/modules/{module}/1.0.0/download", headers=bearer(token) if token else None
    )
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    body: dict[str, object] = json.loads(response.content)
    assert body["location"] == response.headers["x-terraform-get"]  # tofu reads the body
    return body


@pytest.mark.parametrize("module", ["secret/single/generic", "secret/vpc/generic"])
def test_a_private_download_sends_tofu_through_go_getter(
    served: PrivateRegistry, module: str
) -> None:
    # With `use_registry_credentials` (true or false) tofu would fetch the URL itself, verbatim:
    # no checksum verified, and a folder module's `//folder` asked for as a path (a 404).
    body = _download(served, module)
    assert set(body) == {"location"}
    assert "signature=" in str(body["location"]) and "checksum=sha256:" in str(body["location"])


def test_a_public_download_does_not(served: PrivateRegistry) -> None:
    for token in (None, READER):
        body = _download(served, "open/single/generic", token)
        assert "use_registry_credentials" not in body
        assert "signature=" not in str(body["location"])


def test_a_git_location_does_not(served: PrivateRegistry) -> None:
    # A git:: location never gets the registry's token, from either client.
    body = _download(served, "secret/vpcgit/generic")
    assert str(body["location"]).startswith("git::https://git.example.com/infra/mono.git")
    assert "use_registry_credentials" not in body


def _archive_path(served: PrivateRegistry, module: str) -> tuple[str, str]:
    """The archive's path (no `//folder`, which a client keeps for itself) and its query."""
    location = str(_download(served, module)["location"])
    path, _, query = location.partition("?")
    return path.split(".tar.gz", 1)[0] + ".tar.gz", query


@pytest.mark.parametrize("module", ["secret/single/generic", "secret/vpc/generic"])
def test_the_archive_opens_to_the_token_alone_with_the_same_bytes(
    served: PrivateRegistry, module: str
) -> None:
    path, query = _archive_path(served, module)
    signed = served.client.get(f"{path}?{query}")
    assert signed.status_code == 200
    with_token = served.client.get(path, headers=served.reader())
    assert with_token.status_code == 200, with_token.text
    assert with_token.content == signed.content
    assert with_token.headers["content-type"] == "application/gzip"
    # What tofu sends from a netrc: the token as Basic auth's password.
    basic = base64.b64encode(f"anyone:{READER}".encode()).decode()
    from_netrc = served.client.get(path, headers={"Authorization": f"Basic {basic}"})
    assert from_netrc.status_code == 200 and from_netrc.content == signed.content


def test_the_archive_refuses_without_a_signature_or_a_token(served: PrivateRegistry) -> None:
    path, _ = _archive_path(served, "secret/single/generic")
    bare = served.client.get(path)
    assert bare.status_code == 403
    assert "this download needs a signed URL" in bare.json()["errors"][0]
    outside = served.client.get(path, headers=bearer(OTHER))
    assert outside.status_code == 403
    assert "token 'other' may not read module secret/single/generic" in outside.json()["errors"][0]
    unknown = served.client.get(path, headers=bearer("not-a-token-we-issued"))
    assert unknown.status_code == 401 and unknown.headers["www-authenticate"]


# OpenTofu's two module paths (internal/registry/client.go at v1.12.6, lines 214-244): an answer
# without `use_registry_credentials` goes to go-getter, as Terraform's does; one with it (true or
# false) is fetched by tofu itself (`preparePackageLocationDirect`, 437-460, then
# `InstallModulePackage`, 300-376): one GET of the URL verbatim, with the token when true; only
# the body's length is checked against Content-Length; no checksum, and `//folder` not split.


def _go_getter_request(location: str) -> tuple[str, str, str]:
    """What go-getter (v1.8.6, upstream, which tofu 1.12 uses unforked) makes of a location:
    the folder split off before the first `?`, the query after it moved back onto the package
    (`SourceDirSubdir`, source.go:20-55); `checksum` read as `sha256:<hex>` and deleted, the
    rest re-encoded sorted by key (client.go:221-227, url.Values.Encode). Returns the path and
    query it asks for, and the expected hex digest."""
    stop = location.find("?") if "?" in location else len(location)
    package, folder = location, ""
    if (split := location.find("//", 0, stop)) >= 0:
        package, folder = location[:split], location[split + 2 :]
        if "?" in folder:
            folder, query = folder.split("?", 1)
            package += "?" + query
    path, _, query = package.partition("?")
    params = parse_qs(query, keep_blank_values=True)
    kind, _, digest = params.pop("checksum")[0].partition(":")
    assert kind == "sha256" and len(bytes.fromhex(digest)) == 32  # hex.DecodeString must pass
    return path, urlencode(sorted((k, v) for k, vs in params.items() for v in vs)), digest


@pytest.mark.parametrize(
    ("module", "token"),
    [
        ("open/single/generic", None),
        ("secret/single/generic", READER),
        ("secret/vpc/generic", READER),  # a folder: `….tar.gz//modules/vpc?checksum=…&expires=…`
    ],
)
def test_go_getter_verifies_the_checksum_of_what_the_location_names(
    served: PrivateRegistry, module: str, token: str | None
) -> None:
    location = str(_download(served, module, token)["location"])
    path, query, digest = _go_getter_request(location)
    head = served.client.head(f"{path}?{query}" if query else path)  # sent first, no token
    got = served.client.get(f"{path}?{query}" if query else path)
    assert head.status_code == got.status_code == 200, got.text
    assert hashlib.sha256(got.content).hexdigest() == digest  # else "Checksums did not match"


def test_a_token_opens_a_private_archive_as_its_signed_url_does(served: PrivateRegistry) -> None:
    """The archive also opens to the registry's token alone (tofu's direct mode, were an answer
    ever to send it there), with the same bytes."""
    location = str(_download(served, "secret/single/generic")["location"])
    path, _, _ = location.partition("?")
    signed = served.client.get(location)
    with_token = served.client.get(path, headers=served.reader())
    assert signed.status_code == with_token.status_code == 200
    assert with_token.content == signed.content
