"""Each hot route's answers kept with the world served (`gitreg/web/hot_routes.py`,
`kept_routes.py`), over real HTTP: a kept answer is the answer its handler made, byte for byte,
headers included; a swap or a reload makes them again (a new tag, a namespace made private);
and what is signed for one reader is never kept."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from gitreg.process.tlscert import TlsMaterial
from tests.support.gitrepo import GitRepo, git, module_files
from tests.support.private_registry import MIRROR, OTHER, READER, bearer, write_private_registry
from tests.support.servers import RegistryServer
from tests.support.tls_clients import served_over_tls

HOST = "registry.example.test"
GIT_DOWNLOAD = "/v1/modules/open/vpcgit/generic/1.0.0/download"  # download: git, in a folder
# The hot routes of an open namespace (`open`), and who asks each with auth on.
ROUTES = {
    "/.well-known/terraform.json": READER,
    "/v1/modules/open/single/generic/versions": READER,
    "/v1/modules/open/single/generic/1.0.0/download": READER,
    GIT_DOWNLOAD: READER,
    "/v1/modules/secret/single/generic/versions": READER,
    "/v1/providers/open/widget/versions": READER,
    "/v1/providers/open/widget/1.0.0/download/linux/amd64": READER,
    "/v1/providers/secret/widget/versions": READER,
    f"/v1/mirror/{HOST}/open/widget/index.json": MIRROR,
    f"/v1/mirror/{HOST}/secret/widget/index.json": MIRROR,
}
# Answers whose URLs are signed for the reader who asks: with auth on only.
SIGNED = {
    "/v1/modules/secret/single/generic/1.0.0/download": READER,
    "/v1/providers/secret/widget/1.0.0/download/linux/amd64": READER,
    f"/v1/mirror/{HOST}/secret/widget/1.0.0.json": MIRROR,
    f"/v1/mirror/{HOST}/open/widget/1.0.0.json": MIRROR,
}
_EXPIRES = re.compile(r"expires=(\d+)")


def _private_registry(root: Path) -> Path:
    """The private registry's catalog, with a `download: git` module in the open namespace."""
    path = write_private_registry(root, "")
    git_module = (
        f"  - {{namespace: open, name: vpcgit, system: generic, repo: {root / 'mono'},"
        ' path: modules/vpc, tags: "vpc/v{version}", download: git}\n'
    )
    path.write_text(path.read_text().replace("modules:\n", f"modules:\n{git_module}", 1))
    return path


def _open_registry(root: Path) -> Path:
    """The private registry's catalog without its auth: section: the open gate."""
    path = _private_registry(root)
    text = path.read_text()
    path.write_text(text[: text.index("auth:")])
    return path


def _served(config: Path, tls: TlsMaterial) -> Iterator[tuple[RegistryServer, httpx.Client]]:
    with served_over_tls(config, tls) as (server, client):
        yield server, client


def _kept(server: RegistryServer, path: str) -> bool:
    return server.state.kept.get(server.state.current.world, path) is not None


def _answer(response: httpx.Response) -> tuple[int, list[tuple[str, str]], bytes]:
    """What a client gets, but for the two headers that differ between any two requests."""
    headers = [
        (k, v) for k, v in response.headers.multi_items() if k not in ("x-request-id", "date")
    ]
    return response.status_code, headers, response.content


@pytest.mark.parametrize("auth", [False, True], ids=["auth off", "auth on"])
def test_a_kept_answer_is_the_answer_its_handler_made_byte_for_byte(
    tmp_path: Path, tls: TlsMaterial, auth: bool
) -> None:
    config = _private_registry(tmp_path) if auth else _open_registry(tmp_path)
    routes = {**ROUTES, **SIGNED} if auth else ROUTES
    for server, client in _served(config, tls):
        for path, token in routes.items():
            headers = bearer(token) if auth else {}
            for _ in range(3):  # a signed URL's expiry moves every 10 s: both in the same step
                made = client.get(path, headers=headers)
                assert made.status_code == 200, (path, made.text)
                assert _kept(server, path), path
                again = client.get(path, headers=headers)
                if _EXPIRES.findall(made.text) == _EXPIRES.findall(again.text):
                    break
            assert _answer(again) == _answer(made), path
            if auth and ("/secret/" in path or "/mirror/" in path):
                # answered to a principal: no shared cache may keep it, kept or made
                assert again.headers["cache-control"] == "private", path


def test_a_kept_git_location_names_the_published_commit(tmp_path: Path, tls: TlsMaterial) -> None:
    """Made and kept alike: `ref` is the tag's commit, the folder before the query."""
    for server, client in _served(_open_registry(tmp_path), tls):
        commit = git(tmp_path / "mono", "rev-parse", "vpc/v1.0.0^{commit}")
        made = client.get(GIT_DOWNLOAD)
        assert _kept(server, GIT_DOWNLOAD)
        kept = client.get(GIT_DOWNLOAD)
        for answer in (made, kept):
            location = answer.json()["location"]
            assert location == f"git::file://{tmp_path / 'mono'}//modules/vpc?ref={commit}"
            assert answer.headers["x-terraform-get"] == location


def test_a_head_of_a_kept_path_is_its_handlers_head(tmp_path: Path, tls: TlsMaterial) -> None:
    """HEAD before the path is kept goes to its handler; after, it is answered from the kept
    answer: the same status and headers (its length included), and no body."""
    for server, client in _served(_open_registry(tmp_path), tls):
        for path in ROUTES:
            made = client.head(path)
            assert not _kept(server, path), path  # a HEAD keeps nothing
            got = client.get(path)
            world = server.state.current.world
            answer = server.state.kept.get(world, path)
            assert answer is not None, path
            marked = replace(answer, headers=(*answer.headers, (b"x-kept", b"yes")))
            server.state.kept.keep(world, world, path, marked)
            kept = client.head(path)
            assert kept.headers.pop("x-kept") == "yes", path  # answered from the kept answer
            assert _answer(kept) == _answer(made), path
            assert kept.content == b"" and kept.headers["content-length"] == str(len(got.content))


