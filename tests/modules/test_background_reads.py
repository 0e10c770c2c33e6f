"""Clone reads in the background run in a bounded pool of readers: with every reader held, the
server still answers, and a read a request waits for does not queue behind them."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from gitreg.catalog.load import load_catalog
from gitreg.pacing import background_thread
from gitreg.process.cpu_budget import CpuBudget
from tests.support.gitrepo import GitRepo, module_files
from tests.support.pacing import installed
from tests.support.servers import RegistryServer


def test_a_request_is_answered_while_every_background_reader_is_held(tmp_path: Path) -> None:
    repos = []
    for name in ("held", "asked"):
        repo = GitRepo(tmp_path / name)
        repo.release("v1.0.0", module_files("1.0.0"))
        repos.append(f"  - {{namespace: a, name: {name}, system: x, repo: {repo.path}}}\n")
    config = tmp_path / "registry.yaml"
    config.write_text(f"cache_dir: {tmp_path / 'cache'}\nmodules:\n" + "".join(repos))
    budget = CpuBudget()  # as `gitreg serve` installs it, and hands it to the server
    with installed(budget), RegistryServer(load_catalog(config), budget=budget) as server:
        release, started = threading.Event(), threading.Semaphore(0)

        def hold() -> None:
            started.release()
            release.wait(30)

        with ThreadPoolExecutor(budget.readers, initializer=background_thread) as background:
            held = [background.submit(budget.run, hold) for _ in range(budget.readers)]
            try:
                assert all(started.acquire(timeout=30) for _ in held)  # the pool is full
                # A client's question, and a fresh read of its repository, meanwhile.
                answer = httpx.get(f"{server.url}/v1/modules/a/asked/x/versions", timeout=30)
                assert answer.status_code == 200
                listed = answer.json()["modules"][0]["versions"]
                assert [v["version"] for v in listed] == ["1.0.0"]
                assert not any(h.done() for h in held)
            finally:
                release.set()
            for h in held:
                h.result(timeout=30)
