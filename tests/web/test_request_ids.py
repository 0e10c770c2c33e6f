"""Request ids and the access log: the client's X-Request-Id echoed when sane, a new one
otherwise; one access line per request with its route, path (never its query), status, bytes
and duration; a request that fails still answers with its id, and its log lines carry it."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Iterator

import httpx
import pytest
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from gitreg.catalog.load import load_catalog
from gitreg.logs import RequestIdFilter
from gitreg.web.app import RegistryApp
from gitreg.web.errors import HANDLERS
from gitreg.web.request_ids import sane_request_id
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer, wait_until

FRESH = re.compile(r"[0-9a-f]{16}")


@pytest.mark.parametrize(
    ("header", "kept"),
    [
        (b"abc-123", True),
        (b"0f8fad5b-d9cb-469f-a165-70867728950e", True),  # a UUID
        (b"Root=1-5759e988-bd862e3fe1be46a994272793", True),  # AWS's trace header
        (b"a" * 128, True),
        (b"svc.api:7/x+y@z_", True),
        (b"a" * 129, False),  # too long
        (b"", False),
        (b"two words", False),
        (b'quote"d', False),
        (b"semi;colon", False),
        (b"line\nbreak", False),
        (b"tab\tid", False),
        ("ünï".encode(), False),
        (b"\x00nul", False),
        (b"id, id2", False),  # a header given twice, joined
    ],
)
def test_a_request_id_is_kept_only_when_sane(header: bytes, kept: bool) -> None:
    assert sane_request_id(header) == (header.decode() if kept else None)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryServer]:
    root = tmp_path_factory.mktemp("ids")
    GitRepo(root / "repo").release("v1.0.0", module_files("1.0.0"))
    (root / "registry.yaml").write_text(
        "cache_dir: cache\nmodules:\n  - {namespace: a, name: b, system: c, repo: repo}\n"
    )
    with RegistryServer(load_catalog(root / "registry.yaml"), access_log=True) as running:
        yield running


@pytest.fixture
def access(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    caplog.handler.addFilter(RequestIdFilter())
    with caplog.at_level(logging.INFO, "gitreg.access"):
        yield caplog


def access_record(caplog: pytest.LogCaptureFixture, request_id: str) -> logging.LogRecord:
    """The request's access line, written once its answer was sent: maybe just after the
    client read it."""

    def found() -> list[logging.LogRecord]:
        return [
            r
            for r in caplog.records
            if r.name == "gitreg.access" and getattr(r, "request_id", None) == request_id
        ]

    wait_until(found, 10, f"the access line of {request_id}")
    (record,) = found()
    return record


@pytest.mark.parametrize(
    ("sent", "echoed"),
    [("client-id-1", True), ("not sane!", False), (None, False), ("x" * 200, False)],
)
def test_the_response_carries_the_clients_id_or_a_new_one(
    server: RegistryServer, sent: str | None, echoed: bool
) -> None:
    headers = {"X-Request-Id": sent} if sent is not None else {}
    response = httpx.get(f"{server.url}/v1/modules/a/b/c/versions", headers=headers)
    assert response.status_code == 200
    returned = response.headers["x-request-id"]
    if echoed:
        assert returned == sent
    else:
        assert FRESH.fullmatch(returned)


def test_each_request_gets_an_id_of_its_own(server: RegistryServer) -> None:
    ids = {httpx.get(f"{server.url}/healthz").headers["x-request-id"] for _ in range(5)}
    assert len(ids) == 5


def test_the_access_line_names_route_path_status_bytes_and_duration(
    server: RegistryServer, access: pytest.LogCaptureFixture
) -> None:
    response = httpx.get(
        f"{server.url}/v1/modules/a/b/c/versions",
        headers={"X-Request-Id": "versions-1", "User-Agent": "Terraform/1.11.4"},
    )
    record = access_record(access, "versions-1")
    fields = vars(record)
    assert fields["method"] == "GET"
    assert fields["route"] == "/v1/modules/{namespace}/{name}/{system}/versions"
    assert fields["path"] == "/v1/modules/a/b/c/versions"
    assert fields["status"] == 200
    assert fields["bytes"] == len(response.content)
    assert fields["duration_ms"] >= 0
    assert fields["client"] == "127.0.0.1"
    assert fields["user_agent"] == "Terraform/1.11.4"


def test_the_access_line_drops_the_query_and_names_no_route_for_a_404(
    server: RegistryServer, access: pytest.LogCaptureFixture
) -> None:
    secret = "c2lnbmF0dXJlLXZhbHVl"
    response = httpx.get(
        f"{server.url}/nowhere/at/all?signature={secret}&token={secret}",
        headers={"X-Request-Id": "lost-1", "Authorization": f"Bearer {secret}"},
    )
    assert response.status_code == 404
    fields = vars(access_record(access, "lost-1"))
    assert fields["route"] is None and fields["path"] == "/nowhere/at/all"
    assert fields["status"] == 404
    assert secret not in access.text


def test_a_request_that_fails_answers_500_with_its_id_and_its_traceback_line_carries_it(
    access: pytest.LogCaptureFixture,
) -> None:
    """An injected fault: a route that raises, in the app's own middleware and handlers."""

    async def boom(request: Request) -> Response:
        raise RuntimeError("injected")

    app = RegistryApp(routes=[Route("/boom", boom)], exception_handlers=HANDLERS, access_log=True)

    async def get() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            return await client.get("/boom", headers={"X-Request-Id": "boom-1"})

    response = asyncio.run(get())
    assert response.status_code == 500 and response.headers["x-request-id"] == "boom-1"
    failed = [r for r in access.records if r.exc_info]
    assert len(failed) == 1 and vars(failed[0])["request_id"] == "boom-1"
    assert vars(access_record(access, "boom-1"))["status"] == 500
