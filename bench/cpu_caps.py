"""Each worker of a server held to the same share of a CPU, by a control group of its own with a
CPU quota (Linux's CFS bandwidth control; cgroup v2's `cpu.max`, or v1's `cpu.cfs_quota_us`).

What it is for: on a machine with two cores, "two workers serve twice what one does" cannot be
seen by giving them the cores, since the load generator needs CPU too. Held to half a CPU each,
one worker has half a CPU, two have one between them, and the load generator the other core:
what two workers then serve beside one says how the server scales when each worker has its
core, without the machine being the limit. It takes root (or a delegated cgroup). With the
workers on one core (`pin`) and the load generator on the other, two workers held to half a CPU
each fill their core, and nothing else runs there."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

PERIOD_US = 100_000  # the kernel's default CFS period
_V2 = Path("/sys/fs/cgroup")
_V1 = Path("/sys/fs/cgroup/cpu")


def _root() -> tuple[Path, bool]:
    """Where the groups go, and whether it is cgroup v2."""
    controllers = _V2 / "cgroup.controllers"
    if controllers.exists() and "cpu" in controllers.read_text().split():
        return _V2, True
    if (_V1 / "cpu.cfs_quota_us").exists():
        return _V1, False
    raise RuntimeError("no cgroup CPU controller here: CFS bandwidth control is needed")


def serving_processes(pid: int) -> list[int]:
    """The processes of a server that answer: its children that run its Python (workers, forked
    or spawned; an idle helper among them is held too, harmlessly), else itself (a `git` it
    runs is not a worker)."""
    python = os.readlink(f"/proc/{pid}/exe")
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    workers = [int(c) for c in children if os.readlink(f"/proc/{c}/exe") == python]
    return workers or [pid]


def pin(pid: int, core: int) -> None:
    """Every thread of a process on `core` (the threads it starts later inherit it)."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(ProcessLookupError):  # a thread that ended meanwhile
            os.sched_setaffinity(int(task.name), {core})


@contextlib.contextmanager
def capped(pids: list[int], cpus: float, name: str) -> Iterator[list[Path]]:
    """Each process of `pids` in a control group of its own, held to `cpus` of a CPU, until the
    end (then the groups are removed, once their processes are gone or moved back)."""
    root, v2 = _root()
    groups = []
    quota = int(cpus * PERIOD_US)
    try:
        for n, pid in enumerate(pids):
            group = root / f"gitreg-bench-{os.getpid()}-{name}-{n}"
            group.mkdir()
            groups.append(group)
            if v2:
                (group / "cpu.max").write_text(f"{quota} {PERIOD_US}")
            else:
                (group / "cpu.cfs_period_us").write_text(str(PERIOD_US))
                (group / "cpu.cfs_quota_us").write_text(str(quota))
            (group / "cgroup.procs").write_text(str(pid))  # the process, all its threads
        yield groups
    finally:
        for group in groups:
            _remove(group, root)


def _remove(group: Path, root: Path) -> None:
    """A group's processes moved back to the root group, and the group removed."""
    with contextlib.suppress(OSError):
        for pid in (group / "cgroup.procs").read_text().split():
            with contextlib.suppress(OSError):
                (root / "cgroup.procs").write_text(pid)
    for _ in range(50):  # a process just moved may take a moment to leave
        try:
            group.rmdir()
            return
        except OSError:
            time.sleep(0.1)
