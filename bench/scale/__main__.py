"""gitreg at scale: 10,000 modules x 50 versions in 1,000 monorepos (10 modules each, tags such as
`mod3/v1.2.0`), served by `git daemon` on 127.0.0.1, against the same server code serving 10 of
those modules, in the same run. Each row is printed as soon as it is measured, so a run that
fails late keeps what it measured before.

    python -m bench.scale [--workdir DIR] [--small] [--tree PATH] [--skip PART ...] [--read-clones]
        [--latency-rounds N]

`--tree` runs another checkout's gitreg (the servers, and the in-process warming and polling
round), so that the same bench measures the code before a change and after it. The
repositories, the clones and the ledgers are kept under --workdir, so a rerun starts warm.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from bench.harness import git_daemon
from bench.scale.latency_rounds import catch_up_rounds, reload_rounds, rows
from bench.scale.rates import paired
from bench.scale.repos import ADDED, Shape, daemon_port, generate, warm, write_catalog
from bench.scale.server import (
    CLONES_READ,
    STARTUP_FETCH,
    Server,
    StartUp,
    latency_during_reload,
    latency_for,
    percentile,
    reload_adding,
    reloads_running,
    serving,
    versions_path,
    watch_start,
)

PARTS = ("lists", "reload", "poll")  # what --skip may leave out (start-up and rates always run)


def _say(text: str = "") -> None:
    print(text, flush=True)


def _row(label: str, *cells: str) -> None:
    _say(f"{label:<58}" + "".join(f"{c:>14}" for c in cells))


def _ratio(small: float, big: float) -> str:
    return f"{big / small:.2f}" if small else "-"


def _answers(statuses: Counter[int]) -> str:
    return ", ".join(f"{n} x {code}" for code, n in sorted(statuses.items())) or "none"


def _start_rows(s: StartUp, b: StartUp, modules: int) -> None:
    _row("", "10 modules", f"{modules} modules", "ratio")
    _row(
        "start-up: /healthz answers 200, s",
        f"{s.healthz:.2f}",
        f"{b.healthz:.2f}",
        _ratio(s.healthz, b.healthz),
    )
    _row(
        "start-up: first correct versions answer, s",
        f"{s.first_correct:.2f}",
        f"{b.first_correct:.2f}",
        _ratio(s.first_correct, b.first_correct),
    )
    _row(
        "start-up: modules of repository 0, middle, last correct, s",
        f"{s.all_correct:.2f}",
        f"{b.all_correct:.2f}",
        _ratio(s.all_correct, b.all_correct),
    )
    _say(
        f"  other versions answers meanwhile: 10 modules {_answers(s.statuses)}; big {_answers(b.statuses)}"
    )


def _rates(
    label: str,
    small: tuple[str, int],
    big: tuple[str, int],
    rounds: int,
    concurrency: int,
    fetch: Server | None = None,
) -> float | None:
    """A paired req/s row: `big` against `small` (each a URL and its server's pid) in
    alternation; the median ratio, then the rounds' range and the CPU a request. With `fetch`:
    whether the start-up fetch was still running at the end of the measurement (catch-up, as
    meant)."""
    try:
        pair = paired(small, big, rounds, concurrency)
    except (RuntimeError, subprocess.SubprocessError) as exc:
        _say(f"{label}: failed: {exc}")
        return None
    (s, b), ratio, (low, high) = pair.medians(), pair.ratio(), pair.rate_range()
    _row(label, f"{s:.0f}", f"{b:.0f}", f"{ratio:.2f}")
    _say(
        f"  rounds {low:.2f}-{high:.2f}; CPU a request (git's too) {pair.cost_ratio():.2f} x"
        " the first's"
    )
    if fetch is not None:
        _say(f"  the start-up fetch was {_fetch_state(fetch)} at the end of it")
    return ratio


def _fetch_state(server: Server) -> str:
    return "still running" if server.logged(STARTUP_FETCH) == 0 else "over"


def _against_steady(label: str, busy: float | None, steady: float | None) -> None:
    """A busy moment's ratio to the 10-module server over the steady state's: the share of its
    steady rate the big server keeps (issue 25: at least 0.8), both measured against the same
    baseline, so the machine's drift between the two moments cancels out."""
    if busy is not None and steady:
        _row(f"  {label} / steady state (goal >= 0.8)", "", "", f"{busy / steady:.2f}")


def _latency_rows(probes: dict[str, list[float]]) -> None:
    """n, p50, p99 and max of each probe, and p99 and max against idle's (goal: 2 x, 5 x)."""
    _row("versions latency, ms", "n", "p50", "p99", "max", "p99/idle", "max/idle")
    idle = probes.get("idle") or []
    for name, values in probes.items():
        if not values:
            _say(f"  {name}: no request started")
            continue
        p99, top = percentile(values, 0.99), max(values)
        ratios = (
            (f"{p99 / percentile(idle, 0.99):.2f}", f"{top / max(idle):.2f}")
            if idle and name != "idle"
            else ("", "")
        )
        _row(
            f"  {name}",
            f"{len(values)}",
            f"{percentile(values, 0.5) * 1000:.1f}",
            f"{p99 * 1000:.1f}",
            f"{top * 1000:.1f}",
            *ratios,
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "gitreg-bench-scale"
    )
    parser.add_argument("--small", action="store_true", help="100 repositories: a quick check")
    parser.add_argument(
        "--tree",
        type=Path,
        default=Path(__file__).resolve().parents[2],
        help="the gitreg checkout to run",
    )
    parser.add_argument("--skip", action="append", choices=PARTS, default=[])
    parser.add_argument(
        "--rounds", type=int, default=5, help="alternating wrk rounds of 3 s during catch-up"
    )
    parser.add_argument(
        "--steady-rounds",
        type=int,
        default=11,
        help="the same at steady state and while reloads run (per-round ratios here range from"
        " 0.8 to 1.5 with nothing changed)",
    )
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument(
        "--idle", type=float, default=5.0, help="seconds of each latency probe (idle, catch-up)"
    )
    parser.add_argument(
        "--latency-rounds",
        type=int,
        default=3,
        help="catch-ups (the big server started again) and reloads probed, each against an idle"
        " probe just after or before it (0: none)",
    )
    parser.add_argument(
        "--read-clones",
        action="store_true",
        help="start the big server without its persisted index: its catch-up reads every clone",
    )
    args = parser.parse_args()
    tree = args.tree.resolve()
    sys.path.insert(0, str(tree))  # before anything imports gitreg: the in-process parts run it
    import gitreg

    shape = Shape(100 if args.small else 1000, 10, 50)
    workdir = args.workdir.resolve() / shape.name
    workdir.mkdir(parents=True, exist_ok=True)
    modules = shape.repos * shape.modules
    commit = subprocess.run(
        ["git", "-C", str(tree), "log", "-1", "--format=%h %cI"], capture_output=True, text=True
    ).stdout.strip()
    client = "wrk" if shutil.which("wrk") else "httpx (likely the bottleneck)"
    _say(f"{modules} modules x {shape.versions} versions in {shape.repos} repositories; {workdir}")
    _say(f"gitreg from {Path(gitreg.__file__).parent} ({commit}); rates by {client}")

    made = generate(workdir / "served", shape)
    if made is not None:
        _say(f"generated {shape.repos} repositories: {made:.1f} s")
    expected = shape.all_versions()
    middle = f"r{shape.repos // 2}m5"
    watched = ["r0m0", middle, f"r{shape.repos - 1}m9"]
    # The Git server is another machine in production: here, at the lowest priority, so that
    # its upload-packs (1,000 at a start) do not take the two cores from gitreg and wrk.
    with git_daemon(workdir / "served", daemon_port(workdir), niceness=19) as base:
        big = write_catalog(workdir / "big.yaml", base, shape, shape.repos)
        small = write_catalog(workdir / "small.yaml", base, shape, 1)
        for config in (small, big):
            warmed = warm(config)
            if warmed is not None:
                _say(f"first clone of {config.stem} (cold, not a figure below): {warmed:.1f} s")

        with serving(small, workdir / "small.log", tree) as s:
            s_start = watch_start(s, ["r0m0", "r0m5", "r0m9"], expected)
            s.wait_logged(STARTUP_FETCH)
            if args.read_clones:
                (workdir / f"cache-{big.stem}" / "index.jsonl").unlink(missing_ok=True)
            with serving(big, workdir / "big.log", tree) as b:
                b_start = watch_start(b, watched, expected)
                rss_small, rss_big = s.rss_mb(), b.rss_mb()
                _say()
                _start_rows(s_start, b_start, modules)
                _row(
                    "RSS after start-up, MB",
                    f"{rss_small[0]:.0f}",
                    f"{rss_big[0]:.0f}",
                    _ratio(rss_small[0], rss_big[0]),
                )

                big_url = b.base + versions_path(middle)
                small_at_pid = s.base + versions_path("r0m5"), s.process.pid
                big_at_pid = big_url, b.process.pid
                probes: dict[str, list[float]] = {}
                probes["during catch-up"], _ = asyncio.run(latency_for(big_url, args.idle))
                _say(f"latency probed for {args.idle:g} s; the start-up fetch {_fetch_state(b)}")
                catching_up = _rates(
                    "versions req/s during catch-up (start-up fetch running)",
                    small_at_pid,
                    big_at_pid,
                    args.rounds,
                    args.concurrency,
                    b,
                )
                b.wait_logged(STARTUP_FETCH)
                for label, text in (
                    ("start-up: every clone read (logged), s", CLONES_READ),
                    ("start-up fetch over (logged), s", STARTUP_FETCH),
                ):
                    small_at, big_at = s.logged_after(text) or 0.0, b.logged_after(text) or 0.0
                    _row(label, f"{small_at:.2f}", f"{big_at:.2f}", _ratio(small_at, big_at))
                small_at, big_at = s.wait_quiet(), b.wait_quiet()
                _row(
                    "caught up (CPU under 5 % for 2 s, docs warmed), s",
                    f"{small_at:.2f}",
                    f"{big_at:.2f}",
                    _ratio(small_at, big_at),
                )
                steady = _rates(
                    "versions req/s at steady state (caught up)",
                    small_at_pid,
                    big_at_pid,
                    args.steady_rounds,
                    args.concurrency,
                )
                _against_steady("catch-up", catching_up, steady)
                probes["idle"], _ = asyncio.run(latency_for(big_url, args.idle))

                if "lists" not in args.skip:
                    _say()
                    _row(
                        f"at {modules} modules (each against versions)",
                        "versions req/s",
                        "list req/s",
                        "ratio",
                    )
                    for page in ("/", "/v1/modules"):
                        _rates(
                            f"{page} req/s",
                            big_at_pid,
                            (b.base + page, b.process.pid),
                            args.rounds,
                            args.concurrency,
                        )

                if "reload" not in args.skip:
                    write_catalog(big, base, shape, shape.repos, added=True)
                    added = reload_adding(b, ADDED, expected)
                    _say()
                    _row(
                        "reload adding one module (SIGHUP): new module served, s",
                        "",
                        f"{added.served:.2f}",
                    )
                    _row("  reload logged, s", "", f"{added.logged:.2f}")
                    _say(
                        f"  the new module's other answers meanwhile: {_answers(added.statuses)}"
                        f" (last 404 at {added.last_404:.2f} s, first 503 at {added.first_503:.2f} s;"
                        " 0: none)"
                    )
                    write_catalog(big, base, shape, shape.repos)
                    probe = asyncio.run(latency_during_reload(b, big_url, args.idle))
                    _say(
                        f"a second reload (the module removed) under a latency probe: logged after {probe.reload:.2f} s; answers other than 200: {_answers(probe.errors)}"
                    )
                    probes["while a reload runs"] = probe.busy

                    def rewrite(n: int) -> None:  # the module added, removed, added, ...
                        write_catalog(big, base, shape, shape.repos, added=n % 2 == 0)

                    with reloads_running(b, rewrite) as took:
                        reloading = _rates(
                            "versions req/s while reloads run back to back",
                            small_at_pid,
                            big_at_pid,
                            args.steady_rounds,
                            args.concurrency,
                        )
                    write_catalog(big, base, shape, shape.repos)
                    if took:
                        _say(f"  {len(took)} reloads of {min(took):.2f} to {max(took):.2f} s")
                    _against_steady("reloading", reloading, steady)
                    if args.latency_rounds:
                        _say()
                        reloads = reload_rounds(
                            b, versions_path(middle), rewrite, args.latency_rounds, args.idle
                        )
                        write_catalog(big, base, shape, shape.repos)
                        rows("versions latency while a reload runs", reloads, _say)

                _say()
                _latency_rows(probes)

                rss_small, rss_big = s.rss_mb(), b.rss_mb()
                _say()
                _row(
                    "peak RSS (VmHWM) at the end, MB",
                    f"{rss_small[1]:.0f}",
                    f"{rss_big[1]:.0f}",
                    _ratio(rss_small[1], rss_big[1]),
                )

        if args.latency_rounds:
            _say()
            starts = catch_up_rounds(
                big,
                workdir / "big.log",
                tree,
                versions_path(middle),
                args.latency_rounds,
                args.idle,
            )
            rows("versions latency during catch-up", starts, _say)

        if "poll" not in args.skip:
            from bench.scale.polling_round import polling_round

            done = polling_round(big)
            _say()
            _say(f"reading every clone in-process first (a start-up's read): {done.read:.2f} s")
            _row(
                f"polling round, {shape.repos} unchanged repositories (median of 3)",
                "wall s",
                "CPU s",
            )
            _row(
                f"  gitreg (Poller.poll, {done.concurrency} at a time)",
                f"{done.ours[0]:.2f}",
                f"{done.ours[1]:.2f}",
            )
            _row(
                f"  xargs -P {done.concurrency} git ls-remote",
                f"{done.xargs[0]:.2f}",
                f"{done.xargs[1]:.2f}",
            )
            _row(
                "  ratio",
                f"{done.ours[0] / done.xargs[0]:.2f}",
                f"{done.ours[1] / done.xargs[1]:.2f}",
            )
            _say(
                f"  failed: {done.polls_failed} polls, {done.ls_remote_failed} ls-remote calls; "
                f"fetched (should be 0): {done.fetched}"
            )


if __name__ == "__main__":
    main()
