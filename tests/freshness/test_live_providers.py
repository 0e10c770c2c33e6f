"""registry.yaml edited while serving, the provider side: hosted providers, signing keys, mirror
folders, hostname and origins follow a valid edit without a restart, over real HTTPS."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pgpy
import pytest

from gitreg.catalog.load import load_catalog
from gitreg.catalog.settings import TlsFiles
from gitreg.process.tlscert import TlsMaterial
from gitreg.signing import Keyring
from tests.support.provider_releases import new_key, provider_zip, write_key, write_release
from tests.support.servers import RegistryServer, wait_until
from tests.support.tls_clients import served_over_tls, trusting

WIDGET = "  - {namespace: acme, type: widget, artifacts: widget}\n"
GADGET = "  - {namespace: acme, type: gadget, artifacts: gadget}\n"


def _catalog(
    providers: str = WIDGET,
    keys: str = "a.asc",
    folders: str = "m1",
    hostname: str = "registry.example.test",
    mirror: str = "",
) -> str:
    return (
        f"hostname: {hostname}\ncache_dir: cache\nrefresh_interval: 1h\n"
        f"signing: {{keys: [{keys}]}}\nproviders:\n{providers}"
        f"mirror: {mirror or f'{{folders: [{folders}], read_through: false}}'}\n"
    )


def _mirror_folder(root: Path, provider_type: str, version: str) -> None:
    """A folder as `terraform providers mirror` writes it, holding one package."""
    folder = root / "example.com" / "test" / provider_type
    folder.mkdir(parents=True)
    name = f"terraform-provider-{provider_type}_{version}_linux_amd64.zip"
    (folder / name).write_bytes(provider_zip(provider_type, version))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """Two signing keys, widget 1.0.0 and gadget 2.0.0 (unsigned: gitreg signs them), and two
    mirror folders, one with test/thing, one with test/other."""
    write_key(new_key("a"), tmp_path / "a.asc")
    write_key(new_key("b"), tmp_path / "b.asc")
    write_release(tmp_path / "widget" / "1.0.0", "widget", "1.0.0", ("linux_amd64",))
    write_release(tmp_path / "gadget" / "2.0.0", "gadget", "2.0.0", ("linux_amd64",))
    _mirror_folder(tmp_path / "m1", "thing", "0.1.0")
    _mirror_folder(tmp_path / "m2", "other", "0.2.0")
    return tmp_path


@contextlib.contextmanager
def serving(path: Path, tls: TlsMaterial) -> Iterator[httpx.Client]:
    """gitreg with its background work (the catalog watched), and a client trusting its CA."""
    with served_over_tls(path, tls, refresh=True) as (_, client):
        yield client


def edit(path: Path, text: str, applied: Callable[[], bool], what: str) -> None:
    """Write registry.yaml and wait until the server shows the edit; the watch may not be up
    yet at the first write, so write again now and then (a bounded number of times)."""
    for _ in range(10):
        path.write_text(text)
        with contextlib.suppress(AssertionError):
            wait_until(applied, 3, what)
            return
    wait_until(applied, 1, what)


def _versions(client: httpx.Client, provider_type: str) -> list[str] | int:
    response = client.get(f"/v1/providers/acme/{provider_type}/versions")
    if response.status_code != 200:
        return response.status_code
    return [v["version"] for v in response.json()["versions"]]


def _mirrored(client: httpx.Client, address: str) -> list[str] | int:
    response = client.get(f"/v1/mirror/{address}/index.json")
    return (
        list(response.json()["versions"]) if response.status_code == 200 else response.status_code
    )


def test_a_provider_added_is_served_its_folder_watched_and_one_removed_is_gone(
    root: Path, tls: TlsMaterial
) -> None:
    path = root / "registry.yaml"
    path.write_text(_catalog())
    with serving(path, tls) as client:
        assert _versions(client, "widget") == ["1.0.0"]
        assert _versions(client, "gadget") == 404
        statuses: list[int] = []
        stop = threading.Event()

        def hammer() -> None:  # the provider that stays is served throughout
            context = trusting(tls.ca_cert)
            with httpx.Client(base_url=client.base_url, verify=context) as c:
                for _ in range(2000):  # bounded; stops early when the edits have landed
                    if stop.is_set():
                        return
                    statuses.append(c.get("/v1/providers/acme/widget/versions").status_code)

        worker = threading.Thread(target=hammer)
        worker.start()
        try:
            edit(
                path,
                _catalog(WIDGET + GADGET),
                lambda: _versions(client, "gadget") == ["2.0.0"],
                "gadget to be served",
            )
            assert _mirrored(client, "registry.example.test/acme/gadget") == ["2.0.0"]
            # The new provider's folder is watched: a release dropped there appears.
            write_release(root / "gadget" / "2.1.0", "gadget", "2.1.0", ("linux_amd64",))
            wait_until(
                lambda: _versions(client, "gadget") == ["2.1.0", "2.0.0"],
                30,
                "the release dropped in the new folder",
            )
            edit(
                path,
                _catalog(WIDGET),
                lambda: _versions(client, "gadget") == 404,
                "gadget to be gone",
            )
        finally:
            stop.set()
            worker.join(timeout=30)
        assert statuses and set(statuses) == {200}
        assert _mirrored(client, "registry.example.test/acme/gadget") == 404
        assert _versions(client, "widget") == ["1.0.0"]


def _download(client: httpx.Client) -> dict[str, object]:
    answer: dict[str, object] = client.get(
        "/v1/providers/acme/widget/1.0.0/download/linux/amd64"
    ).json()
    return answer


def _listed_keys(answer: dict[str, object]) -> list[str]:
    keys = answer["signing_keys"]["gpg_public_keys"]  # type: ignore[index]
    return [k["key_id"] for k in keys]


def _signer(client: httpx.Client, answer: dict[str, object]) -> str | None:
    """The listed key that verifies the served SHA256SUMS.sig, as Terraform checks it."""
    sums = client.get(str(answer["shasums_url"])).content
    signature = client.get(str(answer["shasums_signature_url"])).content
    armored = [k["ascii_armor"] for k in answer["signing_keys"]["gpg_public_keys"]]  # type: ignore[index]
    verifier = Keyring.from_armored(armored).verifier_of(sums, signature)
    return verifier.key_id if verifier else None


def _key_id(path: Path) -> str:
    key, _ = pgpy.PGPKey.from_file(str(path))
    return str(key.fingerprint.keyid).upper()


def test_a_new_signing_key_signs_the_releases_and_is_published(
    root: Path, tls: TlsMaterial
) -> None:
    path = root / "registry.yaml"
    path.write_text(_catalog(keys="a.asc"))
    a, b = _key_id(root / "a.asc"), _key_id(root / "b.asc")
    with serving(path, tls) as client:
        first = _download(client)
        assert _listed_keys(first) == [a] and _signer(client, first) == a
        edit(
            path,
            _catalog(keys="b.asc"),
            lambda: _listed_keys(_download(client)) == [b],
            "key b to be published",
        )
        assert _signer(client, _download(client)) == b  # re-signed by the new key
        # Both keys: the first signs, and what it signed before is still served as it was.
        edit(
            path,
            _catalog(keys="b.asc, a.asc"),
            lambda: _listed_keys(_download(client)) == [b, a],
            "keys b and a to be published",
        )
        assert _signer(client, _download(client)) == b


def test_mirror_folders_and_hostname_follow_the_catalog(root: Path, tls: TlsMaterial) -> None:
    path = root / "registry.yaml"
    path.write_text(_catalog(folders="m1"))
    with serving(path, tls) as client:
        assert _mirrored(client, "example.com/test/thing") == ["0.1.0"]
        assert _mirrored(client, "example.com/test/other") == 404
        edit(
            path,
            _catalog(folders="m1, m2"),
            lambda: _mirrored(client, "example.com/test/other") == ["0.2.0"],
            "the new mirror folder to be served",
        )
        zip_name = "terraform-provider-other_0.2.0_linux_amd64.zip"
        got = client.get(f"/v1/mirror/example.com/test/other/{zip_name}")
        assert (
            got.content == (root / "m2" / "example.com" / "test" / "other" / zip_name).read_bytes()
        )
        edit(
            path,
            _catalog(folders="m2", hostname="new.example.test"),
            lambda: _mirrored(client, "new.example.test/acme/widget") == ["1.0.0"],
            "the hosted providers under the new hostname",
        )
        assert _mirrored(client, "registry.example.test/acme/widget") == 404
        assert _mirrored(client, "example.com/test/thing") == 404  # its folder was dropped


def _origin(folder: Path, version: str, tls: TlsMaterial) -> RegistryServer:
    """Another gitreg, as an origin registry serving acme/widget at `version`."""
    folder.mkdir()
    write_key(new_key("origin"), folder / "origin.asc")
    write_release(folder / "releases", "widget", version, ("linux_amd64",))
    (folder / "registry.yaml").write_text(
        "cache_dir: cache\nsigning: {keys: [origin.asc]}\n"
        "providers:\n  - {namespace: acme, type: widget, artifacts: releases}\n"
    )
    return RegistryServer(
        load_catalog(folder / "registry.yaml"), TlsFiles(tls.certfile, tls.keyfile)
    )


def test_a_new_origin_mapping_is_used(root: Path, tls: TlsMaterial) -> None:
    path = root / "registry.yaml"

    def mirror_of(origin: RegistryServer) -> str:
        return f"{{read_through: true, origins: {{origin.example.test: '{origin.url}/'}}, ca_file: {tls.ca_cert}}}"

    with _origin(root / "one", "1.0.0", tls) as one, _origin(root / "two", "2.0.0", tls) as two:
        path.write_text(_catalog(mirror=mirror_of(one)))
        with serving(path, tls) as client:
            assert _mirrored(client, "origin.example.test/acme/widget") == ["1.0.0"]
            edit(
                path,
                _catalog(mirror=mirror_of(two)),
                lambda: _mirrored(client, "origin.example.test/acme/widget") == ["2.0.0"],
                "the new origin to be asked",
            )
            body = client.get("/v1/mirror/origin.example.test/acme/widget/2.0.0.json").json()
            url = body["archives"]["linux_amd64"]["url"]
            got = client.get(f"/v1/mirror/origin.example.test/acme/widget/{url}")
            assert got.status_code == 200
            assert got.content == (root / "two" / "releases" / url).read_bytes()
