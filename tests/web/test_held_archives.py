"""Archives answered from memory and from their files: the same bytes, headers, ETags and Range
answers as each other and as Starlette's FileResponse; the memory budget held to; a new tag's
archive served."""

from __future__ import annotations

import asyncio
import io
import random
import re
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from starlette.responses import FileResponse, Response
from starlette.types import Message

from gitreg.catalog.load import load_catalog
from gitreg.errors import ArchiveError
from gitreg.web.held_archives import (
    CHUNK,
    ENTRY_COST,
    HeldAnswer,
    HeldArchives,
    StreamedAnswer,
)
from gitreg.web.hot_routes import MODULE_ARCHIVE
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer

MODULE = "/v1/modules/infra/big/aws"
# Headers that differ between any two answers, whoever sends them.
_PER_ANSWER = {"date", "x-request-id", "server"}


@dataclass
class Pair:
    held: RegistryServer
    disk: RegistryServer
    repo: GitRepo


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    """One repository served twice, on one cache_dir (as workers share it: the same files):
    with the default memory budget, and with none (every archive from its file). v1.0.0 is small (held); v2.0.0 holds 3 MiB of random bytes, over a
    sixteenth of the budget and over a CHUNK (streamed by both)."""
    root = tmp_path_factory.mktemp("archive-answers")
    repo = GitRepo(root / "big")
    repo.release("v1.0.0", module_files("1.0.0"))
    (repo.path / "blob.bin").write_bytes(random.Random(1).randbytes(3 * CHUNK))
    repo.release("v2.0.0", module_files("2.0.0"))
    servers = []
    for name, budget in (("held", ""), ("disk", "archives: {memory_budget: 0}\n")):
        (root / f"{name}.yaml").write_text(
            f"cache_dir: cache\nfresh_reads: 0\n{budget}modules:\n"
            f"  - {{namespace: infra, name: big, system: aws, repo: {repo.path}}}\n"
        )
        servers.append(RegistryServer(load_catalog(root / f"{name}.yaml")))
    with servers[0] as held, servers[1] as disk:
        yield Pair(held, disk, repo)


def _archive_path(server: RegistryServer, version: str) -> str:
    got = httpx.get(f"{server.url}{MODULE}/{version}/download")
    return str(got.json()["location"]).partition("?checksum=")[0]  # what the client asks for


def _answer(response: httpx.Response) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body, with what differs by nature between two answers taken out:
    the date, the request id, a multipart answer's random boundary."""
    headers = {k: v for k, v in response.headers.items() if k not in _PER_ANSWER}
    body = response.content
    found = re.search(r"boundary=(\w+)", headers.get("content-type", ""))
    if found:
        headers["content-type"] = headers["content-type"].replace(found[1], "B")
        body = body.replace(found[1].encode(), b"B")
    return response.status_code, headers, body


@pytest.mark.parametrize("version", ["1.0.0", "2.0.0"])
@pytest.mark.parametrize(
    ("method", "headers"),
    [
        ("GET", {}),
        ("GET", {}),  # again: now from memory where it is held
        ("HEAD", {}),
        ("GET", {"If-None-Match": "*"}),
        ("GET", {"If-None-Match": '"other"'}),
        ("GET", {"Range": "bytes=0-9"}),
        ("GET", {"Range": "bytes=-5"}),
        ("GET", {"Range": "bytes=20-29, 0-9"}),
        ("GET", {"Range": "bytes=99999999-"}),
        ("GET", {"Range": "lines=1-2"}),
        ("HEAD", {"Range": "bytes=0-9"}),
        ("GET", {"Range": "bytes=0-9", "If-Range": '"other"'}),
    ],
)
def test_memory_and_disk_give_the_same_answers(
    pair: Pair, version: str, method: str, headers: dict[str, str]
) -> None:
    path = _archive_path(pair.held, version)
    assert path == _archive_path(pair.disk, version)
    held = httpx.request(method, pair.held.url + path, headers=headers)
    disk = httpx.request(method, pair.disk.url + path, headers=headers)
    assert _answer(held) == _answer(disk)
    assert held.status_code in (200, 206, 304, 400, 416)
    if held.status_code == 200 and method == "GET":
        assert held.headers["etag"] == f'"{path.rsplit("/", 1)[1].removesuffix(".tar.gz")}"'
        assert int(held.headers["content-length"]) == len(held.content)


