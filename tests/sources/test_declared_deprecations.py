"""A repository's own `.gitreg.yaml` deprecates versions of the modules it declares: served by
the real app, and again after a restart with the source gone, from cache_dir/sources.json."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx

from gitreg.catalog.load import load_catalog
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer, wait_until

REASON = "Pre-releases of the API; use 1.0.0 or later."
DECLARATION = f"""\
modules:
  - name: vpc
    system: aws
    deprecated: [{{versions: "< 1.0.0", reason: "{REASON}"}}]
"""


def _deprecated(client: httpx.Client, version: str) -> str | None:
    answer = client.get(f"/v1/modules/local/vpc/aws/{version}")
    if answer.status_code != 200:
        return "not served"
    found: str | None = answer.json().get("deprecated")
    return found


def test_a_declared_deprecation_is_served_and_kept_across_a_restart(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "srv" / "infra-vpc")
    repo.release("v0.9.0", {**module_files("0.9.0"), ".gitreg.yaml": DECLARATION})
    repo.release("v1.0.0", module_files("1.0.0"))
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\nsources:\n"
        '  - folder: {path: srv, glob: "*", namespace: local, interval: 1s}\n'
    )
    catalog = load_catalog(tmp_path / "registry.yaml")
    with (
        RegistryServer(catalog, refresh=True) as server,
        httpx.Client(base_url=server.url, timeout=10) as client,
    ):
        wait_until(lambda: _deprecated(client, "0.9.0") == REASON, 30, "0.9.0 deprecated")
        assert _deprecated(client, "1.0.0") is None
    shutil.move(tmp_path / "srv", tmp_path / "moved")
    (tmp_path / "srv").mkdir()
    with (
        RegistryServer(catalog, refresh=False, fetch_first=False) as server,
        httpx.Client(base_url=server.url, timeout=10) as client,
    ):
        assert _deprecated(client, "0.9.0") == REASON
