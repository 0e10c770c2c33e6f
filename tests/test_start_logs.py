"""A start and a reload of 200 modules (two local monorepos) say what they read in a summary line
each, with no INFO line per module or per version; `gitreg serve` as a user runs it."""

from __future__ import annotations

import re
import signal
import subprocess
from pathlib import Path

import httpx

from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import free_port, start_serve, wait_until

MODULE_LINE = re.compile(r"r\d/m\d+/x")  # a module's address, in any line


def _monorepos(root: Path, repos: int = 2, modules: int = 100) -> list[str]:
    """The catalog's module entries: `modules` folders in each repository, tagged v1.0.0, v1.1.0."""
    entries = []
    for r in range(repos):
        repo = GitRepo(root / f"mono{r}")
        for version in ("1.0.0", "1.1.0"):
            files: dict[str, str] = {}
            for m in range(modules):
                files.update(module_files(version, f"m{m}"))
            repo.release(f"v{version}", files)
        entries += [
            f"  - {{namespace: r{r}, name: m{m}, system: x, repo: {repo.path}, path: m{m}}}\n"
            for m in range(modules)
        ]
    return entries


def _serve_until(config: Path, log: Path, line: str, edit: str | None = None) -> str:
    """`gitreg serve` until its log holds `line` (and, with `edit` added to the catalog and a
    SIGHUP, until it is reloaded); its output."""
    port = free_port()
    with log.open("w") as output:
        process = start_serve(config, port, output=output)
        try:
            wait_until(lambda: line in log.read_text(), what=line)
            if edit is not None:
                config.write_text(config.read_text() + edit)
                process.send_signal(signal.SIGHUP)
                wait_until(lambda: "catalog reloaded" in log.read_text(), what="a reload")
                url = f"http://127.0.0.1:{port}/v1/modules/r0/new/x/versions"
                assert httpx.get(url, timeout=10).status_code == 200
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                raise
    assert process.returncode == 0
    return log.read_text()


def _info_per_module(output: str) -> list[str]:
    return [ln for ln in output.splitlines() if " INFO " in ln and MODULE_LINE.search(ln)]


def test_a_start_of_200_modules_logs_a_summary_not_a_line_per_module(tmp_path: Path) -> None:
    modules = _monorepos(tmp_path)
    config = tmp_path / "registry.yaml"
    config.write_text(
        "cache_dir: cache\nrefresh_interval: 1h\nwatch_catalog: false\nmodules:\n"
        + "".join(modules)
    )

    cold = _serve_until(config, tmp_path / "cold.log", "start-up fetch:")
    assert _info_per_module(cold) == []
    assert cold.count("start-up: read the clones: 200 modules, 0 versions;") == 1
    assert "2 repositories read in " in cold and "; 2 not cloned yet (fetched next)" in cold
    fetched = [ln for ln in cold.splitlines() if "start-up fetch:" in ln]
    assert len(fetched) == 1
    assert "start-up fetch: 200 modules, 400 versions; 2 repositories read in " in fetched[0]
    assert fetched[0].endswith("; modules 200 changed; 400 new versions")

    warm = _serve_until(config, tmp_path / "warm.log", "start-up fetch:")
    assert _info_per_module(warm) == []
    assert warm.count("start-up: read the clones: 200 modules, 400 versions;") == 1
    assert "not cloned yet" not in warm

    new = f"  - {{namespace: r0, name: new, system: x, repo: {tmp_path / 'mono0'}, path: m0}}\n"
    reload = _serve_until(config, tmp_path / "reload.log", "start-up fetch:", new)
    assert _info_per_module(reload) == []
    reloaded = [ln for ln in reload.splitlines() if "catalog reloaded" in ln]
    assert len(reloaded) == 1
    assert "catalog reloaded: 201 modules, 402 versions; 1 repository read in " in reloaded[0]
    assert reloaded[0].endswith("; modules 1 added; 2 new versions; 0 providers")
