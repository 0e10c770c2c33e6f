"""Running the app under Hypercorn, embedded: TLS with HTTP/2 and HTTP/1.1, clean shutdown."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable, Callable

from hypercorn.asyncio import serve
from hypercorn.config import Config
from starlette.applications import Starlette

from gitreg.catalog import Listen, TlsFiles

log = logging.getLogger(__name__)


def hypercorn_config(listen: Listen, tls: TlsFiles | None, access_log: bool = False) -> Config:
    config = Config()
    config.bind = [str(listen)]
    config.alpn_protocols = ["h2", "http/1.1"]
    config.graceful_timeout = 5.0
    config.accesslog = logging.getLogger("gitreg.access") if access_log else None
    config.errorlog = logging.getLogger("hypercorn.error")  # through our handlers, once
    if tls:
        config.certfile = str(tls.certfile)
        config.keyfile = str(tls.keyfile)
    return config


async def serve_until_signalled(
    app: Starlette, config: Config, on_hangup: Callable[[], Awaitable[object]] | None = None
) -> None:
    """Serve until SIGINT or SIGTERM, then let requests in flight finish; SIGHUP calls on_hangup."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    hangups: set[asyncio.Task[object]] = set()
    if on_hangup is not None:

        def hangup() -> None:
            task = asyncio.ensure_future(on_hangup())
            hangups.add(task)
            task.add_done_callback(hangups.discard)

        loop.add_signal_handler(signal.SIGHUP, hangup)
    scheme = "https" if config.ssl_enabled else "http"
    log.info("serving on %s://%s", scheme, config.bind[0])
    if not config.ssl_enabled:
        log.warning(
            "serving plain HTTP: Terraform only talks HTTPS to a registry, "
            "so put a TLS-terminating proxy in front, or give --certfile and --keyfile "
            "(or tls: in registry.yaml)"
        )
    await serve(app, config, shutdown_trigger=stop.wait)  # type: ignore[arg-type]
    log.info("stopped")
