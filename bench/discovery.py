"""Discovery of 10,000 repositories from a stand-in forge (tests/support/forges.py, in a process
of its own, over TLS on 127.0.0.1): the wall time of gitreg's lister, against the time of its
API calls alone: the same paged GETs (same URLs, same headers) made by a bare httpx.Client loop
that only reads each body, one after the other as any client following a listing's next pages
does (the issue's measure); the same loop decoding each body with json.loads (what any lister
must pay at least); and the same GETs made as many at once as the lister asks them (its own
cost, beside the forge's: the floor of a lister that asks ahead). Each round runs the four in
another order, and the medians of the per-round ratios are quoted.

Beside the wall time, the CPU time each spends, the client's (this process, all its threads)
and the stand-in forge's (its process, from /proc): on a machine shared with other work the wall
time says more of the machine's other load than of the lister, while the CPU seconds a discovery
costs, the forge's and the client's together, against those of its API calls alone, barely move.

The stand-in makes each page's JSON when it is asked, as a forge does from its database: a
page made once and sent again (`--pre-rendered`) costs the forge almost nothing, which makes
the API calls alone unrealistically cheap beside any client's reading of them.

    python -m bench.discovery [--kind gitlab|gitea|github|bitbucket|all] [--repositories 10000]
                              [--rounds 7] [--pre-rendered]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import ssl
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Event
from pathlib import Path

import httpx

from gitreg.process.tlscert import TlsMaterial, ensure_local_tls
from gitreg.sources.forge_pages import AT_ONCE, AT_ONCE_UNCOUNTED
from tests.support.forge_shapes import KINDS, ForgeKind, ForgeRepository
from tests.support.forges import StandInForge, lister_of

TOKEN = "bench-token"
OWNER: dict[ForgeKind, str] = {"gitlab": "platform", "gitea": "infra", "github": "acme"}
# Pages the lister asks at once: Bitbucket's pages say no count (forge_pages.py).
WIDTH: dict[ForgeKind, int] = {"bitbucket": AT_ONCE_UNCOUNTED}


def _serve(
    kind: ForgeKind, count: int, render: bool, tls: TlsMaterial, url: Connection, stop: Event
) -> None:
    owner = OWNER.get(kind, "TF")
    held = [ForgeRepository(f"{owner}/terraform-aws-m{n:05}", ("terraform",)) for n in range(count)]
    with StandInForge(kind, held, token=TOKEN, tls=tls, render_each_time=render) as forge:
        url.send(forge.url)
        stop.wait()


@contextmanager
def _forge(
    kind: ForgeKind, count: int, render: bool, tls: TlsMaterial
) -> Iterator[tuple[str, int]]:
    """The stand-in's URL and its process id."""
    context = multiprocessing.get_context("fork")
    ours, theirs = context.Pipe()
    stop = context.Event()
    process = context.Process(target=_serve, args=(kind, count, render, tls, theirs, stop))
    process.start()
    try:
        yield str(ours.recv()), int(process.pid or 0)
    finally:
        stop.set()
        process.join(timeout=30)


def _cpu_of(pid: int) -> float:
    """The CPU seconds (user and system) process `pid` has spent, all its threads."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _timed(action: Callable[[], object], forge: int) -> tuple[float, float, float]:
    """Wall seconds, this process's CPU seconds and the forge's, of `action`."""
    wall, cpu, forge_cpu = time.perf_counter(), time.process_time(), _cpu_of(forge)
    action()
    return (
        time.perf_counter() - wall,
        time.process_time() - cpu,
        _cpu_of(forge) - forge_cpu,
    )


def _measure(kind: ForgeKind, count: int, rounds: int, render: bool, tls: TlsMaterial) -> None:
    verify = ssl.create_default_context(cafile=str(tls.ca_cert))
    with _forge(kind, count, render, tls) as (url, forge):
        asked: list[httpx.Request] = []
        with httpx.Client(verify=verify, event_hooks={"request": [asked.append]}) as client:
            lister = lister_of(kind, url, OWNER.get(kind, "TF"), TOKEN, verify, client)
            assert len(lister.repositories()) == count  # a warm-up, which records the calls
        calls = [(request.url, dict(request.headers)) for request in asked]
        width = WIDTH.get(kind, AT_ONCE)

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

        def at_once() -> None:
            with httpx.Client(verify=verify) as client, ThreadPoolExecutor(width) as pool:
                list(pool.map(lambda c: client.get(c[0], headers=c[1]).read(), calls))

        ratios, decoded, alongside, spent = [], [], [], []
        cpu: dict[str, list[tuple[float, float]]] = {}
        rendered = "made when asked" if render else "pre-rendered"
        print(f"{kind}: {count:,} repositories, {len(calls)} pages ({rendered})")
        print(f"  {'round':<6} {'calls alone s':>14} {'+ json.loads s':>15}", end="")
        print(f" {f'{width} at once s':>12} {'lister s':>9} {'ratio':>6}", end="")
        print(f" {'to + json.loads':>16} {f'to {width} at once':>13}")
        for n in range(rounds):
            order = [("bare", bare), ("json", bare_json), ("wide", at_once), ("ours", ours)]
            turned = order[n % 4 :] + order[: n % 4]
            measured = {name: _timed(work, forge) for name, work in turned}
            took = {name: wall for name, (wall, _, _) in measured.items()}
            for name, (_, its, served) in measured.items():
                cpu.setdefault(name, []).append((its, served))
            spent.append(sum(measured["ours"][1:]) / sum(measured["bare"][1:]))
            ratios.append(took["ours"] / took["bare"])
            decoded.append(took["ours"] / took["json"])
            alongside.append(took["ours"] / took["wide"])
            print(f"  {n + 1:<6} {took['bare']:>14.3f} {took['json']:>15.3f}", end="")
            print(f" {took['wide']:>12.3f} {took['ours']:>9.3f} {ratios[-1]:>6.2f}", end="")
            print(f" {decoded[-1]:>16.2f} {alongside[-1]:>13.2f}")
        medians = [statistics.median(ratios), statistics.median(decoded)]
        medians.append(statistics.median(alongside))
        print(f"  median ratio lister / API calls alone: {medians[0]:.2f}")
        print(f"  median ratio lister / API calls and json.loads: {medians[1]:.2f}")
        print(f"  median ratio lister / API calls {width} at once: {medians[2]:.2f}")
        for name, what in [
            ("bare", "calls alone"),
            ("wide", f"{width} at once"),
            ("ours", "lister"),
        ]:
            its_cpu = statistics.median(c for c, _ in cpu[name])
            served = statistics.median(f for _, f in cpu[name])
            print(f"  median CPU s, {what}: client {its_cpu:.3f}, forge {served:.3f}")
        print(
            "  median ratio of CPU seconds (client and forge) lister / API calls alone: "
            f"{statistics.median(spent):.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kind", choices=[*KINDS, "all"], default="gitlab")
    parser.add_argument("--repositories", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument(
        "--pre-rendered",
        action="store_true",
        help="the stand-in makes each repository's JSON once and sends it again, which no "
        "forge does: the API calls alone then cost little more than the bytes' transfer",
    )
    args = parser.parse_args()
    kinds: tuple[ForgeKind, ...] = KINDS if args.kind == "all" else (args.kind,)
    tls = ensure_local_tls(Path(tempfile.mkdtemp(prefix="gitreg-bench-discovery-")))
    for kind in kinds:
        _measure(kind, args.repositories, args.rounds, not args.pre_rendered, tls)


if __name__ == "__main__":
    main()
