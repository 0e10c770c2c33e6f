"""registry.yaml read again while serving: the catalog a reload would serve, or its refusal.

The keys that wait for a restart keep their served values, and a module entry equal to one
served keeps the served spec (one copy of each). A refused file is said line by line."""

from __future__ import annotations

import dataclasses
import logging

from gitreg.catalog.load import load_catalog
from gitreg.catalog.model import Catalog
from gitreg.errors import ConfigError
from gitreg.pacing import breathe

log = logging.getLogger(__name__)

# The keys that wait for a restart, as registry.yaml names them; most are the server section's.
RESTART_KEYS = (
    "listen",
    "tls",
    "cache_dir",
    "log_format",
    "shutdown_grace",
    "hsts",
    "mcp",
    "archives",
)
_SERVER_KEYS = ("listen", "tls", "log_format", "shutdown_grace", "hsts")


def read_again(served: Catalog) -> Catalog:
    """The file `served` was read from, as a reload serves it (blocking: run it paced). Raises
    ConfigError when it is refused."""
    catalog = load_catalog(served.source)
    return _sharing_specs(served, _keep_what_needs_a_restart(served, catalog))


def read_at_restart(catalog: Catalog) -> Catalog:
    """registry.yaml as a reload would serve it now, for a server that restarts with the catalog
    it started with (blocking); `catalog` when the file is refused."""
    try:
        return _keep_what_needs_a_restart(catalog, load_catalog(catalog.source))
    except ConfigError as exc:
        refused(exc, "serving the catalog read at start-up")
        return catalog


def refused(exc: ConfigError, then: str) -> None:
    """registry.yaml refused, as lines of their own (a record's newline would be written `\\n`):
    what serves meanwhile, then each problem as `gitreg check` says it."""
    count = len(exc.problems)
    log.error("%s is invalid (%d problem%s): %s", exc.source, count, "s"[: count != 1], then)
    for problem in exc.problems:
        log.error("%s: %s", exc.source, problem)


def _sharing_specs(old: Catalog, new: Catalog) -> Catalog:
    """`new`, each module spec equal to one of `old` replaced by that one: the entries a reload
    keeps hold the old specs, not a second copy of each (the memory it saves: bench/RESULTS.md,
    bench.scale), and equal specs compare at once (`is` before `==`)."""
    before = {spec.address.key: spec for spec in old.modules}
    modules = []
    for spec in new.modules:
        breathe()
        kept = before.get(spec.address.key)
        modules.append(kept if kept is not None and kept == spec else spec)
    return dataclasses.replace(new, modules=tuple(modules))


def _keep_what_needs_a_restart(old: Catalog, new: Catalog) -> Catalog:
    for key in RESTART_KEYS:
        if _restart_value(old, key) != _restart_value(new, key):
            log.warning("catalog reload: a change of %s takes effect at the next restart", key)
    server = dataclasses.replace(new.server, **{k: getattr(old.server, k) for k in _SERVER_KEYS})
    return dataclasses.replace(
        new, server=server, cache_dir=old.cache_dir, mcp=old.mcp, archives=old.archives
    )


def _restart_value(catalog: Catalog, key: str) -> object:
    return getattr(catalog.server if key in _SERVER_KEYS else catalog, key)
