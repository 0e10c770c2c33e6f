"""A prerelease is labelled in a module page's and a provider page's version lists, as a
deprecated version is: a constraint such as `~>` never picks it, so a reader must know."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from tests.support.gitrepo import GitRepo, module_files
from tests.support.provider_releases import new_key, write_key, write_release
from tests.support.servers import RegistryServer


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryServer]:
    root = tmp_path_factory.mktemp("prereleases")
    repo = GitRepo(root / "net")
    for version in ("1.0.0", "1.1.0-rc.1"):
        repo.release(f"v{version}", module_files(version))
    key = new_key("examples")
    write_key(key, root / "signing.asc")
    for version in ("1.0.0", "2.0.0-beta.1"):
        write_release(root / "widget" / version, "widget", version, signer=key)
    (root / "registry.yaml").write_text(
        "hostname: registry.example.com\ncache_dir: cache\nsigning: {keys: [signing.asc]}\n"
        "modules:\n  - {namespace: infra, name: net, system: aws, repo: net}\n"
        "providers:\n  - {namespace: examples, type: widget, artifacts: widget}\n"
        "mirror: {read_through: false}\n"
    )
    with RegistryServer(load_catalog(root / "registry.yaml")) as served:
        yield served


def _rows(page: str) -> dict[str, str]:
    """Each row of the versions table, by the version it starts with: its first cell."""
    table = page.split('<table class="versions">', 1)[1].split("</table>", 1)[0]
    cells = re.findall(r"<tr[^>]*>\s*<td>(.*?)</td>", table, re.S)
    return {re.sub(r"<[^>]+>", "", cell).split()[0]: cell for cell in cells}


@pytest.mark.parametrize(
    ("path", "prerelease", "release"),
    [
        ("/modules/infra/net/aws", "1.1.0-rc.1", "1.0.0"),
        ("/providers/examples/widget", "2.0.0-beta.1", "1.0.0"),
    ],
)
def test_a_prerelease_is_labelled_in_the_version_list(
    server: RegistryServer, path: str, prerelease: str, release: str
) -> None:
    page = httpx.get(server.url + path, timeout=30)
    assert page.status_code == 200, page.text
    rows = _rows(page.text)
    assert '<span class="badge" title="a prerelease:' in rows[prerelease]
    assert ">prerelease</span>" in rows[prerelease]
    assert "prerelease" not in rows[release]
    assert f"{prerelease} (prerelease)</option>" in page.text
    assert re.search(rf">{re.escape(release)}( \((latest|newest)\))?</option>", page.text)
