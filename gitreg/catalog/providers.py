"""The provider side of registry.yaml: `providers`, `signing` and `mirror`, read by the same
reader as the rest (every problem collected with its key path)."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from gitreg.address import hostname_problem, provider_problem
from gitreg.catalog import yamldoc
from gitreg.catalog.deprecations import deprecations
from gitreg.catalog.mirror_settings import MirrorSettings
from gitreg.catalog.secrets import SecretRef
from gitreg.catalog.settings import SigningKeys
from gitreg.catalog.specs import ForgeReleases, ProviderSpec
from gitreg.git.location import RepoLocation
from gitreg.signing import Keyring
from gitreg.tags import DEFAULT_TEMPLATES, TagTemplate

_MIRROR_KEYS = (
    *("folders", "read_through", "origins", "ca_file", "download_hosts"),
    *("workers", "per_origin", "deadline", "download_deadline"),  # read-through's bounds
)


# Each forge's keys under a provider's `releases:`: allowed, and required.
_RELEASE_KEYS = {
    "gitlab": (("url", "project"), ("url", "project")),
    "gitea": (("url", "repo"), ("url", "repo")),
    "github": (("api_url", "repo"), ("repo",)),
}
_FORGE_COMMON = ("token_env", "token_file", "interval", "webhook")

_DEFAULT_TEMPLATES = tuple(TagTemplate.parse(t) for t in DEFAULT_TEMPLATES)
PROVIDER_KEYS = (
    *("namespace", "type", "artifacts", "releases", "repo", "tags", "deprecated", "revoked"),
)


@dataclass(frozen=True)
class OwnReleases:
    """A repository's own releases, where its `.gitreg.yaml` declares providers: on the forge
    that listed it (`releases`), under the source's namespace and those it may claim besides."""

    releases: ForgeReleases
    namespace: str
    may_claim: Callable[[str], bool]

    def claims(self, namespace: str) -> bool:
        return namespace.lower() == self.namespace.lower() or self.may_claim(namespace)


