"""The baseline: a bare Starlette app under the same Hypercorn, answering a fixed versions body
(of BENCH_VERSIONS versions, 20 unless set)."""

from __future__ import annotations

import os

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

_VERSIONS = int(os.environ.get("BENCH_VERSIONS", "20"))
_BODY = {"modules": [{"versions": [{"version": f"1.{i}.0"} for i in range(_VERSIONS, 0, -1)]}]}


async def versions(request: Request) -> JSONResponse:
    return JSONResponse(_BODY)


async def download(request: Request) -> JSONResponse:
    location = "/v1/archives/bench/mod/generic/" + "0" * 40 + ".tar.gz"
    return JSONResponse({"location": location}, headers={"X-Terraform-Get": location})


app = Starlette(
    routes=[
        Route("/v1/modules/{namespace}/{name}/{system}/versions", versions),
        Route("/v1/modules/{namespace}/{name}/{system}/{version}/download", download),
    ]
)


async def mirror_index(request: Request) -> JSONResponse:
    return JSONResponse({"versions": {f"1.{i}.0": {} for i in range(5, 0, -1)}})


async def mirror_version(request: Request) -> JSONResponse:
    archives = {
        platform: {
            "url": f"terraform-provider-widget_1.5.0_{platform}.zip",
            "hashes": ["h1:" + "A" * 43 + "=", "zh:" + "0" * 64],
        }
        for platform in ("linux_amd64", "darwin_arm64")
    }
    return JSONResponse({"archives": archives})


app.router.routes += [
    Route("/v1/mirror/{host}/{namespace}/{type}/index.json", mirror_index),
    Route("/v1/mirror/{host}/{namespace}/{type}/{version}.json", mirror_version),
]


# The other hot routes of bench.hot_routes: discovery and providers.v1.
async def discovery(request: Request) -> JSONResponse:
    return JSONResponse({"modules.v1": "/v1/modules/", "providers.v1": "/v1/providers/"})


async def provider_versions(request: Request) -> JSONResponse:
    listed = [
        {
            "version": f"1.{i}.0",
            "protocols": ["5.0"],
            "platforms": [{"os": "linux", "arch": "amd64"}],
        }
        for i in range(5, 0, -1)
    ]
    return JSONResponse({"versions": listed})


async def provider_download(request: Request) -> JSONResponse:
    files = "/v1/provider-files/acme/widget/1.5.0/terraform-provider-widget_1.5.0_"
    return JSONResponse(
        {
            "protocols": ["5.0"],
            "os": "linux",
            "arch": "amd64",
            "filename": "terraform-provider-widget_1.5.0_linux_amd64.zip",
            "download_url": files + "linux_amd64.zip",
            "shasums_url": files + "SHA256SUMS",
            "shasums_signature_url": files + "SHA256SUMS.sig",
            "shasum": "0" * 64,
            "signing_keys": {"gpg_public_keys": [{"key_id": "0" * 16, "ascii_armor": "-" * 600}]},
        }
    )


app.router.routes += [
    Route("/.well-known/terraform.json", discovery),
    Route("/v1/providers/{namespace}/{type}/versions", provider_versions),
    Route("/v1/providers/{namespace}/{type}/{version}/download/{os}/{arch}", provider_download),
]
