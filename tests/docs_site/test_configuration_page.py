"""docs/reference/configuration.md names every key registry.yaml accepts, as the loader itself
says it knows them (tests/docs_site/catalog_keys.py), and no key it would refuse."""

from __future__ import annotations

from pathlib import Path

from tests.docs_site.catalog_keys import accepted_keys
from tests.docs_site.site_pages import first_cells, page


def test_every_key_the_loader_accepts_is_on_the_page(tmp_path: Path) -> None:
    keys = set(accepted_keys(tmp_path))
    assert {"hostname", "modules[].repo", "auth.git.cache", "mirror.origins.HOST.url"} <= keys
    rows = first_cells(page("reference/configuration.md"), "key")
    missing = sorted(keys - rows.keys())
    assert not missing, f"keys registry.yaml accepts, not in a key table: {missing}"


def test_every_key_on_the_page_is_one_the_loader_accepts(tmp_path: Path) -> None:
    keys = set(accepted_keys(tmp_path)) | {"mirror.origins.HOST"}  # a host's URL, written alone
    rows = first_cells(page("reference/configuration.md"), "key")
    unknown = sorted(rows.keys() - keys)
    assert not unknown, f"keys on the page that registry.yaml refuses: {unknown}"


def test_every_row_gives_a_type_a_default_and_what_the_key_does(tmp_path: Path) -> None:
    for key, row in first_cells(page("reference/configuration.md"), "key").items():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        assert len(cells) == 4, f"{key}: a row of key, type, default, what it does: {row}"
        assert cells[1] and cells[3], f"{key}: no type or no description: {row}"
