"""docs/reference/http-api.md has a row for every route of the real app, with every method it
answers; and no route the app does not have. The app is built as `serve` builds it, over a real
catalog of a real Git repository."""

from __future__ import annotations

from pathlib import Path

from starlette.routing import Route

from gitreg.catalog.load import load_catalog
from gitreg.web.app import create_app
from tests.docs_site.site_pages import first_cells, page
from tests.support.gitrepo import GitRepo, module_files
from tests.support.state import serving_state


def _routes(tmp_path: Path) -> dict[str, set[str]]:
    """Each path the app routes, and the methods it answers there."""
    repo = GitRepo(tmp_path / "vpc")
    repo.release("v1.0.0", module_files("1.0.0"))
    (tmp_path / "registry.yaml").write_text(f"""
cache_dir: cache
modules:
  - {{namespace: infra, name: vpc, system: aws, repo: {repo.path}}}
mirror: {{}}
mcp: {{enabled: true}}
""")
    app = create_app(serving_state(load_catalog(tmp_path / "registry.yaml")), background=False)
    found: dict[str, set[str]] = {}
    for route in app.routes:
        assert isinstance(route, Route), f"a route the page cannot describe: {route!r}"
        found.setdefault(route.path, set()).update(route.methods or ())
    return found


def test_every_route_is_on_the_page_with_its_methods(tmp_path: Path) -> None:
    routes = _routes(tmp_path)
    assert "/v1/modules/{namespace}/{name}/{system}/versions" in routes
    rows = first_cells(page("reference/http-api.md"), "route")
    missing = sorted(routes.keys() - rows.keys())
    assert not missing, f"routes the app serves, not on the page: {missing}"
    for path, methods in routes.items():
        methods_cell = rows[path].split("|")[2]
        absent = sorted(m for m in methods if f"`{m}`" not in methods_cell)
        assert not absent, f"{path} answers {absent} too; the page says {methods_cell.strip()}"


def test_every_route_on_the_page_is_served(tmp_path: Path) -> None:
    rows = first_cells(page("reference/http-api.md"), "route")
    unknown = sorted(rows.keys() - _routes(tmp_path).keys())
    assert not unknown, f"routes on the page the app does not serve: {unknown}"
