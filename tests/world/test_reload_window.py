"""A reload swaps one world whole: an edit that adds a module whose repository is slow to fetch
and makes its namespace private at once is never half applied. Anonymous clients never read the
new module, nor, once the edit is served, the old one; a reader with a token gets 503 with
Retry-After for the new module while its repository is read, never 404; and nothing waits for
the slow fetch."""

from __future__ import annotations

import asyncio
import hashlib
import threading
from pathlib import Path

import httpx

from gitreg.catalog.load import load_catalog
from tests.support.gitrepo import GitRepo, module_files
from tests.support.listeners import SilentListener
from tests.support.servers import RegistryServer, wait_until

TOKEN = "reader-token-0123456789"


def _catalog(root: Path, stalled: str | None, private: bool) -> str:
    digest = hashlib.sha256(TOKEN.encode()).hexdigest()
    public = "[]" if private else "[org]"
    added = f"  - {{namespace: org, name: new, system: x, repo: '{stalled}'}}\n" if stalled else ""
    return (
        "cache_dir: cache\nrefresh_interval: 1h\nfetch_timeout: 2m\nmirror: {read_through: false}\n"
        f"modules:\n  - {{namespace: org, name: old, system: x, repo: {root / 'old'}}}\n{added}"
        f'auth:\n  public: {public}\n  tokens:\n    - {{name: reader, token_sha256: "{digest}", read: [org]}}\n'
    )


def test_an_edit_adding_a_slow_module_and_closing_its_namespace_is_swapped_whole(
    tmp_path: Path,
) -> None:
    GitRepo(tmp_path / "old").release("v1.0.0", module_files("old"))
    config = tmp_path / "registry.yaml"
    config.write_text(_catalog(tmp_path, None, private=False))
    seen: list[tuple[int, int, int]] = []  # (old, new, listed modules) for anonymous clients
    stop = threading.Event()
    with SilentListener() as stall, RegistryServer(load_catalog(config)) as server:

        def anonymous() -> None:
            with httpx.Client(base_url=server.url, timeout=10) as client:
                for _ in range(5000):  # bounded; stops once the edit is served and checked
                    if stop.is_set():
                        return
                    old = client.get("/v1/modules/org/old/x/versions").status_code
                    new = client.get("/v1/modules/org/new/x/versions").status_code
                    listed = client.get("/v1/modules", params={"namespace": "org"})
                    modules = len(listed.json()["modules"]) if listed.status_code == 200 else -1
                    seen.append((old, new, modules))

        watcher = threading.Thread(target=anonymous)
        watcher.start()
        wait_until(lambda: len(seen) >= 3, what="anonymous requests under the first catalog")
        config.write_text(_catalog(tmp_path, f"http://127.0.0.1:{stall.port}/new.git", True))
        # Not awaited: the reload goes on to fetch the stalled repository after its swap.
        reload = asyncio.run_coroutine_threadsafe(server.state.live.reload(), server._loop)
        wait_until(lambda: stall.accepted >= 1, what="the new repository's fetch to connect")
        with httpx.Client(base_url=server.url, timeout=10) as client:
            token = {"Authorization": f"Bearer {TOKEN}"}
            answer = client.get("/v1/modules/org/new/x/versions", headers=token)
            assert answer.status_code == 503, answer.text
            assert answer.headers["retry-after"]
            assert "not known yet" in answer.json()["errors"][0]
            old = client.get("/v1/modules/org/old/x/versions", headers=token)
            assert old.status_code == 200
        count = len(seen)
        wait_until(lambda: len(seen) >= count + 3, what="anonymous requests under the edit")
        stop.set()
        watcher.join(timeout=30)
        assert not reload.done()  # the slow fetch holds nothing a request needs
        reload.cancel()
    # Each route, request after request: the first world's answer, then the edit's, for good.
    # (Three requests in a row may straddle the swap: each answer is judged alone.)
    olds, news, lists = ([s[i] for s in seen] for i in range(3))
    assert _one_switch(olds, 200, 401)
    assert _one_switch(news, 404, 401)  # never 200: the newcomer was never open to anyone
    assert _one_switch(lists, 1, 0)  # never listed to anonymous clients


def _one_switch(answers: list[int], before: int, after: int) -> bool:
    """`answers` are `before`, then `after` and only that, with both seen."""
    switch = answers.index(after) if after in answers else 0
    return switch > 0 and set(answers[:switch]) == {before} and set(answers[switch:]) == {after}
