"""Signed download URLs over real HTTP: every way a URL can be wrong is a 403 that says why
(never a 500); keys rotate; a URL whose token was removed, changed or narrowed stops opening
at the next reload; and private files tell shared caches to keep out."""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

import pytest

from gitreg.auth.signed_urls import EXPIRY_STEP, UrlSigner
from gitreg.process.tlscert import TlsMaterial
from tests.support import browser_sessions
from tests.support.private_registry import (
    MIRROR,
    NEW_KEY,
    OLD_KEY,
    READER,
    WIDGET_ZIP,
    PrivateRegistry,
    bearer,
    private_registry,
)
from tests.support.servers import wait_until

Query = dict[str, str]
# What the reader token's name stands for, which its URLs are signed over (its digest).
READER_BINDING = f"token:{hashlib.sha256(READER.encode()).hexdigest()}"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("signed")


@pytest.fixture(scope="module")
def served(root: Path, tls: TlsMaterial) -> Iterator[PrivateRegistry]:
    """Signs with the new key; still accepts the old one (previous_signing_key_file)."""
    with private_registry(root, tls) as registry:
        yield registry


def _signed(served: PrivateRegistry, module: str) -> tuple[str, Query]:
    """A private module's archive path (without its `//folder`) and the query that signs it."""
    response = served.client.get(f"/v1/modules/{module}/1.0.0/download", headers=served.reader())
    location = response.json()["location"]
    path, _, query = location.partition("?")
    return path.split(".tar.gz", 1)[0] + ".tar.gz", dict(parse_qsl(query))


def _get(served: PrivateRegistry, path: str, query: Query) -> tuple[int, str]:
    response = served.client.get(f"{path}?{urlencode(query)}" if query else path)
    assert response.status_code != 500, response.text
    message = response.json()["errors"][0] if response.status_code != 200 else ""
    return response.status_code, message


def test_a_signed_url_opens_its_archive(served: PrivateRegistry) -> None:
    for module in ("secret/single/generic", "secret/vpc/generic"):
        path, query = _signed(served, module)
        checksum = query.pop("checksum")
        assert set(query) == {"expires", "by", "signature"} and query["by"] == "reader"
        # The expiry's value against a clock is UrlSigner's unit tests' (an injected `now`).
        assert int(query["expires"]) % EXPIRY_STEP == 0
        assert _get(served, path, query) == (200, "")
        # As go-getter asks: without the checksum, the rest sorted by name; and the URL as
        # given, checksum included (a client that fetches it verbatim).
        assert _get(served, path, dict(sorted(query.items()))) == (200, "")
        assert _get(served, path, {"checksum": checksum, **query}) == (200, "")
        body = served.client.get(f"{path}?{urlencode(query)}").content
        assert checksum == f"sha256:{hashlib.sha256(body).hexdigest()}"
        # A HEAD (go-getter sends one first) meets the same gate, and gives the same length.
        head = served.client.head(f"{path}?{urlencode(query)}")
        assert head.status_code == 200 and head.content == b""
        assert head.headers["content-length"] == str(len(body))
        assert served.client.head(path).status_code == served.client.get(path).status_code == 403


def _flip(text: str) -> str:
    return ("B" if text[0] == "A" else "A") + text[1:]


Tamper = Callable[[Query], Query]
TAMPERED: dict[str, tuple[Tamper, str]] = {
    "signature changed": (
        lambda q: {**q, "signature": _flip(q["signature"])},
        "signature does not verify",
    ),
    "expiry moved later": (
        lambda q: {**q, "expires": str(int(q["expires"]) + 3600)},
        "signature does not verify",
    ),
    "expiry not a number": (lambda q: {**q, "expires": "soon"}, "expiry is not a time"),
    "expiry too long": (lambda q: {**q, "expires": "9" * 40}, "expiry is not a time"),
    "expiry in superscript digits": (lambda q: {**q, "expires": "²"}, "expiry is not a time"),
    "expiry in Arabic-Indic digits": (lambda q: {**q, "expires": "١٢٣"}, "expiry is not a time"),
    "by another token": (lambda q: {**q, "by": "other"}, "signature does not verify"),
    "by no token": (lambda q: {**q, "by": "nobody"}, "'nobody') is no longer configured"),
    "no signature": (
        lambda q: {k: v for k, v in q.items() if k != "signature"},
        "needs a signed URL",
    ),
    "no expiry": (lambda q: {k: v for k, v in q.items() if k != "expires"}, "needs a signed URL"),
    "no query": (lambda q: {}, "needs a signed URL"),
    "empty signature": (lambda q: {**q, "signature": ""}, "signature does not verify"),
}


