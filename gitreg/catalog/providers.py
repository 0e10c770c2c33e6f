"""The provider side of registry.yaml: `providers`, `signing` and `mirror`, read by the same
reader as the rest (every problem collected with its key path)."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

from gitreg.address import hostname_problem, provider_problem
from gitreg.catalog import yamldoc
from gitreg.catalog.model import MirrorSettings, ProviderSpec, SecretRef
from gitreg.git.location import RepoLocation
from gitreg.signing import Keyring
from gitreg.tags import DEFAULT_TEMPLATES, TagTemplate

_MIRROR_KEYS = (
    *("folders", "read_through", "origins", "ca_file", "download_hosts"),
    *("workers", "per_origin", "deadline", "download_deadline"),  # read-through's bounds
)


_DEFAULT_TEMPLATES = tuple(TagTemplate.parse(t) for t in DEFAULT_TEMPLATES)


class ProviderSections(yamldoc.Reader):
    def repo_location(self, text: str) -> RepoLocation:
        """A provider's or module's `repo` (the catalog reader inherits this): one object, so
        that `parsed(..., repeats=True)` parses each repository's text once."""
        return RepoLocation.parse(text, self.base)

    # Tag templates: a provider's `tags`, and a module's (the catalog reader inherits this).
    def templates(self, m: yamldoc.Mapping, path: str) -> tuple[TagTemplate, ...]:
        value = m.get("tags")
        default = _DEFAULT_TEMPLATES
        if "tags" not in m or self.no_value(m, "tags", path):
            return default
        texts = [value] if isinstance(value, str) else value
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            self.problem(
                yamldoc.join(path, "tags"),
                m.key_lines["tags"],
                "must be a template string or a list of them",
            )
            return default
        result = []
        for text in texts:
            try:
                result.append(self.once(TagTemplate.parse, text))
            except ValueError as exc:
                self.problem(yamldoc.join(path, "tags"), m.key_lines["tags"], str(exc))
        return tuple(result) or default

    def providers(self, top: yamldoc.Mapping) -> list[ProviderSpec]:
        result: list[ProviderSpec] = []
        seen: dict[tuple[str, str], str] = {}
        for path, line, item in self.items(top, "providers"):
            m = self.mapping(
                item,
                path,
                line,
                {"namespace", "type", "artifacts", "repo", "tags"},
                {"namespace", "type", "artifacts"},
            )
            if m is None:
                continue
            namespace, kind = self.string(m, "namespace", path), self.string(m, "type", path)
            for value, what in ((namespace, "namespace"), (kind, "type")):
                problem = provider_problem(value, what) if value else None
                if problem:
                    self.problem(yamldoc.join(path, what), m.key_lines[what], problem)
            folder = self.string(m, "artifacts", path)
            artifacts = (self.base / os.path.expanduser(folder)).resolve() if folder else None
            if artifacts and not artifacts.is_dir():
                self.problem(
                    yamldoc.join(path, "artifacts"),
                    m.key_lines["artifacts"],
                    f"{folder!r} is not a folder ({artifacts})",
                )
            repo = self.parsed(m, "repo", path, self.repo_location, repeats=True)
            templates = self.templates(m, path)
            if not (namespace and kind and artifacts) or self.problems_at(path):
                self.left_out(path, line)
                continue
            spec = ProviderSpec(namespace, kind, artifacts, repo, templates)
            if spec.key in seen:
                self.problem(path, line, f"provider {spec} is already listed at {seen[spec.key]}")
            seen.setdefault(spec.key, path)
            result.append(spec)
        return result

    def mirror(self, top: yamldoc.Mapping) -> MirrorSettings:
        m = self.section(top, "mirror", "", _MIRROR_KEYS)
        if m is None:
            return MirrorSettings()
        folders = []
        for path, line, item in self.items(m, "folders", parent="mirror"):
            folder = (
                (self.base / os.path.expanduser(item)).resolve() if isinstance(item, str) else None
            )
            if folder is None:
                self.problem(path, line, "must be the path of a folder")
            elif not folder.is_dir():
                self.problem(path, line, f"{item!r} is not a folder")
            else:
                folders.append(folder)
        value = m.get("origins")
        origins: list[tuple[str, str]] = []
        tokens: list[tuple[str, SecretRef]] = []
        if isinstance(value, yamldoc.Mapping):
            origins, tokens = self.origins(value)
        elif isinstance(value, yamldoc.Sequence):
            origins = self.listed_origins(m)
        elif value is not None:
            self.problem(
                "mirror.origins",
                m.key_lines["origins"],
                "must map hostnames to base URLs, or list hostnames",
            )
        default = MirrorSettings()
        workers = self.count(m, "workers", "mirror", default.workers)
        per_origin = self.count(m, "per_origin", "mirror", default.per_origin)
        if per_origin > workers:
            self.problem(
                "mirror.per_origin",
                m.key_lines.get("per_origin", m.line),
                f"must not be more than mirror.workers ({workers}), not {per_origin}",
            )
        return MirrorSettings(
            folders=tuple(folders),
            read_through=self.flag(m, "read_through", "mirror", False),
            origins=tuple(origins),
            ca_file=self.file(m, "ca_file", "mirror"),
            tokens=tuple(tokens),
            download_hosts=self.download_hosts(m),
            workers=workers,
            per_origin=per_origin,
            deadline=self.duration(m, "deadline", "mirror", default.deadline),
            download_deadline=self.duration(
                m, "download_deadline", "mirror", default.download_deadline
            ),
        )

    def listed_origins(self, m: yamldoc.Mapping) -> list[tuple[str, str]]:
        """`origins: [HOST, ...]`: each read at https://HOST/, without a token."""
        result = []
        for path, line, item in self.items(m, "origins", parent="mirror"):
            problem = (
                hostname_problem(item.lower())
                if isinstance(item, str)
                else f"must be a hostname, not {item!r}"
            )
            if problem:
                self.problem(path, line, problem)
            else:
                result.append((item.lower(), f"https://{item.lower()}/"))
        return result

    def download_hosts(self, m: yamldoc.Mapping) -> tuple[str, ...]:
        """Where packages may be downloaded from besides the origins: public DNS names, reached
        over https on port 443 (a host at a private address or a port is named in origins)."""
        if "download_hosts" not in m or m["download_hosts"] is None:
            return MirrorSettings().download_hosts
        result = []
        for path, line, item in self.items(m, "download_hosts", parent="mirror"):
            host = item.lower() if isinstance(item, str) else ""
            problem = hostname_problem(host) if host else f"must be a hostname, not {item!r}"
            if problem is None and ("." not in host or _is_ip(host)):
                problem = (
                    f"{item!r} is not a public DNS name (an IP address or a single label): "
                    "name such a host under mirror.origins"
                )
            if problem:
                self.problem(path, line, problem)
            else:
                result.append(host)
        return tuple(result)

    def origins(
        self, given: yamldoc.Mapping
    ) -> tuple[list[tuple[str, str]], list[tuple[str, SecretRef]]]:
        """`HOST: URL`, or `HOST: {url: URL, token_env: NAME}` (or `token_file`): where the
        origin of HOST's providers is, and the Bearer token read-through sends it."""
        urls, tokens = [], []
        for hostname, value in given.items():
            where, line = f"mirror.origins.{hostname}", given.key_lines[hostname]
            problem = hostname_problem(hostname.lower())
            if problem:
                self.problem(where, line, problem)
                continue
            if self.no_value(given, hostname, "mirror.origins"):
                continue
            url, token = value, None
            if isinstance(value, yamldoc.Mapping):
                m = self.mapping(value, where, line, {"url", "token_env", "token_file"})
                url = self.string(m, "url", where) if m else None
                token = self.token(m, where, line) if m else None
                if m is not None and url is None and token is None and not self.problems_at(where):
                    self.problem(where, line, "give url, or token_env or token_file, or both")
            if url is not None:
                if isinstance(url, str) and url.startswith("https://") and url.endswith("/"):
                    urls.append((hostname.lower(), url))
                else:
                    self.problem(where, line, "must be an https:// base URL ending in /")
            if token is not None:
                tokens.append((hostname.lower(), token))
        return urls, tokens

    def token(self, m: yamldoc.Mapping, where: str, line: int | None) -> SecretRef | None:
        env = self.env_name(m, "token_env", where, "origin")
        file = self.file(m, "token_file", where, "origin")
        if env and file:
            self.problem(where, line, "give token_env or token_file, not both")
            return None
        return SecretRef(env, file) if env or file else None

    def signing(self, top: yamldoc.Mapping) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
        m = self.section(top, "signing", "", {"keys", "verify_keys"})
        if m is None:
            return (), ()
        private = self.key_files(m, "keys", need_private=True)
        public = self.key_files(m, "verify_keys", need_private=False)
        return private, public

    def key_files(self, m: yamldoc.Mapping, key: str, need_private: bool) -> tuple[Path, ...]:
        paths = []
        for path, line, item in self.items(m, key, parent="signing"):
            if not isinstance(item, str):
                self.problem(path, line, "must be the path of a key file")
                continue
            file = (self.base / os.path.expanduser(item)).resolve()
            try:
                Keyring.load([file] if need_private else [], [] if need_private else [file])
            except ValueError as exc:
                self.problem(path, line, str(exc))
                continue
            paths.append(file)
        return tuple(paths)


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True
