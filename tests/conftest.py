from __future__ import annotations

import logging
import shutil
from collections.abc import Callable, Generator, Iterator
from pathlib import Path

import pytest

from gitreg.catalog.load import load_catalog
from gitreg.catalog.model import Catalog
from gitreg.logs import OWN_LOGGERS
from gitreg.process.tlscert import TlsMaterial, ensure_local_tls
from tests.support.postgres import PostgresServer, postgres_server
from tests.support.refused_catalogs import registry_yaml

WriteCatalog = Callable[[str], Catalog]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    """Logging as the test found it: `main()` run in this process (`gitreg accept`, `serve`)
    sets the root's handler to a stderr that pytest closes when the test ends, and every line
    logged after it, by any test of this worker, would fail to write there ("Logging error").
    Around the whole test, outside the handlers pytest adds for each of its phases."""
    root, own = logging.getLogger(), logging.getLogger(OWN_LOGGERS)
    handlers, levels = root.handlers[:], (root.level, own.level)
    try:
        return (yield)
    finally:
        root.handlers[:] = handlers
        root.setLevel(levels[0])
        own.setLevel(levels[1])


@pytest.fixture
def write_catalog(tmp_path: Path) -> WriteCatalog:
    """Write registry.yaml into tmp_path (cache_dir defaults to tmp_path/cache) and load it."""

    def write(text: str) -> Catalog:
        return load_catalog(registry_yaml(tmp_path, text))

    return write


@pytest.fixture(scope="session")
def tls(tmp_path_factory: pytest.TempPathFactory) -> TlsMaterial:
    return ensure_local_tls(tmp_path_factory.mktemp("tls"))


def require(binary: str) -> str:
    path = shutil.which(binary)
    if path is None:
        pytest.skip(f"{binary} is not on PATH")
    return path


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One real PostgreSQL for the session (skips when it is not installed)."""
    with postgres_server() as server:
        yield server


@pytest.fixture
def database_url(postgres: PostgresServer) -> str:
    """The URL of a fresh database on the session's PostgreSQL."""
    return postgres.database()
