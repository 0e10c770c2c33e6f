"""`gitreg mcp`: the MCP tools over stdio, for an assistant on this machine that starts gitreg
itself. It serves what a server on the same cache_dir would, to the token in GITREG_TOKEN (to
no one in particular without it: what a request without a token may read)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from gitreg.catalog.model import Catalog
from gitreg.freshness.live import open_world
from gitreg.git.shutdown import stop_git_processes
from gitreg.web.app import create_app
from gitreg.web.mcp import registry_mcp, stdio_request
from gitreg.web.state import RegistryState

TOKEN_VARIABLE = "GITREG_TOKEN"


def mcp_stdio(catalog: Catalog, args: argparse.Namespace) -> int:
    current, sync = open_world(catalog)
    state = RegistryState.build(current, sync)
    # The app is never served here: its lifespan reads the clones and the release folders, then
    # fetches every repository, while the tools answer, as `serve` starts.
    app = create_app(state, background=False, start=True)
    server = registry_mcp(stdio_request(state, os.environ.get(TOKEN_VARIABLE) or None))

    async def run() -> None:
        async with app.router.lifespan_context(app):
            await server.run_stdio_async()

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        pass
    finally:
        stop_git_processes()
        sys.stdout.flush()
    return 0
