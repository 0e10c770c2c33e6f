"""The origin client against a scripted origin over TLS: what it believes, what it refuses, and
how it leaves a failing origin alone."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitreg.address import ProviderAddress
from gitreg.catalog.mirror_settings import MirrorSettings
from gitreg.catalog.secrets import SecretRef
from gitreg.errors import OriginError, OriginUnavailable
from gitreg.mirror.origin import RETRY_AFTER, OriginRegistry
from gitreg.mirror.readthrough import ReadThrough
from gitreg.process.tlscert import TlsMaterial
from gitreg.providers.hashes import HashCache
from tests.support.clock import Clock
from tests.support.origin_server import Answer, ScriptedOrigin
from tests.support.provider_releases import new_key

HOST = "origin.example.test"
ADDRESS = ProviderAddress.parse(f"{HOST}/acme/widget")
KEY = new_key("origin")
DOWNLOAD = "/v1/providers/acme/widget/1.0.0/download/linux/amd64"


@pytest.fixture
def origin(tls: TlsMaterial) -> Iterator[ScriptedOrigin]:
    with ScriptedOrigin(tls) as served:
        yield served


def client(origin: ScriptedOrigin, tls: TlsMaterial, **kwargs: object) -> OriginRegistry:
    settings = MirrorSettings(origins=((HOST, origin.url),), ca_file=tls.ca_cert)
    return OriginRegistry(settings, **kwargs)  # type: ignore[arg-type]


def test_a_release_is_verified_and_named_by_gitreg(
    origin: ScriptedOrigin, tls: TlsMaterial
) -> None:
    origin.publish(KEY, "widget", {"1.0.0": ("linux_amd64", "darwin_arm64")})
    registry = client(origin, tls)
    assert registry.versions(ADDRESS) == ["1.0.0"]
    release = registry.release(ADDRESS, "1.0.0")
    assert [(p.os, p.arch, p.filename) for p in release.packages] == [
        ("linux", "amd64", "terraform-provider-widget_1.0.0_linux_amd64.zip"),
        ("darwin", "arm64", "terraform-provider-widget_1.0.0_darwin_arm64.zip"),
    ]
    assert release.packages[0].url == f"{origin.url}files/1.0.0/linux_amd64.zip"
    registry.close()


def test_a_hostile_file_name_never_leaves_the_cache(
    origin: ScriptedOrigin, tls: TlsMaterial, tmp_path: Path
) -> None:
    zips = origin.publish(
        KEY, "widget", {"1.0.0": ("linux_amd64",)}, filename="../../../../escaped_{platform}.zip"
    )
    mirror = ReadThrough(
        MirrorSettings(), tmp_path / "cache", HashCache(), origin=client(origin, tls)
    )
    name = "terraform-provider-widget_1.0.0_linux_amd64.zip"
    assert [p.filename for p in mirror.packages(ADDRESS, "1.0.0") or []] == [name]
    path = mirror.archive(ADDRESS, name)
    assert (
        path
        == tmp_path
        / "cache"
        / "mirror"
        / "origin.example.test"
        / "acme"
        / "widget"
        / "1.0.0"
        / name
    )
    assert path.read_bytes() == zips[name]
    assert not list(tmp_path.rglob("escaped*"))
    assert mirror.archive(ADDRESS, "../../../../escaped_linux_amd64.zip") is None
    mirror.close()


def test_entries_the_protocol_does_not_allow_are_skipped(
    origin: ScriptedOrigin, tls: TlsMaterial
) -> None:
    origin.publish(KEY, "widget", {"1.0.0": ("linux_amd64",)})
    good = {"version": "1.0.0", "platforms": [{"os": "linux", "arch": "amd64"}]}
    hostile = [{"os": "../etc", "arch": "amd64"}, {"os": "linux"}, "linux_amd64", None]
    origin.json(
        "/v1/providers/acme/widget/versions",
        {
            "versions": [
                {"version": "v2"},
                42,
                {"version": "2.x"},
                {**good, "platforms": [*hostile, *good["platforms"]]},
            ]
        },
    )
    registry = client(origin, tls)
    assert registry.versions(ADDRESS) == ["1.0.0"]
    assert [(p.os, p.arch) for p in registry.release(ADDRESS, "1.0.0").packages] == [
        ("linux", "amd64")
    ]
    registry.close()


@pytest.mark.parametrize(
    ("path", "answer", "message"),
    [
        (
            "/.well-known/terraform.json",
            Answer(body=b'{"modules.v1": "/m/"}'),
            "offers no providers.v1",
        ),
        ("/.well-known/terraform.json", Answer(body=b"<html>"), "not JSON"),
        (
            "/v1/providers/acme/widget/versions",
            Answer(body=b'{"versions": {}}'),
            "no 'versions' list",
        ),
        ("/v1/providers/acme/widget/versions", Answer(status=404, body=b"{}"), "HTTP 404"),
        (DOWNLOAD, Answer(body=b'{"os": "linux"}'), "not a provider package answer"),
        (
            "/files/1.0.0/SHA256SUMS.sig",
            Answer(body=bytes(new_key("impostor").sign(b"x"))),
            "not signed by any key the origin lists",
        ),
        ("/files/1.0.0/SHA256SUMS", Answer(body=b"0" * 64 + b"  x.zip\n"), "not signed by any key"),
        (DOWNLOAD, None, "is not listed with its shasum"),  # signed file, another checksum
        (
            "/v1/providers/acme/widget/versions",
            Answer(body=b'{"versions": [{"version": "1.0.0", "platforms": 5}]}'),
            "lists no platform",
        ),
        (
            DOWNLOAD,
            Answer(body=b'{"signing_keys": {"gpg_public_keys": 7}}'),
            "not a provider package",
        ),
    ],
)
def test_answers_that_cannot_be_used_are_refused_with_the_reason(
    origin: ScriptedOrigin,
    tls: TlsMaterial,
    tmp_path: Path,
    path: str,
    answer: Answer | None,
    message: str,
) -> None:
    origin.publish(KEY, "widget", {"1.0.0": ("linux_amd64",)})
    if answer is None:
        body = json.loads(origin.answers[path].body)
        origin.json(path, {**body, "shasum": "0" * 64})
    else:
        origin.answers[path] = answer
    registry = client(origin, tls)
    with pytest.raises(OriginError, match=message) as raised:
        registry.release(ADDRESS, "1.0.0")
    assert not isinstance(raised.value, OriginUnavailable)
    assert not registry.is_down(HOST)  # the origin answered: it is not down
    mirror = ReadThrough(MirrorSettings(), tmp_path, HashCache(), origin=registry)
    assert mirror.packages(ADDRESS, "1.0.0") is None  # a miss, and nothing kept
    assert not list(tmp_path.rglob("release.json"))
    mirror.close()


def test_an_origin_that_fails_is_left_alone_for_a_while(
    origin: ScriptedOrigin, tls: TlsMaterial
) -> None:
    origin.publish(KEY, "widget", {"1.0.0": ("linux_amd64",)})
    clock = Clock()
    registry = client(origin, tls, clock=clock)
    origin.down = True
    with pytest.raises(OriginUnavailable, match="HTTP 503"):
        registry.versions(ADDRESS)
    assert registry.is_down(HOST) and sum(origin.asked.values()) == 1
    with pytest.raises(OriginUnavailable, match="failed less than"):
        registry.versions(ADDRESS)
    assert sum(origin.asked.values()) == 1  # not asked again
    origin.down = False
    clock.now += RETRY_AFTER + 1
    assert registry.versions(ADDRESS) == ["1.0.0"]
    registry.close()


def test_an_origin_that_does_not_listen_is_unavailable(tls: TlsMaterial, tmp_path: Path) -> None:
    settings = MirrorSettings(origins=((HOST, "https://127.0.0.1:9/"),), ca_file=tls.ca_cert)
    registry = OriginRegistry(settings)
    with pytest.raises(OriginUnavailable):
        registry.versions(ADDRESS)
    assert registry.is_down(HOST)
    mirror = ReadThrough(settings, tmp_path, HashCache(), origin=registry)
    assert mirror.versions(ADDRESS) is None and mirror.packages(ADDRESS, "1.0.0") is None
    mirror.close()


@pytest.mark.parametrize("length", [True, False], ids=["announced", "streamed"])
def test_an_archive_larger_than_allowed_is_refused_and_not_kept(
    origin: ScriptedOrigin, tls: TlsMaterial, tmp_path: Path, length: bool
) -> None:
    origin.publish(KEY, "widget", {"1.0.0": ("linux_amd64",)})
    origin.answers["/files/1.0.0/linux_amd64.zip"].length = length
    mirror = ReadThrough(
        MirrorSettings(), tmp_path, HashCache(), origin=client(origin, tls, max_archive_bytes=100)
    )
    with pytest.raises(OriginError, match="more than the 100 bytes allowed"):
        mirror.archive(ADDRESS, "terraform-provider-widget_1.0.0_linux_amd64.zip")
    assert not list(tmp_path.rglob("*.zip")) and not list(tmp_path.rglob(".*.tmp"))
    mirror.close()


def test_a_token_goes_to_the_origin_and_never_to_its_download_host(
    tls: TlsMaterial, tmp_path: Path
) -> None:
    with ScriptedOrigin(tls, token="s3cret") as api, ScriptedOrigin(tls) as files:
        zips = api.publish(KEY, "widget", {"1.0.0": ("linux_amd64",)}, files=files)
        token_file = tmp_path / "token"
        token_file.write_text("s3cret\n")
        settings = MirrorSettings(
            # A download host at a private address (and a port) is reached only if it is named,
            # and listed among the download hosts; work for HOST never sends it a token, not
            # even the one it has of its own.
            origins=((HOST, api.url), ("files.example.test", files.url)),
            ca_file=tls.ca_cert,
            tokens=(
                (HOST, SecretRef(file=token_file)),
                ("files.example.test", SecretRef(env="PATH")),
            ),
            download_hosts=("files.example.test",),
        )
        mirror = ReadThrough(settings, tmp_path / "cache", HashCache())
        ((name, data),) = zips.items()
        path = mirror.archive(ADDRESS, name)
        assert path is not None and path.read_bytes() == data
        assert set(api.authorization.values()) == {"Bearer s3cret"}  # every API request
        assert len(files.authorization) == 3 and set(files.authorization.values()) == {None}
        mirror.close()


def test_an_origin_that_wants_a_token_says_so(
    tls: TlsMaterial, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ScriptedOrigin(tls, token="s3cret") as api:
        api.publish(KEY, "widget", {"1.0.0": ("linux_amd64",)})
        registry = client(api, tls)
        with pytest.raises(OriginError, match=r"HTTP 401 \(no token is configured for it\)"):
            registry.versions(ADDRESS)
        assert not registry.is_down(HOST)
        registry.close()
        settings = MirrorSettings(
            origins=((HOST, api.url),),
            ca_file=tls.ca_cert,
            tokens=((HOST, SecretRef(env="GITREG_TEST_WRONG_TOKEN")),),
        )
        monkeypatch.setenv("GITREG_TEST_WRONG_TOKEN", "wrong")
        registry = OriginRegistry(settings)
        with pytest.raises(OriginError, match=r"HTTP 401 \(the token was refused\)") as raised:
            registry.versions(ADDRESS)
        assert "wrong" not in str(raised.value)
        registry.close()


def test_a_token_never_follows_a_redirect_that_left_its_origin(
    tls: TlsMaterial, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The zip is on a download host that sends it back to the origin: that last hop carries
    no token, though it is the origin's own host and port."""
    with ScriptedOrigin(tls, token="s3cret") as api, ScriptedOrigin(tls) as files:
        zips = api.publish(KEY, "widget", {"1.0.0": ("linux_amd64",)})
        back = "/files/1.0.0/linux_amd64.zip"
        answer = json.loads(api.answers[DOWNLOAD].body)
        api.json(DOWNLOAD, {**answer, "download_url": f"{files.url}elsewhere.zip"})
        files.answers["/elsewhere.zip"] = Answer(302, headers={"Location": f"{api.url}{back[1:]}"})
        monkeypatch.setenv("GITREG_TEST_TOKEN", "s3cret")
        settings = MirrorSettings(
            origins=((HOST, api.url), ("files.example.test", files.url)),
            ca_file=tls.ca_cert,
            tokens=((HOST, SecretRef(env="GITREG_TEST_TOKEN")),),
            download_hosts=("files.example.test",),
        )
        mirror = ReadThrough(settings, tmp_path / "cache", HashCache())
        ((name, data),) = zips.items()
        path = mirror.archive(ADDRESS, name)
        assert path is not None and path.read_bytes() == data
        assert files.authorization == {"/elsewhere.zip": None}
        assert api.authorization.pop(back) is None and api.asked[back] == 1
        assert set(api.authorization.values()) == {"Bearer s3cret"}  # before it left: all
        mirror.close()
