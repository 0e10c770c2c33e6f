"""Discovery of 10,000 repositories from a stand-in forge (tests/support/forges.py, in a process
of its own, over TLS on 127.0.0.1): the wall time of gitreg's lister, against the time of its
API calls alone, the same paged GETs (same URLs, same headers) made by a bare httpx.Client loop
that only reads each body, and the same loop decoding each body with json.loads (what any
lister must pay at least); each round runs the three in another order, and the medians of the
per-round ratios are quoted.

    python -m bench.discovery [--kind gitlab|gitea|github|bitbucket|all] [--repositories 10000]
                              [--rounds 7] [--render-each-time]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import ssl
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Event
from pathlib import Path

import httpx

from gitreg.tlscert import TlsMaterial, ensure_local_tls
from tests.support.forge_shapes import KINDS, ForgeKind, ForgeRepository
from tests.support.forges import StandInForge, lister_of

TOKEN = "bench-token"
OWNER: dict[ForgeKind, str] = {"gitlab": "platform", "gitea": "infra", "github": "acme"}


def _serve(
    kind: ForgeKind, count: int, render: bool, tls: TlsMaterial, url: Connection, stop: Event
) -> None:
    owner = OWNER.get(kind, "TF")
    held = [ForgeRepository(f"{owner}/terraform-aws-m{n:05}", ("terraform",)) for n in range(count)]
    with StandInForge(kind, held, token=TOKEN, tls=tls, render_each_time=render) as forge:
        url.send(forge.url)
        stop.wait()


@contextmanager
def _forge(kind: ForgeKind, count: int, render: bool, tls: TlsMaterial) -> Iterator[str]:
    context = multiprocessing.get_context("fork")
    ours, theirs = context.Pipe()
    stop = context.Event()
    process = context.Process(target=_serve, args=(kind, count, render, tls, theirs, stop))
    process.start()
    try:
        yield str(ours.recv())
    finally:
        stop.set()
        process.join(timeout=30)


def _timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def _measure(kind: ForgeKind, count: int, rounds: int, render: bool, tls: TlsMaterial) -> None:
    verify = ssl.create_default_context(cafile=str(tls.ca_cert))
    with _forge(kind, count, render, tls) as url:
        asked: list[httpx.Request] = []
        with httpx.Client(verify=verify, event_hooks={"request": [asked.append]}) as client:
            lister = lister_of(kind, url, OWNER.get(kind, "TF"), TOKEN, verify, client)
            assert len(lister.repositories()) == count  # a warm-up, which records the calls
        calls = [(request.url, dict(request.headers)) for request in asked]

        def ours() -> None:
            lister = lister_of(kind, url, OWNER.get(kind, "TF"), TOKEN, verify)
            found = lister.repositories()
            lister.close()
            assert len(found) == count

        def bare() -> None:
            with httpx.Client(verify=verify) as client:
                for call, headers in calls:
                    client.get(call, headers=headers).read()

        def bare_json() -> None:
            with httpx.Client(verify=verify) as client:
                for call, headers in calls:
                    json.loads(client.get(call, headers=headers).read())

        ratios, decoded = [], []
        print(f"{kind}: {count:,} repositories, {len(calls)} pages")
        print(
            f"  {'round':<6} {'calls alone s':>14} {'+ json.loads s':>15} {'lister s':>9}", end=""
        )
        print(f" {'ratio':>6} {'ratio to + json.loads':>22}")
        for n in range(rounds):
            order = [("bare", bare), ("json", bare_json), ("ours", ours)]
            turned = order[n % 3 :] + order[: n % 3]
            took = {name: _timed(work) for name, work in turned}
            ratios.append(took["ours"] / took["bare"])
            decoded.append(took["ours"] / took["json"])
            print(
                f"  {n + 1:<6} {took['bare']:>14.3f} {took['json']:>15.3f} {took['ours']:>9.3f}",
                end="",
            )
            print(f" {ratios[-1]:>6.2f} {decoded[-1]:>22.2f}")
        print(f"  median ratio lister / API calls alone: {statistics.median(ratios):.2f}")
        print(f"  median ratio lister / API calls and json.loads: {statistics.median(decoded):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kind", choices=[*KINDS, "all"], default="gitlab")
    parser.add_argument("--repositories", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument(
        "--render-each-time",
        action="store_true",
        help="the stand-in makes every page's JSON when asked, as a forge does, not once",
    )
    args = parser.parse_args()
    kinds: tuple[ForgeKind, ...] = KINDS if args.kind == "all" else (args.kind,)
    tls = ensure_local_tls(Path(tempfile.mkdtemp(prefix="gitreg-bench-discovery-")))
    for kind in kinds:
        _measure(kind, args.repositories, args.rounds, args.render_each_time, tls)


if __name__ == "__main__":
    main()