@pytest.mark.parametrize("case", list(TAMPERED))
def test_a_wrong_url_is_refused_and_says_why(served: PrivateRegistry, case: str) -> None:
    path, query = _signed(served, "secret/single/generic")
    tamper, message = TAMPERED[case]
    status, said = _get(served, path, tamper(query))
    assert status == 403 and message in said, said


def test_a_signature_for_one_archive_does_not_open_another(served: PrivateRegistry) -> None:
    single, single_query = _signed(served, "secret/single/generic")
    vpc, vpc_query = _signed(served, "secret/vpc/generic")
    status, said = _get(served, vpc, single_query)
    assert status == 403 and "signature does not verify" in said
    # Nor a provider file, nor the same archive under another module's name.
    files = "/v1/provider-files/secret/widget/1.0.0"
    assert _get(served, f"{files}/{WIDGET_ZIP}", vpc_query)[0] == 403
    commit_file = single.rsplit("/", 1)[1]
    assert _get(served, f"/v1/archives/secret/vpc/generic/{commit_file}", single_query)[0] == 403


def test_an_expired_url_is_refused(served: PrivateRegistry) -> None:
    path, _ = _signed(served, "secret/single/generic")
    signer = UrlSigner([NEW_KEY], ttl=600)
    an_hour_ago = dict(
        parse_qsl(signer.query(path, "reader", now=time.time() - 3600, binding=READER_BINDING))
    )
    status, said = _get(served, path, an_hour_ago)
    assert status == 403 and "has expired" in said, said
    fresh = dict(
        parse_qsl(signer.query(path, "reader", binding=READER_BINDING))
    )  # the same key, now: it opens
    assert _get(served, path, fresh) == (200, "")


def test_a_provider_file_url_is_checked_too(served: PrivateRegistry) -> None:
    body = served.client.get(
        "/v1/providers/secret/widget/1.0.0/download/linux/amd64", headers=served.reader()
    ).json()
    for key in ("download_url", "shasums_url", "shasums_signature_url"):
        path, _, text = body[key].partition("?")
        query = dict(parse_qsl(text))
        assert _get(served, path, query) == (200, ""), key
        assert _get(served, path, {**query, "by": "other"})[0] == 403, key
        assert _get(served, path, {})[0] == 403, key


def test_a_url_signed_with_a_rotated_out_key(
    served: PrivateRegistry, root: Path, tls: TlsMaterial
) -> None:
    path, _ = _signed(served, "secret/single/generic")
    by_old = dict(
        parse_qsl(UrlSigner([OLD_KEY], ttl=600).query(path, "reader", binding=READER_BINDING))
    )
    by_new = dict(
        parse_qsl(UrlSigner([NEW_KEY], ttl=600).query(path, "reader", binding=READER_BINDING))
    )
    # Listed as the previous key, the old one still opens what it signed.
    assert _get(served, path, by_old) == (200, "")
    assert _get(served, path, by_new) == (200, "")
    # Once it is dropped from registry.yaml, it opens nothing.
    with private_registry(root / "rotated", tls, "  signing_key_file: new.key\n") as rotated:
        path, by_new = _signed(rotated, "secret/single/generic")
        by_old = dict(
            parse_qsl(UrlSigner([OLD_KEY], ttl=600).query(path, "reader", binding=READER_BINDING))
        )
        status, said = _get(rotated, path, by_old)
        assert status == 403 and "signature does not verify" in said, said
        assert _get(rotated, path, by_new) == (200, "")