def test_a_held_archive_is_kept_as_an_answer_and_sent_while_it_is_held(pair: Pair) -> None:
    """With the gate off, a held archive's path is answered before routing (what is kept is its
    name, not its bytes); once the budget lets it go, its handler answers it again, the same."""
    server = pair.held
    path = _archive_path(server, "1.0.0")
    first = httpx.get(server.url + path)  # read from its file (or held already)
    httpx.get(server.url + path).raise_for_status()  # held: kept from here on
    state = server.state
    kept = state.kept.get(state.current.world, path)
    assert kept is not None and kept.route is MODULE_ARCHIVE and kept.body == b""
    assert _answer(httpx.get(server.url + path)) == _answer(first)
    state.held_archives._held.clear()  # the budget let it go
    state.held_archives._held_bytes = 0
    assert _answer(httpx.get(server.url + path)) == _answer(first)
    assert _answer(httpx.get(server.url + path)) == _answer(first)  # held again, and kept
    # Conditional and ranged requests are their handler's, kept or not.
    assert httpx.get(server.url + path, headers={"If-None-Match": "*"}).status_code == 304
    assert httpx.get(server.url + path, headers={"Range": "bytes=0-9"}).status_code == 206


def test_only_the_small_archive_is_held(pair: Pair) -> None:
    for version in ("1.0.0", "2.0.0"):
        for server in (pair.held, pair.disk):
            httpx.get(server.url + _archive_path(server, version)).raise_for_status()
    held = pair.held.state.held_archives
    assert len(held) == 1 and 0 < held.held_bytes <= held.budget
    assert len(pair.disk.state.held_archives) == 0


def test_a_new_tag_serves_its_own_archive(pair: Pair) -> None:
    before = httpx.get(pair.held.url + _archive_path(pair.held, "1.0.0")).content
    pair.repo.release("v1.1.0", module_files("1.1.0"))
    # A version the server lacks: the download refreshes the repository (on demand).
    for server in (pair.held, pair.disk):
        new = httpx.get(server.url + _archive_path(server, "1.1.0"), timeout=30)
        assert new.status_code == 200 and new.content != before
        assert _member(new.content, "main.tf").count(b'"1.1.0"') == 1
        assert httpx.get(server.url + _archive_path(server, "1.0.0")).content == before


def _member(archive: bytes, name: str) -> bytes:
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        member = tar.extractfile(name)
        assert member is not None
        return member.read()


async def _sent(response: Response, method: str = "GET") -> list[Message]:
    sent: list[Message] = []

    async def receive() -> Message:
        await asyncio.Event().wait()  # no disconnect: the client stays
        raise AssertionError

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {"type": "http", "method": method, "headers": [], "asgi": {"spec_version": "2.1"}}
    await response(scope, receive, send)
    return sent


def _whole(sent: list[Message]) -> tuple[list[tuple[bytes, bytes]], bytes]:
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == 200
    assert not sent[-1].get("more_body", False)
    return sent[0]["headers"], b"".join(m.get("body", b"") for m in sent[1:])


@pytest.mark.parametrize("size", [0, 300, 5000, CHUNK + 7])
def test_answers_are_file_responses_own(tmp_path: Path, size: int) -> None:
    """Held or streamed, an archive's headers are the names, values and order FileResponse
    sends, and its bytes the file's."""
    path = tmp_path / "a.tar.gz"
    path.write_bytes(random.Random(size).randbytes(size))
    headers = {"ETag": '"abc"', "Cache-Control": "public, max-age=31536000, immutable"}

    async def answers() -> dict[str, list[Message]]:
        got = {
            "file": await _sent(FileResponse(path, media_type="application/gzip", headers=headers))
        }
        for budget in (0, 16 * 8192):
            archives = HeldArchives(budget)
            answer = await archives.of_file(path, "a", '"abc"', headers["Cache-Control"])
            got[f"{budget} first"] = await _sent(answer)
            again = archives.held("a", headers["Cache-Control"])
            if again is not None:
                assert isinstance(again, HeldAnswer) and size <= 8192
                got[f"{budget} held"] = await _sent(again)
            else:
                assert isinstance(answer, StreamedAnswer)
        got["head"] = await _sent(await HeldArchives(2**20).of_file(path, "a", '"abc"', ""), "HEAD")
        return got

    got = asyncio.run(answers())
    expected = _whole(got.pop("file"))
    assert got["head"][0]["headers"][2:] == expected[0][2:] and _whole(got.pop("head"))[1] == b""
    for name, sent in got.items():
        assert _whole(sent) == expected, name
    assert expected[1] == path.read_bytes()


