"""Which `module` sources name a module of this registry, and which of its modules.

A registry source is `HOST/NAMESPACE/NAME/SYSTEM[//folder]`, HOST being the catalog's hostname
or `public_url`'s host. A Git source is `git::URL[//folder][?ref=…]`, or a bare form Terraform
reads as Git (`git@host:path`, `https://host/path.git`, `github.com/org/repo`), whose
repository is a catalog module's (its `repo` or its `git_url`, compared by
`RepoLocation.identity`) and whose folder is that module's. Credentials in a URL are never kept:
`shown` is the source with them hidden. See docs/dependents.md."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from gitreg.address import name_problem, system_problem
from gitreg.catalog.model import Catalog
from gitreg.catalog.specs import ModuleSpec
from gitreg.git.location import RepoLocation, is_scp_like, redact

Key = tuple[str, str, str]  # a module's (namespace, name, system), lower case
_FORCED = re.compile(r"^([A-Za-z0-9]+)::")
_GITHUB = re.compile(r"^(github\.com|bitbucket\.org)/[^/]+/[^/]+")
_SSH = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:")  # go-getter's `git@host:path`


@dataclass(frozen=True)
class Target:
    """What a source names of this registry: the modules (several when one folder of one
    repository is published under several addresses), by Git (`ref`: the `?ref=` given, "" for
    the default branch) or by the registry protocol (`ref` is then "")."""

    keys: tuple[Key, ...]
    by_git: bool
    ref: str = ""
    folder: str = ""  # the `//folder` inside the module, for a registry source


class RegistrySources:
    """The hosts and repositories that make a source this registry's, from one catalog."""

    def __init__(self, hosts: Iterable[str], modules: Iterable[ModuleSpec]) -> None:
        self.hosts = frozenset(h.lower() for h in hosts if h)
        self._folders: dict[tuple[str, str], list[Key]] = {}
        for spec in modules:
            key = spec.address.key
            identities = {spec.repo.identity}
            if spec.git_url:
                identities.add(_identity(spec.git_url) or "")
            for identity in identities - {""}:
                self._folders.setdefault((identity, spec.path.strip("/")), []).append(key)

    @classmethod
    def of(cls, catalog: Catalog) -> RegistrySources:
        hosts = [catalog.server.hostname]
        if catalog.server.public_url:
            parts = urlsplit(catalog.server.public_url)
            hosts.append(parts.netloc.rsplit("@", 1)[-1].removesuffix(":443"))
        return cls(hosts, catalog.modules)

    def target(self, source: str) -> Target | None:
        """The modules `source` names here, or None when it names none of them."""
        source = source.strip()
        forced = _FORCED.match(source)
        if forced is not None:
            if forced.group(1).lower() != "git":
                return None
            return self._git(source[forced.end() :])
        if _SSH.match(source) or _GITHUB.match(source):
            return self._git(source)
        if "://" in source:  # a bare URL is Git to Terraform when it ends in .git
            return self._git(source) if split_git(source)[0].endswith(".git") else None
        return self._registry(source)

    def _registry(self, source: str) -> Target | None:
        address, _, folder = source.partition("//")
        parts = address.split("/")
        if len(parts) != 4 or parts[0].lower() not in self.hosts:
            return None
        _, namespace, name, system = parts
        if name_problem(namespace, "namespace") or name_problem(name, "name"):
            return None
        if system_problem(system.lower()):
            return None
        key = (namespace.lower(), name.lower(), system.lower())
        return Target((key,), by_git=False, folder=folder.strip("/"))

    def _git(self, source: str) -> Target | None:
        url, folder, ref = split_git(source)
        identity = _identity(url)
        if identity is None:
            return None
        # The longest module folder that holds the one named: a call of `//modules/vpc/sub`
        # calls the module at modules/vpc.
        wanted = folder.strip("/")
        while True:
            keys = self._folders.get((identity, wanted))
            if keys:
                return Target(tuple(keys), by_git=True, ref=ref)
            if not wanted:
                return None
            wanted = wanted.rpartition("/")[0]


def split_git(source: str) -> tuple[str, str, str]:
    """A Git source's URL, `//folder` and `ref`, as go-getter splits them."""
    rest, _, query = source.partition("?")
    ref = parse_qs(query).get("ref", [""])[0]
    if _GITHUB.match(rest):
        rest = f"https://{rest}"
    scheme, sep, after = rest.partition("://")
    if not sep:
        scheme, after = "", rest
    address, _, folder = after.partition("//")
    url = f"{scheme}://{address}" if sep else address
    return url, folder, ref


def shown(source: str) -> str:
    """`source` with any credential in it hidden: what an answer may carry."""
    return redact(re.sub(r"(?i)([?&](?:sshkey|token|password)=)[^&]*", r"\1***", source))


def _identity(url: str) -> str | None:
    """What every spelling of the repository at `url` shares (`RepoLocation.identity`); None
    for what names no repository."""
    try:
        if url.startswith("file://"):
            path = Path(unquote(urlsplit(url).path))
            return RepoLocation(str(path.resolve()), "local").identity
        if "://" in url:
            if not urlsplit(url).hostname:
                return None
            return RepoLocation(url, "https").identity
        if is_scp_like(url):
            return RepoLocation(url, "ssh").identity
    except (ValueError, OSError):
        return None
    return None
