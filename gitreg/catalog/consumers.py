"""The `consumers:` section: repositories that are no modules but call them (a team's
infrastructure), read at their default branch for the dependents. An entry names one
repository (`repo:`), or a forge group or folder as `sources:` does; each has a `namespace:`,
whose readers alone may see its name, paths and calls. See docs/dependents.md."""

from __future__ import annotations

from dataclasses import dataclass, field

from gitreg.address import name_problem
from gitreg.catalog import yamldoc
from gitreg.catalog.sources import SourcesSection
from gitreg.catalog.specs import SOURCE_KINDS, SourceSpec
from gitreg.git.location import RepoLocation

# What a source's entry holds that means nothing for a consumer (it publishes no version).
_NOT_FOR_CONSUMERS = (
    *("tags", "moved_tags", "deleted_tags", "webhook", "require_signed_tags"),
    *("on_removed", "allow_namespaces", "publish_when"),
)
_REPO_KEYS = ("repo", "namespace", "branch", "interval")


@dataclass(frozen=True, kw_only=True)
class ConsumerSpec:
    """One entry of `consumers:`: a repository (`repo`), or the repositories a source lists
    (`source`), read every `interval` seconds."""

    key_path: str  # `consumers[1]`
    namespace: str
    repo: RepoLocation | None = None
    branch: str | None = None  # None: the remote's default (its HEAD)
    source: SourceSpec | None = None
    interval: float = 300.0
    line: int = field(default=0, compare=False)

    def __str__(self) -> str:
        where = self.repo if self.repo is not None else self.source
        return f"{self.key_path} ({where})"


class ConsumersSection(SourcesSection):
    def consumers(self, top: yamldoc.Mapping) -> list[ConsumerSpec]:
        result = []
        for path, line, item in self.items(top, "consumers"):
            m = self.mapping(item, path, line, (*_REPO_KEYS, *SOURCE_KINDS))
            if m is None:
                continue
            kinds = [k for k in ("repo", *SOURCE_KINDS) if k in m]
            if len(kinds) != 1:
                listed = ", ".join(("repo", *SOURCE_KINDS))
                self.problem(path, line, f"give one of {listed}, not {', '.join(kinds) or 'none'}")
                continue
            spec = self._repo(m, path, line) if kinds[0] == "repo" else self._listed(m, path, line)
            if spec is None:
                self.left_out(path, line)
            else:
                result.append(spec)
        return result

    def _repo(self, m: yamldoc.Mapping, path: str, line: int) -> ConsumerSpec | None:
        if "namespace" not in m:
            self.problem(path, line, "give namespace: (whose readers may see this repository)")
            return None
        repo = self.parsed(m, "repo", path, self.repo_location, repeats=True)
        namespace = self.string(m, "namespace", path)
        if namespace is not None and (problem := name_problem(namespace, "namespace")):
            self.problem(yamldoc.join(path, "namespace"), m.key_lines["namespace"], problem)
            namespace = None
        branch = self.string(m, "branch", path)
        interval = self.duration(m, "interval", path, 300.0)
        if repo is None or namespace is None or ("branch" in m and not branch):
            return None
        return ConsumerSpec(
            key_path=path,
            namespace=namespace,
            repo=repo,
            branch=branch,
            interval=interval,
            line=line,
        )

    def _listed(self, m: yamldoc.Mapping, path: str, line: int) -> ConsumerSpec | None:
        for key in ("namespace", "branch", "interval"):
            if key in m:
                self.problem(
                    yamldoc.join(path, key),
                    m.key_lines[key],
                    "goes inside the source's own mapping, as in sources:",
                )
        kind = next(k for k in SOURCE_KINDS if k in m)
        source = self.source(m, kind, path, omit=_NOT_FOR_CONSUMERS)
        if source is None or self.problems_at(path):
            return None
        return ConsumerSpec(
            key_path=path,
            namespace=source.namespace,
            source=source,
            interval=source.interval,
            line=line,
        )
