"""The `sources:` section of registry.yaml, read by the same reader as the rest (key path and line).

A source is a Git server's group or a local folder whose repositories are surveyed rather than
named one by one. See docs/sources.md."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import cast
from urllib.parse import urlsplit

from gitreg.address import name_problem
from gitreg.catalog import yamldoc
from gitreg.catalog.module_entries import ModuleEntries
from gitreg.catalog.publish_when import publish_when
from gitreg.catalog.secrets import SecretRef
from gitreg.catalog.specs import (
    SOURCE_KINDS,
    CloneOver,
    DeletedPolicy,
    MovedPolicy,
    OnRemoved,
    SourceKind,
    SourceSpec,
)
from gitreg.catalog.tag_signers import tag_signers

# Each kind's own keys: where its server is, and what it lists there.
_OWN_KEYS: dict[SourceKind, tuple[str, ...]] = {
    "gitlab": ("url", "group"),
    "gitea": ("url", "org"),
    "github": ("org", "api_url"),
    "bitbucket": ("url", "project"),
    "folder": ("path", "glob"),
}
_REQUIRED: dict[SourceKind, tuple[str, ...]] = {
    "gitlab": ("url", "group"),
    "gitea": ("url", "org"),
    "github": ("org",),
    "bitbucket": ("url", "project", "namespace"),
    "folder": ("path", "namespace"),
}
_COMMON_KEYS = (
    *("include", "exclude", "topics", "namespace", "allow_namespaces", "interval"),
    *("on_removed", "tags", "moved_tags", "deleted_tags", "webhook", "require_signed_tags"),
    "publish_when",
)
_FORGE_KEYS = ("token_env", "token_file", "clone", "clone_hosts")
GITHUB_API = "https://api.github.com"


class SourcesSection(ModuleEntries):
    def sources(self, top: yamldoc.Mapping) -> list[SourceSpec]:
        result = []
        for path, line, item in self.items(top, "sources"):
            m = self.mapping(item, path, line, SOURCE_KINDS)
            if m is None:
                continue
            kinds = [k for k in SOURCE_KINDS if k in m]
            if len(kinds) != 1:
                self.problem(
                    path,
                    line,
                    f"give one of {', '.join(SOURCE_KINDS)} (one source an entry), not"
                    f" {', '.join(kinds) or 'none'}",
                )
                continue
            spec = self.source(m, kinds[0], path)
            if spec is None:
                self.left_out(path, line)
            else:
                result.append(replace(spec, line=line))
        return result

    def source(
        self, item: yamldoc.Mapping, kind: SourceKind, path: str, omit: tuple[str, ...] = ()
    ) -> SourceSpec | None:
        """The source of kind `kind` in `item`; `omit`: keys refused as unknown here."""
        where = yamldoc.join(path, kind)
        keys = (*_OWN_KEYS[kind], *_COMMON_KEYS, *(_FORGE_KEYS if kind != "folder" else ()))
        keys = tuple(k for k in keys if k not in omit)
        m = self.section(item, kind, path, keys, _REQUIRED[kind])
        if m is None:
            return None
        place, scope = self._place(m, kind, where)
        namespace = self._namespace(m, where, scope if kind != "folder" else "")
        include, exclude = self.globs(m, "include", where), self.globs(m, "exclude", where)
        topics = tuple(t.lower() for t in self.globs(m, "topics", where))
        allowed = self.globs(m, "allow_namespaces", where)
        token = None if kind == "folder" else self._token(m, where)
        template = self.templates(m, where)
        moved = self.choice(m, "moved_tags", where, ("pin", "follow", "quarantine"))
        deleted = self.choice(m, "deleted_tags", where, ("keep", "remove"))
        spec = SourceSpec(
            key_path=path,
            kind=kind,
            where=place or "",
            scope=scope or "",
            namespace=namespace or "",
            include=include,
            exclude=exclude,
            topics=topics,
            allow_namespaces=allowed,
            interval=self.duration(m, "interval", where, 300.0),
            on_removed=cast(OnRemoved, self.choice(m, "on_removed", where, ("keep", "hide"))),
            clone=cast(CloneOver, self.choice(m, "clone", where, ("https", "ssh"))),
            token=token,
            tags=template,
            moved_tags=cast(MovedPolicy, moved),
            deleted_tags=cast(DeletedPolicy, deleted),
            webhook_secret=self.secret(m, "webhook", where),
            clone_hosts=self._clone_hosts(m, where),
            signed_tags=tag_signers(self, m, where),
            publish_when=publish_when(self, m, where),
        )
        return spec if place and scope and namespace else None

    def _place(
        self, m: yamldoc.Mapping, kind: SourceKind, where: str
    ) -> tuple[str | None, str | None]:
        """Where the source's server (or folder) is, and what is listed there."""
        if kind == "folder":
            text = self.string(m, "path", where)
            folder = (self.base / os.path.expanduser(text)).resolve() if text else None
            if text and folder and not folder.is_dir():
                self.problem(
                    yamldoc.join(where, "path"),
                    m.key_lines["path"],
                    f"{text!r} is not a folder ({folder})",
                )
                folder = None
            glob = self.string(m, "glob", where, "*")
            if glob and (glob.startswith("/") or ".." in glob.split("/")):
                self.problem(
                    yamldoc.join(where, "glob"),
                    m.key_lines["glob"],
                    f"{glob!r} must be a pattern inside the folder, like */terraform-*.git",
                )
                glob = None
            return (str(folder) if folder else None), glob
        url_key = "api_url" if kind == "github" else "url"
        url = self.parsed(m, url_key, where, _parse_server_url)
        if kind == "github" and url_key not in m:
            url = GITHUB_API
        scope_key = {"gitlab": "group", "gitea": "org", "github": "org", "bitbucket": "project"}
        scope = self.parsed(m, scope_key[kind], where, _parse_scope)
        return url, scope

    def _namespace(self, m: yamldoc.Mapping, where: str, scope: str | None) -> str | None:
        given = self.string(m, "namespace", where)
        if given is not None:
            problem = name_problem(given, "namespace")
            if problem:
                self.problem(yamldoc.join(where, "namespace"), m.key_lines["namespace"], problem)
                return None
            return given
        if "namespace" in m or not scope:
            return None  # reported: no value, or the scope's own problem
        last = scope.rsplit("/", 1)[-1]
        if name_problem(last, "namespace"):
            self.problem(
                where,
                m.line,
                f"{last!r}, the last part of {scope!r}, is no namespace (1 to 64 ASCII letters,"
                " digits, '-' or '_'): give namespace:",
            )
            return None
        return last

    def _token(self, m: yamldoc.Mapping, where: str) -> SecretRef | None:
        env = self.env_name(m, "token_env", where, "git")
        file = self.file(m, "token_file", where, "git")
        if env and file:
            self.problem(where, m.line, "give token_env or token_file, not both")
        return SecretRef(env, file) if env or file else None

    def _clone_hosts(self, m: yamldoc.Mapping, where: str) -> tuple[tuple[str, int | None], ...]:
        """The hosts beside the forge's own its clone URLs may name (sources/clone_urls.py)."""
        if isinstance(m.get("clone_hosts"), str):
            line = m.key_lines["clone_hosts"]
            path = yamldoc.join(where, "clone_hosts")
            self.problem(path, line, "must be a list of hosts, like [git.example.com:2222]")
            return ()
        hosts = []
        for path, line, item in self.items(m, "clone_hosts", where):
            try:
                if not isinstance(item, str):
                    raise ValueError("must be a host name, or host:port (git.example.com:2222)")
                hosts.append(_parse_clone_host(item.strip()))
            except ValueError as exc:
                self.problem(path, line, str(exc))
        return tuple(hosts)

    def globs(self, m: yamldoc.Mapping, key: str, path: str) -> tuple[str, ...]:
        """A pattern or a list of them; empty when the key is absent."""
        if key not in m or self.no_value(m, key, path):
            return ()
        value = m[key]
        texts = [value] if isinstance(value, str) else value
        if not isinstance(texts, list) or not all(isinstance(t, str) and t.strip() for t in texts):
            self.problem(
                yamldoc.join(path, key),
                m.key_lines[key],
                "must be a pattern or a list of them (like terraform-*)",
            )
            return ()
        return tuple(t.strip() for t in texts)


