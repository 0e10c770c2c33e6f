"""registry.yaml edited while serving: a module whose key was given no value is refused with the
rest of the edit (it was once dropped without a word), and the previous catalog keeps serving."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer, wait_until


def _catalog(root: Path, system: str) -> str:
    return (
        "cache_dir: cache\nrefresh_interval: 1h\nmodules:\n"
        f"  - namespace: org\n    name: one\n    system: {system}\n    repo: {root / 'one'}\n"
    )


def _status(base: str, system: str) -> int:
    return httpx.get(f"{base}/v1/modules/org/one/{system}/versions").status_code


def test_an_edit_with_system_null_is_refused_and_the_old_catalog_serves(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    GitRepo(tmp_path / "one").release("v1.0.0", module_files("one-1.0.0"))
    path = tmp_path / "registry.yaml"
    path.write_text(_catalog(tmp_path, "x"))
    with RegistryServer(load_catalog(path), refresh=True) as server:
        assert _status(server.url, "x") == 200

        def refused() -> bool:
            # Written until the watch has seen it: it may start after the first write. A write
            # truncates first, so the watch may also read an empty file (refused too): wait
            # for this edit's own reason.
            path.write_text(_catalog(tmp_path, "null"))
            return 'modules[0].system (line 6): is null; write "null" in quotes' in caplog.text

        wait_until(refused, what="the edit refused")
        assert "still serving the previous catalog" in caplog.text
        # Each problem a line of its own, not a line with "\n" in it (its text log wrote `\n`).
        said = [r.getMessage() for r in caplog.records if r.name.startswith("gitreg.freshness")]
        assert f"{path} is invalid (1 problem): still serving the previous catalog" in said
        problem = f'{path}: modules[0].system (line 6): is null; write "null" in quotes'
        assert [message for message in said if message.startswith(problem)]
        assert not [message for message in said if "\n" in message]
        assert "catalog reloaded" not in caplog.text
        assert _status(server.url, "x") == 200
        # Quoted, null is a name like any other.
        path.write_text(_catalog(tmp_path, '"null"'))
        wait_until(lambda: _status(server.url, "null") == 200, what="the quoted edit applied")
        assert _status(server.url, "x") == 404