def test_the_budget_is_never_exceeded_and_the_least_recent_goes_first(tmp_path: Path) -> None:
    budget = 64 * 1024
    archives = HeldArchives(budget)
    rng = random.Random(7)
    files = []
    for n in range(200):  # far more than the budget holds
        path = tmp_path / f"{n}.tar.gz"
        path.write_bytes(rng.randbytes(rng.randrange(0, archives.largest + 1)))
        files.append(path)

    async def serve_all() -> None:
        for n, path in enumerate(files):
            await archives.of_file(path, str(n), '"x"', "")
            assert archives.held_bytes <= budget
            # The first archive, sent again each time, is never the one dropped; of the others,
            # those held are the ones sent last.
            assert archives.held("0", "") is not None
            held = [m for m in range(1, n + 1) if str(m) in archives]
            assert held == list(range(n + 1 - len(held), n + 1))

    asyncio.run(serve_all())
    assert 1 < len(archives) < len(files)
    body = sum(len(p.read_bytes()) for p in files)
    assert archives.held_bytes > budget - archives.largest - ENTRY_COST and body > 2 * budget


def test_no_budget_holds_nothing(tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"x")
    archives = HeldArchives(0)
    answer = asyncio.run(archives.of_file(tmp_path / "a", "a", '"a"', ""))
    assert isinstance(answer, StreamedAnswer) and len(archives) == archives.held_bytes == 0
    asyncio.run(_sent(answer))


def test_a_file_gone_before_it_is_read_is_unavailable_not_a_crash(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError, match="removed as it was sent: try again"):
        asyncio.run(HeldArchives(2**20).of_file(tmp_path / "gone", "gone", '"gone"', ""))


def test_over_http_the_budget_is_held_to(tmp_path: Path) -> None:
    """More distinct archives than the budget holds, each fetched over HTTP: the bytes held
    never exceed it, and every answer is its archive's."""
    repo = GitRepo(tmp_path / "many")
    rng = random.Random(3)
    for n in range(24):
        repo.write({"data.bin": rng.randbytes(1500).hex()})
        repo.release(f"v1.{n}.0", module_files(f"1.{n}.0"))
    budget = 48 * 1024  # about ten of these archives
    (tmp_path / "registry.yaml").write_text(
        f"cache_dir: cache\nfresh_reads: 0\narchives: {{memory_budget: {budget}}}\nmodules:\n"
        f"  - {{namespace: infra, name: many, system: aws, repo: {repo.path}}}\n"
    )
    with RegistryServer(load_catalog(tmp_path / "registry.yaml")) as server:
        archives = server.state.held_archives
        for round_ in range(2):
            for n in range(24):
                location = httpx.get(f"{server.url}/v1/modules/infra/many/aws/1.{n}.0/download")
                got = httpx.get(server.url + location.json()["location"])
                assert got.status_code == 200, (round_, n)
                assert f'"1.{n}.0"'.encode() in _member(got.content, "main.tf")
                assert archives.held_bytes <= budget
        assert 2 <= len(archives) < 24
        scraped = httpx.get(f"{server.url}/metrics").text
        gauges = {
            sample.name: sample.value
            for family in text_string_to_metric_families(scraped)
            for sample in family.samples
        }
        assert gauges["gitreg_archive_memory_bytes"] == archives.held_bytes
        assert gauges["gitreg_archive_memory_budget_bytes"] == budget
        assert gauges["gitreg_archives_held"] == len(archives)
        assert gauges["gitreg_prepared_answers"] == len(server.state.kept) > 0
