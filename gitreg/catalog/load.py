"""registry.yaml → a validated, frozen Catalog. Every problem is reported with its key path."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Collection
from pathlib import Path
from typing import Any, cast

import yaml

from gitreg.catalog import yamldoc, yamltree
from gitreg.catalog.approvals import read_approvals
from gitreg.catalog.archive_scopes import ArchiveScopes
from gitreg.catalog.auth import AuthSection
from gitreg.catalog.consumers import ConsumersSection
from gitreg.catalog.http import HttpSection
from gitreg.catalog.model import Catalog
from gitreg.catalog.module_entries import ModuleEntries
from gitreg.catalog.oci import OciSection
from gitreg.catalog.provenance import ProvenanceSection
from gitreg.catalog.publish_when import namespace_publish_when
from gitreg.catalog.secrets import SECRET_USES, SecretUse
from gitreg.catalog.settings import (
    ArchiveSettings,
    FreshnessSettings,
    Listen,
    LogFormat,
    ServerSettings,
    TlsFiles,
)
from gitreg.catalog.state import StateSection
from gitreg.catalog.tag_signers import namespace_tag_signers
from gitreg.catalog.usage import UsageSection
from gitreg.errors import ConfigError, ConfigProblem
from gitreg.git.archive_limits import ARCHIVE_MEMORY_BUDGET, ArchiveLimits
from gitreg.git.credential import Credential
from gitreg.web_origin import parse_public_url

_HOSTNAME = re.compile(r"[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?(?::\d{1,5})?")


def load_catalog(
    path: Path, secrets: Collection[SecretUse] = SECRET_USES, *, libyaml: bool = yamltree.LIBYAML
) -> Catalog:
    """Read and validate registry.yaml; raise ConfigError listing every problem. The secrets
    named in it are checked (set, readable) for the uses in `secrets` only: what the command
    that reads it will use. `libyaml`: parse with libyaml when PyYAML has it (the same catalog
    and the same problems as without, faster)."""
    source = str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(
            source, [ConfigProblem("(file)", None, exc.strerror or str(exc))]
        ) from exc
    try:
        text = data.decode()
    except UnicodeDecodeError as exc:
        where = data.count(b"\n", 0, exc.start) + 1
        reason = f"not UTF-8 text (byte 0x{data[exc.start]:02x})"
        raise ConfigError(source, [ConfigProblem("(document)", where, reason)]) from exc
    try:
        document = yamltree.load(text, libyaml)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else None
        reason = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(
            source, [ConfigProblem("(document)", line, f"not valid YAML: {reason}")]
        ) from exc
    except RecursionError as exc:  # the pure-Python parser's, a few hundred levels down
        raise ConfigError(
            source, [ConfigProblem("(document)", None, "not valid YAML: nested too deep")]
        ) from exc
    # Not resolved: a Kubernetes ConfigMap mounts registry.yaml as a symlink into a folder that
    # is replaced at each update; the path as given is the one that stays valid.
    location = Path(os.path.abspath(path))
    reader = _Reader(location.parent, secrets)
    catalog = reader.catalog(document, location)
    if reader.problems or catalog is None:
        raise ConfigError(source, reader.problems)
    return catalog


class _Reader(
    ConsumersSection,
    ModuleEntries,
    AuthSection,
    StateSection,
    ArchiveScopes,
    HttpSection,
    OciSection,
    ProvenanceSection,
    UsageSection,
):
    """Reads the catalog's own keys, collecting problems instead of stopping at the first."""

    def catalog(self, document: Any, source: Path) -> Catalog | None:
        top = self.mapping(
            document,
            "",
            getattr(document, "line", 1),
            {
                "hostname",
                "public_url",
                "listen",
                "tls",
                "cache_dir",
                "refresh_interval",
                "fetch_timeout",
                "credentials",
                "modules",
                "sources",
                "consumers",
                "webhooks",
                "poll_concurrency",
                "max_backoff",
                "fresh_reads",
                "watch_catalog",
                "providers",
                "signing",
                "mirror",
                "archives",
                "auth",
                "readiness",
                "log_format",
                "shutdown_grace",
                "state",
                "hsts",
                "mcp",
                "oci",
                "require_signed_tags",
                "publish_when",
                "provenance",
                "downloads",
            },
        )
        if top is None:
            return None
        listen = self.parsed(top, "listen", "", parse_listen) or Listen("127.0.0.1", 8443)
        hostname = self.parsed(top, "hostname", "", _parse_hostname) or str(listen)
        cache_dir = (
            self.base
            / os.path.expanduser(self.string(top, "cache_dir", "", ".gitreg") or ".gitreg")
        ).resolve()
        credentials = tuple(self.credentials(top))
        places: list[tuple[str, yamldoc.Mapping]] = []
        modules = tuple(self.modules(top, places))
        providers = tuple(self.providers(top, cache_dir))
        signing = self.signing(top)
        sources = tuple(self.sources(top))
        consumers = tuple(self.consumers(top))
        served = ("modules", "sources", "providers")
        if not (any(_has_entries(top, key) for key in served) or "mirror" in top):
            # A registry of the network mirror alone says so with a mirror: section.
            self.problem(
                "modules",
                top.key_lines.get("modules", top.line),
                "there is nothing to serve: list a module, a source or a provider, or give a"
                " mirror:"
                " section (mirror: {} serves the network mirror alone)",
            )
        refresh_interval = self.duration(top, "refresh_interval", "", 60.0)
        archives = self.archives(top)
        # Read in the order `gitreg check` has always listed their problems in.
        public_url = self.parsed(top, "public_url", "", parse_public_url)
        tls = self.tls(top)
        fetch_timeout = self.duration(top, "fetch_timeout", "", 120.0)
        webhook_secret = self.secret(top, "webhooks", "")
        poll_concurrency = self.count(top, "poll_concurrency", "", 16)
        max_backoff = self.duration(top, "max_backoff", "", 900.0)
        fresh_reads = self.duration(top, "fresh_reads", "", 5.0, zero_is_off=True)
        watch_catalog = self.flag(top, "watch_catalog", "", True)
        mirror = self.mirror(top)
        auth = self.auth(top)
        freshness = FreshnessSettings(
            refresh_interval=refresh_interval,
            fetch_timeout=fetch_timeout,
            webhook_secret=webhook_secret,
            poll_concurrency=poll_concurrency,
            max_backoff=max_backoff,
            fresh_reads=fresh_reads,
            watch_catalog=watch_catalog,
            max_staleness=self.max_staleness(top, refresh_interval),
        )
        log_format = cast(LogFormat, self.choice(top, "log_format", "", ("text", "json")))
        shutdown_grace = self.duration(top, "shutdown_grace", "", 20.0, zero_is_off=True)
        state = self.state(top)
        server = ServerSettings(
            hostname=hostname,
            listen=listen,
            tls=tls,
            public_url=public_url,
            hsts=self.hsts(top),
            log_format=log_format,
            shutdown_grace=shutdown_grace,
        )
        catalog = Catalog(
            source=source,
            server=server,
            cache_dir=cache_dir,
            freshness=freshness,
            credentials=credentials,
            modules=modules,
            sources=sources,
            consumers=consumers,
            providers=providers,
            signing=signing,
            mirror=mirror,
            archives=archives,
            auth=auth,
            state=state,
            mcp=self.mcp(top),
            oci=self.oci(top),
            downloads=self.downloads(top),
            signed_tags=namespace_tag_signers(self, top),
            publish_when=namespace_publish_when(self, top),
            approvals=read_approvals(self, self.base),
            provenance=self.provenance(top),
        )
        # Once auth: is read: who reads each module decides what its archive may hold.
        scoped = self.archive_scopes(modules, places, catalog.auth)
        return dataclasses.replace(catalog, modules=tuple(scoped))

    def max_staleness(self, top: yamldoc.Mapping, refresh_interval: float) -> float:
        m = self.section(top, "readiness", "", {"max_staleness"})
        if m is None:
            return 0.0
        bound = self.duration(m, "max_staleness", "readiness", 0.0, zero_is_off=True)
        if 0 < bound <= refresh_interval:
            self.problem(
                "readiness.max_staleness",
                m.key_lines["max_staleness"],
                f"must be longer than refresh_interval ({refresh_interval:g} s), or every"
                " repository turns stale between two polls (or 0: off)",
            )
            return 0.0
        return bound

    def archives(self, top: yamldoc.Mapping) -> ArchiveSettings:
        """What one archive may hold, and the bytes of archives each process keeps in memory."""
        default = ArchiveLimits()
        keys = {"max_file_size", "max_size", "max_entries", "memory_budget"}
        m = self.section(top, "archives", "", keys)
        if m is None:
            return ArchiveSettings()
        limits = ArchiveLimits(
            max_file_size=self.size(m, "max_file_size", "archives", default.max_file_size),
            max_size=self.size(m, "max_size", "archives", default.max_size),
            max_entries=self.count(m, "max_entries", "archives", default.max_entries, 10**7),
        )
        budget = self.size(m, "memory_budget", "archives", ARCHIVE_MEMORY_BUDGET, zero_is_off=True)
        return ArchiveSettings(limits=limits, memory_budget=budget)

    def tls(self, top: yamldoc.Mapping) -> TlsFiles | None:
        m = self.section(top, "tls", "", {"certfile", "keyfile"}, {"certfile", "keyfile"})
        if m is None:
            return None
        certfile, keyfile = self.file(m, "certfile", "tls"), self.file(m, "keyfile", "tls")
        return TlsFiles(certfile, keyfile) if certfile and keyfile else None

    def credentials(self, top: yamldoc.Mapping) -> list[Credential]:
        result = []
        keys = {"url", "username", "token_env", "token_file", "ssh_key", "known_hosts", "ca_file"}
        for path, line, item in self.items(top, "credentials"):
            m = self.mapping(item, path, line, keys, {"url"})
            if m is None:
                continue
            url = self.string(m, "url", path) or ""
            token_env = self.env_name(m, "token_env", path, "git")
            credential = Credential(
                url=url,
                username=self.string(m, "username", path, "oauth2") or "oauth2",
                token_env=token_env,
                token_file=self.file(m, "token_file", path, "git"),
                ssh_key=self.file(m, "ssh_key", path),
                known_hosts=self.file(m, "known_hosts", path),
                ca_file=self.file(m, "ca_file", path),
            )
            if credential.token_env and credential.token_file:
                self.problem(path, line, "give token_env or token_file, not both")
            if not (
                credential.token_env
                or credential.token_file
                or credential.ssh_key
                or credential.ca_file
            ):
                self.problem(path, line, "needs token_env, token_file, ssh_key or ca_file")
            result.append(credential)
        return result


def _has_entries(top: yamldoc.Mapping, key: str) -> bool:
    """Whether `key` has entries (a value that is no list is reported on its own)."""
    value = top.get(key)
    if value is None:
        return False
    return bool(value) if isinstance(value, yamldoc.Sequence) else True


def parse_listen(text: str) -> Listen:
    """HOST:PORT (`[::1]:8443` for an IPv6 address); the message says which part is wrong."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host:
        raise ValueError(f"{text!r} must be HOST:PORT, like 127.0.0.1:8443")
    if not port.isascii() or not port.isdigit():
        raise ValueError(f"the port {port!r} is not a number: give HOST:PORT, like 127.0.0.1:8443")
    if not 0 < int(port) < 65536:
        raise ValueError(f"the port {int(port)} is out of range: a port is from 1 to 65535")
    return Listen(host, int(port))


def _parse_hostname(text: str) -> str:
    lowered = text.lower()
    if not _HOSTNAME.fullmatch(lowered):
        raise ValueError(
            f"{text!r} must be a host name with an optional :port, like registry.example.com"
        )
    return lowered
