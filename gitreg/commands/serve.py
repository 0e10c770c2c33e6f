"""`gitreg serve`: the registry served until signalled, in one process or in forked workers on
one socket."""

from __future__ import annotations

import argparse
import asyncio
import logging
import socket
import sys

from gitreg import pacing
from gitreg.atomic import sweep_stale
from gitreg.catalog.archive_scopes import narrowed_notices
from gitreg.catalog.model import Catalog
from gitreg.catalog.settings import Listen, TlsFiles
from gitreg.commands.endpoint import endpoint
from gitreg.errors import StartupError
from gitreg.freshness.catalog_file import read_at_restart
from gitreg.freshness.live import open_world
from gitreg.git.clone import move_old_clones
from gitreg.git.shutdown import stop_git_processes
from gitreg.process.cpu_budget import CpuBudget, prompt_handover
from gitreg.process.heap import Freezer, collector_paused, freeze_after_bursts
from gitreg.process.server import (
    SharingLoop,
    bind,
    hypercorn_config,
    longest_stop,
    serve_until_signalled,
)
from gitreg.process.workers import run_workers
from gitreg.web.app import create_app
from gitreg.web.state import RegistryState

log = logging.getLogger("gitreg")

MAX_WORKERS = 64


def serve(catalog: Catalog, args: argparse.Namespace) -> int:
    try:
        if not 1 <= args.workers <= MAX_WORKERS:
            raise StartupError(f"--workers {args.workers}: must be from 1 to {MAX_WORKERS}", 2)
        where = endpoint(catalog, args)
    except StartupError as exc:
        print(f"gitreg: {exc}", file=sys.stderr)
        return exc.status
    return run_server(catalog, where.listen, where.tls, args.access_log, workers=args.workers)


def run_server(
    catalog: Catalog,
    listen: Listen,
    tls: TlsFiles | None,
    access_log: bool = False,
    banner: str = "",
    workers: int = 1,
) -> int:
    """Serve until signalled, in this process or in `workers` forked ones on the one socket;
    a taken address is refused before the repositories are read, as one line (`banner` is
    printed once it cannot). The TLS files were checked by `endpoint`, or just made."""
    try:
        sock = bind(listen)
    except StartupError as exc:
        print(f"gitreg: {exc}", file=sys.stderr)
        return exc.status
    for notice in narrowed_notices(catalog):  # here: once, however many workers
        log.warning("%s", notice)
    swept = sweep_stale(catalog.cache_dir, skip=("git",))  # clones hold no file of ours
    if swept:
        log.info(
            "removed %d temporary files that a crashed writer left in %s", swept, catalog.cache_dir
        )
    if workers == 1:
        return _serve(catalog, listen, tls, access_log, sock, banner)
    move_old_clones(catalog.cache_dir)  # once, here, rather than raced by the workers
    if banner:
        print(banner, flush=True)

    def work(index: int, restarted: bool) -> int:
        # A worker started again reads registry.yaml as a reload would: it may have changed.
        served = read_at_restart(catalog) if restarted else catalog
        return _serve(served, listen, tls, access_log, sock, worker=index)

    # A worker's stop: the grace its requests get, then at most SHUTDOWN_MOST to close.
    stop_within = longest_stop(catalog.server.shutdown_grace) + 10.0
    return run_workers(workers, work, sock, stop_within)


def _serve(
    catalog: Catalog,
    listen: Listen,
    tls: TlsFiles | None,
    access_log: bool,
    sock: socket.socket,
    banner: str = "",
    worker: int | None = None,
) -> int:
    """Serve on `sock` until signalled, at once: the clones are read, then fetched, once the
    port answers (`/healthz` says it lives, `/readyz` what it still reads). The only server
    process, or one of several workers."""
    freeze_after_bursts()
    prompt_handover()
    # The process's CPU budget: installed for what domain code calls (a breath, git's CPU, a
    # request's arrival), handed to what schedules background work.
    budget = CpuBudget()
    pacing.install(budget, collector_paused)
    freezer = Freezer(quiet=budget.quiet)  # its full walks wait for a moment without requests
    freezer.start_up()
    current, sync = open_world(catalog, on_swap=freezer.swapped, budget=budget)
    state = RegistryState.build(current, sync, worker=worker, budget=budget)
    # What start-up read lives until its repositories change: out of the collector's full walks
    # (gitreg.process.heap), once read; each swap after it refreezes.
    settled = freezer.settled
    app = create_app(state, start=True, settled=settled, access_log=access_log)
    config = hypercorn_config(listen, tls, catalog.server.shutdown_grace, worker)
    if banner:
        print(banner, flush=True)
    try:
        with asyncio.Runner(loop_factory=None if worker is None else SharingLoop) as runner:
            runner.run(
                serve_until_signalled(app, config, sock, state.live.reload, state.background.stop)
            )
    except StartupError as exc:
        print(f"gitreg: {exc}", file=sys.stderr)
        return exc.status
    except OSError as exc:  # the checks above passed, and yet: say so in one line
        print(f"gitreg: cannot serve on {listen}: {exc}", file=sys.stderr)
        return 1
    finally:
        stopped = stop_git_processes()
        if stopped:
            log.info("stopped %d git processes still running", stopped)
    return 0