def releases_folder(cache_dir: Path, namespace: str, kind: str) -> Path:
    """Where a provider's forge releases are fetched into: cache_dir's, one folder a provider."""
    return cache_dir / "provider-releases" / namespace.lower() / kind


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

    def providers(
        self, top: yamldoc.Mapping, cache_dir: Path, own: OwnReleases | None = None
    ) -> list[ProviderSpec]:
        """registry.yaml's providers; with `own`, a repository's `.gitreg.yaml` providers,
        which name neither artifacts nor releases: the repository's own releases are theirs."""
        result: list[ProviderSpec] = []
        seen: dict[tuple[str, str], str] = {}
        keys = {"namespace", "type", "tags", "deprecated", "revoked"} if own else set(PROVIDER_KEYS)
        for path, line, item in self.items(top, "providers"):
            m = self.mapping(item, path, line, keys, {"type"} if own else {"namespace", "type"})
            if m is None:
                continue
            namespace = self.string(m, "namespace", path, own.namespace if own else None)
            kind = self.string(m, "type", path)
            for value, what in ((namespace, "namespace"), (kind, "type")):
                problem = provider_problem(value, what) if value else None
                if problem:
                    self.problem(yamldoc.join(path, what), m.key_lines[what], problem)
            if own and namespace and "namespace" in m and not own.claims(namespace):
                self.problem(
                    yamldoc.join(path, "namespace"),
                    m.key_lines["namespace"],
                    f"the source's namespace is {own.namespace!r}; {namespace!r} is not"
                    " one its allow_namespaces lets a repository claim",
                )
            if own:
                releases: ForgeReleases | None = own.releases
                artifacts = (
                    releases_folder(cache_dir, namespace, kind) if namespace and kind else None
                )
            else:
                artifacts, releases = self._release_location(
                    m, path, line, namespace, kind, cache_dir
                )
            repo = self.parsed(m, "repo", path, self.repo_location, repeats=True)
            templates = self.templates(m, path)
            deprecated = deprecations(self, m, path)
            revoked = deprecations(self, m, path, "revoked")
            if not (namespace and kind and artifacts) or self.problems_at(path):
                self.left_out(path, line)
                continue
            spec = ProviderSpec(
                *(namespace, kind, artifacts, repo, templates, releases),
                deprecated=deprecated,
                revoked=revoked,
            )
            if spec.key in seen:
                self.problem(path, line, f"provider {spec} is already listed at {seen[spec.key]}")
            seen.setdefault(spec.key, path)
            result.append(spec)
        return result

    def _release_location(
        self,
        m: yamldoc.Mapping,
        path: str,
        line: int,
        namespace: str | None,
        kind: str | None,
        cache_dir: Path,
    ) -> tuple[Path | None, ForgeReleases | None]:
        """A registry.yaml entry's release files: its `artifacts` folder, or its forge's
        `releases` with the folder in cache_dir they are fetched into."""
        if "artifacts" in m and "releases" not in m:  # then it is the one required
            self.no_value(m, "artifacts", path, required=True)
        folder = self.string(m, "artifacts", path)
        artifacts = (self.base / os.path.expanduser(folder)).resolve() if folder else None
        if artifacts and not artifacts.is_dir():
            self.problem(
                yamldoc.join(path, "artifacts"),
                m.key_lines["artifacts"],
                f"{folder!r} is not a folder ({artifacts})",
            )
        releases = self.forge_releases(m, path) if "releases" in m else None
        if ("artifacts" in m) == ("releases" in m):
            self.problem(
                path,
                line,
                "give artifacts (a folder of release files) or releases (a forge's "
                "releases), exactly one of the two",
            )
        if releases is not None and namespace and kind:
            artifacts = releases_folder(cache_dir, namespace, kind)
        return artifacts, releases

    def secret(self, parent: yamldoc.Mapping, key: str, path: str) -> SecretRef | None:
        """A webhook secret: `{secret_env: NAME}` or `{secret_file: PATH}` (a module's, a
        source's, a provider's releases')."""
        where = yamldoc.join(path, key)
        m = self.section(parent, key, path, {"secret_env", "secret_file"})
        if m is None:
            return None
        env = self.env_name(m, "secret_env", where, "webhook")
        file = self.file(m, "secret_file", where, "webhook")
        if bool(env) == bool(file):
            if not self.problems_at(where):
                self.problem(
                    where, parent.key_lines[key], "give secret_env or secret_file (one of them)"
                )
            return None
        return SecretRef(env, file)

    def forge_releases(self, m: yamldoc.Mapping, path: str) -> ForgeReleases | None:
        """`releases: {gitlab: {url, project}}`, `{gitea: {url, repo}}` or `{github: {repo,
        api_url}}`, each with token_env or token_file and an interval."""
        where, line = yamldoc.join(path, "releases"), m.key_lines["releases"]
        given = self.mapping(m["releases"], where, line, set(_RELEASE_KEYS))
        if given is None:
            return None
        if len(given) != 1:
            self.problem(where, line, "must name one forge: gitlab, gitea or github")
            return None
        forge = next(iter(given))
        if forge not in _RELEASE_KEYS:
            return None  # reported as an unknown key
        where, line = yamldoc.join(where, forge), given.key_lines[forge]
        allowed, required = _RELEASE_KEYS[forge]
        r = self.mapping(given[forge], where, line, {*allowed, *_FORGE_COMMON}, set(required))
        if r is None:
            return None
        project = self.string(r, "project" if forge == "gitlab" else "repo", where)
        url = self.string(r, "api_url" if forge == "github" else "url", where)
        url = url or "https://api.github.com"
        parsed = urlsplit(url)
        if parsed.scheme not in ("https", "http") or not parsed.hostname or parsed.query:
            key = "api_url" if forge == "github" else "url"
            self.problem(
                yamldoc.join(where, key),
                r.key_lines.get(key, line),
                f"{url!r} is not an http(s) URL with a host",
            )
            return None
        if project and forge != "gitlab" and project.count("/") != 1:
            self.problem(
                yamldoc.join(where, "repo"), r.key_lines["repo"], f"{project!r} must be owner/name"
            )
            return None
        token = self.token(r, where, line)
        interval = self.duration(r, "interval", where, ForgeReleases.interval)
        webhook = self.secret(r, "webhook", where)
        if not project:
            return None
        return ForgeReleases(forge, url.rstrip("/"), project.strip("/"), token, interval, webhook)  # type: ignore[arg-type]

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

    def signing(self, top: yamldoc.Mapping) -> SigningKeys:
        m = self.section(top, "signing", "", {"keys", "verify_keys"})
        if m is None:
            return SigningKeys()
        private = self.key_files(m, "keys", need_private=True)
        public = self.key_files(m, "verify_keys", need_private=False)
        return SigningKeys(keys=private, verify_keys=public)

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
