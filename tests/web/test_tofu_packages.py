"""The providers.v1 download answer's `packages` map, held to OpenTofu 1.12's client (read from
its source: it cannot be installed here). `tofu_parse` and `tofu_authenticate` are the rules of
`internal/getproviders/registry_client.go` (the answer decoded into Go types, each key through
`ParsePlatform`, each hash through `ParseHash`: any failure fails the whole request) and of
`registryPackageAuthentication.AuthenticatePackage` (package_authentication.go: the requested
platform's entry, its size and its `zh:` against the zip). Every platform's answer passes them;
each malformed answer made from a real one is refused, with tofu's words."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest

from gitreg.process.tlscert import TlsMaterial
from gitreg.providers.hashes import zip_hashes
from tests.support.platform_releases import PLATFORMS, six_platform_registry
from tests.support.site_snippets import claimed
from tests.support.tls_clients import served_over_tls

_INT64 = range(-(2**63), 2**63)
Packages = dict[tuple[str, str], tuple[list[str], int]]


class TofuRefused(Exception):
    """What OpenTofu would fail the request (or the install) with."""


def tofu_parse(body: bytes) -> Packages:
    """`packages` as registry_client.go decodes it into `map[string]struct{Hashes []string;
    PackageSize int64}` and then parses: platform → (hashes, package_size). `null` anywhere is
    Go's zero value; a number with a fraction or an exponent is not an int64."""
    answer = json.loads(body, parse_float=Decimal)
    packages = answer.get("packages")
    if packages is None:
        return {}
    if not isinstance(packages, dict):
        raise TofuRefused("cannot unmarshal packages into map[string]struct")
    parsed: Packages = {}
    for key, entry in packages.items():
        if entry is not None and not isinstance(entry, dict):
            raise TofuRefused(f"cannot unmarshal packages.{key} into struct")
        fields = {k.lower(): v for k, v in (entry or {}).items()}  # Go matches names so
        hashes, size = fields.get("hashes"), fields.get("package_size")
        if hashes is not None and not (
            isinstance(hashes, list) and all(h is None or isinstance(h, str) for h in hashes)
        ):
            raise TofuRefused(f"cannot unmarshal packages.{key}.hashes into []string")
        if size is not None and (type(size) is not int or size not in _INT64):
            raise TofuRefused(f"cannot unmarshal packages.{key}.package_size into int64")
        parts = key.split("_")
        if len(parts) != 2:  # ParsePlatform
            raise TofuRefused(f'invalid package platform "{key}": must be two words')
        if any(re.search(r"[ \t\n\r]", part) for part in parts):
            raise TofuRefused(f'invalid package platform "{key}": must not contain whitespace')
        for raw in hashes or []:
            if (raw or "").find(":") < 1:  # ParseHash: a scheme of one character or more
                raise TofuRefused(f'invalid package hash "{raw}"')
        parsed[(parts[0], parts[1])] = ([h or "" for h in hashes or []], size or 0)
    return parsed


def tofu_authenticate(packages: Packages, os: str, arch: str, shasum: str, package: bytes) -> None:
    """AuthenticatePackage: with no map nothing is checked; else the requested platform's entry
    must exist, its size be the zip's, and its every `zh:` equal `shasum` as a string."""
    if not packages:
        return
    if (os, arch) not in packages:
        raise TofuRefused(f'registry response missing package with platform "{os}_{arch}"')
    hashes, size = packages[(os, arch)]
    if size <= 0:
        raise TofuRefused(f"registry response has invalid package size {size}")
    if size != len(package):
        raise TofuRefused(f"registry response indicates a package of size {size}, but received")
    zip_hashes_listed = [h[3:] for h in hashes if h.startswith("zh:")]
    if any(value != shasum for value in zip_hashes_listed):
        raise TofuRefused("registry response expected sha256sum does not match the platform's")
    if not zip_hashes_listed:
        raise TofuRefused("registry response does not contain matching sha256sum package entry")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, tls: TlsMaterial) -> Iterator[httpx.Client]:
    config = six_platform_registry(tmp_path_factory.mktemp("packages"))
    with served_over_tls(config, tls) as (_, client):
        yield client


def _download(client: httpx.Client, platform: str) -> httpx.Response:
    os, arch = platform.split("_")
    response = client.get(f"/v1/providers/acme/widget/1.0.0/download/{os}/{arch}")
    assert response.status_code == 200, response.text
    return response


