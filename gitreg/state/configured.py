"""The state registry.yaml asks for: on local disk by default (`LocalState`), in PostgreSQL
under `state:` (`PostgresState`, whose module alone imports psycopg, loaded only then). Kept
apart from `shared.py`, which the PostgreSQL state builds on, so that no two modules of the
state import each other."""

from __future__ import annotations

from gitreg.catalog.model import Catalog
from gitreg.state.shared import LocalState, SharedState


def open_state(catalog: Catalog) -> SharedState:
    """The state `catalog` asks for; PostgreSQL is connected to at first use, not here."""
    if catalog.state is None:
        return LocalState(catalog.cache_dir)
    from gitreg.state.postgres_state import PostgresState  # psycopg only when configured

    return PostgresState(catalog.state, catalog.cache_dir)
