"""The catalogue served for real (Hypercorn on 127.0.0.1, plain HTTP), once per test module:
with auth (`open` public, the reader token reads `secret`) and without; and a catalogue of
hundreds of modules (`tests/support/many_modules.py`), for the pages' paging; and a browser."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver

from gitreg.catalog.load import load_catalog
from tests.support.browser import chromium, require_chromium
from tests.support.catalogue import write_catalogue
from tests.support.many_modules import write_many
from tests.support.servers import RegistryServer


def _served(root: Path, auth: bool) -> Iterator[RegistryServer]:
    with RegistryServer(load_catalog(write_catalogue(root, auth))) as server:
        yield server


@pytest.fixture(scope="module")
def catalogue(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryServer]:
    yield from _served(tmp_path_factory.mktemp("catalogue"), auth=True)


@pytest.fixture(scope="module")
def open_catalogue(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryServer]:
    yield from _served(tmp_path_factory.mktemp("open-catalogue"), auth=False)


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryServer]:
    with RegistryServer(load_catalog(write_many(tmp_path_factory.mktemp("many")))) as server:
        yield server


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    """One Chromium for a test module's pages (a module may give its own, as for TLS)."""
    require_chromium()
    driver = chromium()
    yield driver
    driver.quit()