def _caching(served: PrivateRegistry, path: str, query: Query) -> str:
    response = served.client.get(f"{path}?{urlencode(query)}" if query else path)
    assert response.status_code == 200, response.text
    return response.headers["cache-control"]


def test_private_files_are_kept_from_shared_caches(served: PrivateRegistry) -> None:
    path, query = _signed(served, "secret/single/generic")
    assert _caching(served, path, query).startswith("private")
    public = served.client.get("/v1/modules/open/single/generic/1.0.0/download").json()
    assert _caching(served, public["location"], {}).startswith("public")
    for namespace, headers in (("secret", served.reader()), ("open", None)):
        body = served.client.get(
            f"/v1/providers/{namespace}/widget/1.0.0/download/linux/amd64", headers=headers
        ).json()
        for key in ("download_url", "shasums_url", "shasums_signature_url"):
            path, _, text = body[key].partition("?")
            caching = _caching(served, path, dict(parse_qsl(text)))
            expected = "private" if namespace == "secret" else "public"
            assert caching.startswith(expected), (namespace, key, caching)


def test_a_signature_outside_ascii_is_refused(served: PrivateRegistry) -> None:
    path, query = _signed(served, "secret/single/generic")
    for signature in ("é", "\u00ff" * 43, "x\x00"):
        status, said = _get(served, path, {**query, "signature": signature})
        assert status == 403 and "signature does not verify" in said, said


def test_the_mirror_signs_its_archive_urls_and_keeps_them_from_shared_caches(
    served: PrivateRegistry,
) -> None:
    folder = "/v1/mirror/registry.example.test/secret/widget"
    answer = served.client.get(f"{folder}/1.0.0.json", headers=bearer(MIRROR))
    assert answer.status_code == 200, answer.text
    url = answer.json()["archives"]["linux_amd64"]["url"]
    path, _, text = url.partition("?")
    assert path == f"{folder}/{WIDGET_ZIP}"
    query = dict(parse_qsl(text))
    assert query["by"] == "mirror"
    assert _caching(served, path, query).startswith("private")
    assert _get(served, path, {**query, "signature": _flip(query["signature"])})[0] == 403
    assert _get(served, path, {})[0] == 403
    with_token = served.client.get(path, headers=bearer(MIRROR))
    assert with_token.status_code == 200
    assert with_token.headers["cache-control"].startswith("private")


EDITS: dict[str, tuple[Callable[[str], str], str]] = {
    "removed": (
        lambda text: re.sub(r" *- \{name: reader,[^}]*\}\n", "", text),
        "('reader') is no longer configured",
    ),
    "changed": (
        lambda text: text.replace(
            hashlib.sha256(READER.encode()).hexdigest(), hashlib.sha256(b"rotated").hexdigest()
        ),
        "signature does not verify",
    ),
    "narrowed": (
        lambda text: text.replace("read: [secret]}", "read: [elsewhere]}", 1),
        "('reader') no longer opens it",
    ),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_a_url_of_a_token_removed_changed_or_narrowed_stops_at_the_reload(
    tmp_path: Path, tls: TlsMaterial, edit: str
) -> None:
    catalog = browser_sessions.private_catalog(tmp_path)
    change, message = EDITS[edit]
    with browser_sessions.served(catalog, tls, refresh=True) as client:
        answer = client.get(
            "/v1/modules/secret/single/generic/1.0.0/download", headers=bearer(READER)
        )
        location = answer.json()["location"].split("//", 1)[0]
        assert client.get(location).status_code == 200
        catalog.source.write_text(change(catalog.source.read_text()))
        wait_until(lambda: client.get(location).status_code == 403, 30, "the reload")
        refused = client.get(location)
    assert message in refused.json()["errors"][0], refused.text