def test_a_refusal_of_a_kept_path_is_its_handlers_refusal(tmp_path: Path, tls: TlsMaterial) -> None:
    """The gate's no before a path's answer is kept (its handler's) and after (sent before
    routing): the same status, headers and body, for a token that may not read it and for none."""
    asked: list[dict[str, str]] = [{}, bearer(OTHER)]
    refused = 0
    for server, client in _served(_private_registry(tmp_path), tls):
        for path, token in {**ROUTES, **SIGNED}.items():
            before = [_answer(client.get(path, headers=headers)) for headers in asked]
            assert client.get(path, headers=bearer(token)).status_code == 200, path
            assert _kept(server, path), path
            after = [_answer(client.get(path, headers=headers)) for headers in asked]
            assert after == before, path
            refused += sum(status in (401, 403) for status, _, _ in before)
    assert refused >= 2 * len(SIGNED)  # the secret namespace's and the mirror's, both ways


def test_a_new_tag_is_in_the_next_versions_answer(tmp_path: Path, tls: TlsMaterial) -> None:
    config = _open_registry(tmp_path)
    config.write_text(config.read_text() + "fresh_reads: 0\n")  # only the swap can tell it
    path = "/v1/modules/open/single/generic/versions"
    for server, client in _served(config, tls):
        assert client.get(path).json()["modules"][0]["versions"] == [{"version": "1.0.0"}]
        assert _kept(server, path)
        GitRepo(tmp_path / "single", init=False).release("v1.1.0", module_files("1.1.0"))
        server.sync.refresh()
        listed = client.get(path).json()["modules"][0]["versions"]
        assert listed == [{"version": "1.1.0"}, {"version": "1.0.0"}]
        assert _kept(server, path)  # kept again, for the new world


def test_a_reload_that_makes_a_namespace_private_changes_its_answers(
    tmp_path: Path, tls: TlsMaterial
) -> None:
    config = _private_registry(tmp_path)
    paths = [
        "/v1/modules/open/single/generic/versions",
        "/v1/modules/open/single/generic/1.0.0/download",
        "/v1/providers/open/widget/versions",
        "/v1/providers/open/widget/1.0.0/download/linux/amd64",
    ]
    for server, client in _served(config, tls):
        public = {path: client.get(path) for path in paths}
        assert all(r.status_code == 200 for r in public.values())
        assert all(_kept(server, path) for path in paths)
        config.write_text(config.read_text().replace("public: [open]", "public: []"))
        assert server.reload()
        for path in paths:
            assert client.get(path).status_code == 401, path
            assert client.get(path, headers=bearer(READER)).status_code == 403, path
        config.write_text(config.read_text().replace("public: []", "public: [open]"))
        assert server.reload()
        for path in paths:
            assert _answer(client.get(path)) == _answer(public[path]), path


def test_an_answer_signed_for_one_reader_is_signed_anew_for_each_other(
    tmp_path: Path, tls: TlsMaterial
) -> None:
    config = _private_registry(tmp_path)
    for server, client in _served(config, tls):
        for path in SIGNED:
            if "/mirror/" in path:
                continue  # one token alone may use the mirror
            first = client.get(path, headers=bearer(READER))
            assert "by=reader&" in first.text and _kept(server, path), path
            other = client.get(path, headers=bearer(MIRROR))  # it reads `secret` too
            assert "by=mirror&" in other.text and "by=reader" not in other.text, path
            assert "by=mirror" not in client.get(path, headers=bearer(READER)).text
            assert client.get(path, headers=bearer(OTHER)).status_code == 403, path
            assert client.get(path).status_code == 401, path
        versions = "/v1/modules/secret/single/generic/versions"
        assert client.get(versions, headers=bearer(READER)).status_code == 200
        assert _kept(server, versions)
        assert client.get(versions, headers=bearer(OTHER)).status_code == 403
        index = f"/v1/mirror/{HOST}/secret/widget/index.json"
        assert client.get(index, headers=bearer(MIRROR)).status_code == 200
        assert _kept(server, index)
        assert client.get(index, headers=bearer(READER)).status_code == 403  # no mirror access


def test_a_kept_answer_has_its_access_line_and_its_counts(
    tmp_path: Path, tls: TlsMaterial, caplog: pytest.LogCaptureFixture
) -> None:
    config = _open_registry(tmp_path)
    versions = "/v1/modules/open/single/generic/versions"
    index = f"/v1/mirror/{HOST}/open/widget/index.json"
    caplog.set_level(logging.INFO, "gitreg.access")
    with served_over_tls(config, tls, access_log=True) as (server, client):
        ids = [client.get(versions).headers["x-request-id"] for _ in range(3)]
        assert _kept(server, versions) and len(set(ids)) == 3
        assert (
            client.get(versions, headers={"X-Request-Id": "mine-1"}).headers["x-request-id"]
            == "mine-1"
        )
        for _ in range(3):
            assert client.get(index).status_code == 200
        assert _kept(server, index)
        assert server.state.mirror_counts[("index", "ok")] == 3
    lines = [vars(r) for r in caplog.records if r.name == "gitreg.access"]
    routes = [line["route"] for line in lines if line["path"] == versions]
    assert routes == ["/v1/modules/{namespace}/{name}/{system}/versions"] * 4
    assert [line["request_id"] for line in lines if line["path"] == versions] == [*ids, "mine-1"]