@pytest.mark.parametrize("platform", PLATFORMS)
def test_every_platforms_answer_passes_tofus_parser_and_its_check(
    served: httpx.Client, platform: str, tmp_path: Path
) -> None:
    response = _download(served, platform)
    answer = response.json()
    packages = tofu_parse(response.content)
    package = served.get(answer["download_url"]).content
    tofu_authenticate(packages, answer["os"], answer["arch"], answer["shasum"], package)
    # What tofu also checks: shasum is 64 hex and is SHA256SUMS's line for the filename.
    sums = served.get(answer["shasums_url"]).text.splitlines()
    assert f"{answer['shasum']}  {answer['filename']}" in sums
    # Stricter than tofu, what gitreg promises: every platform, each with one zh and one h1.
    assert set(answer["packages"]) == set(PLATFORMS)
    assert answer["packages"][platform]["hashes"][0] == f"zh:{answer['shasum']}"
    for other in PLATFORMS:
        entry = answer["packages"][other]
        assert set(entry) == {"hashes", "package_size"}
        zh, h1 = entry["hashes"]
        name = answer["filename"].replace(platform, other)
        assert f"{zh[3:]}  {name}" in sums  # lowercase hex, as SHA256SUMS lists it
        zipped = served.get(answer["download_url"].replace(platform, other)).content
        assert entry["package_size"] == len(zipped) > 0
        assert zh == f"zh:{hashlib.sha256(zipped).hexdigest()}"
        (tmp_path / name).write_bytes(zipped)
        assert h1 == zip_hashes(tmp_path / name).h1  # the lock file's h1 (test_hashes.py)
    # Integer literals, never "294" or 294.0: tofu's int64 refuses both.
    sizes = re.findall(rb'"package_size":([^,}]*)', response.content)
    assert len(sizes) == len(PLATFORMS) and all(s.isdigit() for s in sizes)


Change = Callable[[dict[str, Any]], None]


def _set(path: tuple[str, ...], value: object) -> Change:
    def change(answer: dict[str, Any]) -> None:
        for key in path[:-1]:
            answer = answer[key]
        answer[path[-1]] = value

    return change


def _rename(old: str, new: str) -> Change:
    def change(answer: dict[str, Any]) -> None:
        answer["packages"][new] = answer["packages"].pop(old)

    return change


def _here(change: Change) -> Change:
    """`change` made to the requested platform's entry."""
    return lambda answer: change(answer["packages"]["linux_amd64"])


HERE = ("packages", "linux_amd64")
# Each a change to linux_amd64's real answer, and the words of tofu's refusal: at parse time
# (the whole request fails) or at the install's check.
MALFORMED: dict[str, tuple[Change, str]] = {
    "packages a list": (_set(("packages",), []), "cannot unmarshal packages"),
    "packages a string": (_set(("packages",), "x"), "cannot unmarshal packages"),
    "hashes a string": (_set((*HERE, "hashes"), "zh:00"), "hashes into []string"),
    "a hash a number": (_set((*HERE, "hashes"), [1]), "hashes into []string"),
    "size a string": (_set((*HERE, "package_size"), "294"), "into int64"),
    "size with a fraction": (_set((*HERE, "package_size"), 294.0), "into int64"),
    "size beyond int64": (_set((*HERE, "package_size"), 2**63), "into int64"),
    "key with a dash": (_rename("darwin_arm64", "darwin-arm64"), "must be two words"),
    "key of three words": (_rename("darwin_arm64", "darwin_arm64_v8"), "must be two words"),
    "key with a space": (_rename("darwin_arm64", "darwin_arm 64"), "whitespace"),
    "hash without a scheme": (_set((*HERE, "hashes"), ["00ff"]), "invalid package hash"),
    "hash with an empty scheme": (_set((*HERE, "hashes"), [":00ff"]), "invalid package hash"),
    "platform missing": (_rename("linux_amd64", "linux_386"), "missing package with platform"),
    "size zero": (_set((*HERE, "package_size"), 0), "invalid package size 0"),
    "size one less": (
        _here(lambda e: e.update(package_size=e["package_size"] - 1)),
        "indicates a package of size",
    ),
    "zh in capitals": (
        _here(lambda e: e.update(hashes=["zh:" + e["hashes"][0][3:].upper(), e["hashes"][1]])),
        "does not match",
    ),
    "no zh": (_here(lambda e: e.update(hashes=e["hashes"][1:])), "matching sha256sum"),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_tofu_refuses_each_malformed_answer(served: httpx.Client, case: str) -> None:
    answer = _download(served, "linux_amd64").json()
    package = served.get(answer["download_url"]).content
    tofu_parse(json.dumps(answer).encode())  # the real one passes
    change, words = MALFORMED[case]
    change(answer)
    with pytest.raises(TofuRefused, match=re.escape(words)):
        packages = tofu_parse(json.dumps(answer).encode())
        tofu_authenticate(packages, "linux", "amd64", answer["shasum"], package)


def test_no_map_is_checked_by_nobody() -> None:
    """A missing or empty map only logs a warning in tofu: nothing to refuse."""
    for body in (b"{}", b'{"packages": null}', b'{"packages": {}}'):
        tofu_authenticate(tofu_parse(body), "linux", "amd64", "00", b"zip")


def test_the_pages_example_is_what_tofu_parses(served: httpx.Client) -> None:
    """docs/providers.md's example answer: tofu's parser takes it, and its entries have the
    shape of gitreg's own."""
    with claimed("providers.md", "test_the_pages_example_is_what_tofu_parses") as page:
        example = json.loads(page.take("json", '"packages"'))
    packages = tofu_parse(json.dumps(example).encode())
    assert set(packages) == {("darwin", "arm64"), ("linux", "amd64")}
    real = _download(served, "linux_amd64").json()["packages"]["linux_amd64"]
    for entry in example["packages"].values():
        assert set(entry) == set(real)
        assert [h[:3] for h in entry["hashes"]] == [h[:3] for h in real["hashes"]]
    assert example["packages"]["linux_amd64"]["hashes"][0] == f"zh:{example['shasum']}"
