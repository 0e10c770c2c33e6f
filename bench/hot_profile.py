"""The hot routes in process: CPU microseconds per request of gitreg's app (auth off and on)
and of the bare Starlette app (`bench.bare_app`), each driven as Hypercorn drives an ASGI app
(scope, receive, send; no sockets), on bench.hot_routes' catalog. What the server adds is the
same for both, so the difference between the two is the whole difference `bench.hot_routes`
measures over HTTP, without its noise; `--profile ROUTE` prints cProfile's view of one route.

    python -m bench.hot_profile [--requests 20000] [--profile versions] [--auth]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import tempfile
import time
from pathlib import Path
from typing import Any

from starlette.types import ASGIApp, Message

from bench.hot_routes import _AUTH, _CATALOG, ROUTES, TOKEN, _world


def _scope(path: str, token: bool) -> dict[str, Any]:
    headers = [(b"host", b"127.0.0.1:8000"), (b"user-agent", b"wrk"), (b"accept", b"*/*")]
    if token:
        headers.append((b"authorization", f"Bearer {TOKEN}".encode()))
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 8000),
        "extensions": {},
    }


async def _drive(app: ASGIApp, path: str, token: bool, state: dict[str, Any], n: int) -> int:
    """`n` requests of `path`; the status of the last."""
    status = 0

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    for _ in range(n):
        # Hypercorn hands each request a scope of its own, with the lifespan's state copied in.
        scope = _scope(path, token)
        scope["state"] = state.copy()
        await app(scope, receive, send)
    return status


def _cpu_us(app: ASGIApp, path: str, token: bool, state: dict[str, Any], n: int) -> float:
    loop = asyncio.new_event_loop()
    try:
        status = loop.run_until_complete(_drive(app, path, token, state, 200))  # warm
        assert status == 200, (path, status)
        start = time.process_time()
        loop.run_until_complete(_drive(app, path, token, state, n))
        return (time.process_time() - start) / n * 1e6
    finally:
        loop.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--profile", choices=list(ROUTES), help="cProfile one route")
    parser.add_argument("--auth", action="store_true", help="profile with auth on")
    args = parser.parse_args()
    from bench import bare_app
    from gitreg.catalog.load import load_catalog
    from gitreg.web.app import create_app
    from gitreg.web.state import STATE_KEY
    from tests.support.state import serving_state

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _world(root)
        apps: dict[bool, tuple[ASGIApp, dict[str, Any]]] = {}
        for auth in (False, True):
            config = root / f"registry-{auth}.yaml"
            config.write_text(f"cache_dir: cache-{auth}\n{_CATALOG}{_AUTH if auth else ''}")
            os.chdir(root)
            served = serving_state(load_catalog(config))
            apps[auth] = (create_app(served, background=False), {STATE_KEY: served})
        if args.profile:
            app, lifespan_state = apps[args.auth]
            path = ROUTES[args.profile]
            profile = cProfile.Profile()
            profile.enable()
            _cpu_us(app, path, args.auth, lifespan_state, args.requests)
            profile.disable()
            pstats.Stats(profile).sort_stats("tottime").print_stats(30)
            return
        print(f"CPU us a request, in process, {args.requests} requests each (best of 3)")
        print(f"{'route':<20} {'bare':>6} {'auth off':>9} {'auth on':>8}")
        for name, path in ROUTES.items():
            bare = min(_cpu_us(bare_app.app, path, False, {}, args.requests) for _ in range(3))
            ours = [
                min(_cpu_us(app, path, auth, state, args.requests) for _ in range(3))
                for auth, (app, state) in apps.items()
            ]
            print(f"{name:<20} {bare:>6.1f} {ours[0]:>9.1f} {ours[1]:>8.1f}")


if __name__ == "__main__":
    main()