def _parse_server_url(text: str) -> str:
    parts = urlsplit(text)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise ValueError(f"{text!r} must be the server's https:// URL")
    if parts.username or parts.password:
        raise ValueError(f"{text!r} must not carry a user or a token: give token_env or token_file")
    if parts.query or parts.fragment:
        raise ValueError(f"{text!r} must be the server's URL, without a query")
    return text.rstrip("/")


def _parse_clone_host(entry: str) -> tuple[str, int | None]:
    """`host`, `host:port`, `[v6]` or `[v6]:port`: its host name (lowercase, no brackets) and
    port (None when it names none); never a URL, a path or a user name."""
    shape = f"{entry!r} must be a host name, or host:port (git.example.com:2222)"
    if not entry or any(c in entry for c in "/@?#\\") or any(c.isspace() for c in entry):
        raise ValueError(shape)
    try:
        parts = urlsplit(f"//{entry}")
    except ValueError:  # brackets that hold no IPv6 address
        raise ValueError(shape) from None
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:
        raise ValueError(f"{entry!r}: its port must be a number from 1 to 65535")
    host = parts.hostname or ""
    if not host or host.startswith("-") or (entry.startswith("[") and ":" not in host):
        raise ValueError(shape)
    return host, port


def _parse_scope(text: str) -> str:
    parts = text.strip("/").split("/")
    if any(p in ("", ".", "..") or any(c.isspace() for c in p) for p in parts):
        raise ValueError(f"{text!r} must be a group path like platform/terraform")
    return "/".join(parts)
