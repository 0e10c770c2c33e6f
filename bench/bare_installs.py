"""The baseline of `bench.installs`: a bare Starlette app under the same Hypercorn, answering the
four requests of a `terraform init` with the bytes gitreg answered them with (read once from the
folder BENCH_INSTALLS names), at gitreg's own paths; and `/file/...`, the same archive by
Starlette's FileResponse."""

from __future__ import annotations

import json
import os
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

_FOLDER = Path(os.environ.get("BENCH_INSTALLS", "."))
_JSON = "application/json"


def _read(name: str) -> bytes:
    return (_FOLDER / name).read_bytes() if (_FOLDER / name).is_file() else b"{}"


_DISCOVERY = _read("discovery.json")
_VERSIONS = _read("versions.json")
_DOWNLOAD = _read("download.json")
_LOCATION = str(json.loads(_DOWNLOAD).get("location", ""))
_ARCHIVE = _read("archive.tar.gz")


async def discovery(request: Request) -> Response:
    return Response(_DISCOVERY, media_type=_JSON)


async def versions(request: Request) -> Response:
    return Response(_VERSIONS, media_type=_JSON)


async def download(request: Request) -> Response:
    return Response(_DOWNLOAD, media_type=_JSON, headers={"X-Terraform-Get": _LOCATION})


async def archive(request: Request) -> Response:
    return Response(_ARCHIVE, media_type="application/gzip")


async def archive_file(request: Request) -> FileResponse:
    return FileResponse(_FOLDER / "archive.tar.gz", media_type="application/gzip")


app = Starlette(
    routes=[
        Route("/.well-known/terraform.json", discovery),
        Route("/v1/modules/{namespace}/{name}/{system}/versions", versions),
        Route("/v1/modules/{namespace}/{name}/{system}/{version}/download", download),
        Route("/v1/archives/{namespace}/{name}/{system}/{file}", archive),
        Route("/file/{namespace}/{name}/{system}/{file}", archive_file),
    ]
)
