"""What a module's documentation holds, as frozen values: one `ModuleDocs` per commit and
folder, with the same fields for the root, each submodule and each example. Plain data, so that
it round-trips through JSON (the disk cache, the registry API) without loss."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Input:
    """A `variable` block. `type` and `default` are HCL as written (`object({a = string})`,
    `"eu-west-1"`); `default` is None with `required` True when there is none."""

    name: str
    type: str = ""  # empty: no type constraint (any)
    description: str = ""
    default: str | None = None
    required: bool = True
    sensitive: bool = False
    nullable: bool = True
    deprecated: str = ""  # the `deprecated` message; empty when not deprecated


@dataclass(frozen=True)
class Output:
    name: str
    description: str = ""
    sensitive: bool = False
    deprecated: str = ""


@dataclass(frozen=True)
class ProviderRequirement:
    """An entry of `terraform { required_providers { … } }`."""

    name: str  # the local name (`aws`)
    source: str = ""  # `hashicorp/aws`; empty when not given
    version: str = ""  # the constraint as written; empty when none


@dataclass(frozen=True)
class ModuleCall:
    name: str
    source: str
    version: str = ""


@dataclass(frozen=True)
class Resource:
    type: str  # `aws_vpc`
    name: str  # `this`
    mode: str = "managed"  # "managed" (resource) or "data"


@dataclass(frozen=True)
class ParseProblem:
    """A file that did not parse: it is left out of the docs, which say which and why."""

    path: str  # relative to the repository root
    message: str


@dataclass(frozen=True)
class FolderDocs:
    """The documentation of one folder: the module's root, a submodule or an example."""

    path: str  # relative to the module's root; "" for the root itself
    readme: str = ""  # Markdown as found (README.md); empty when none
    inputs: tuple[Input, ...] = ()
    outputs: tuple[Output, ...] = ()
    providers: tuple[ProviderRequirement, ...] = ()
    module_calls: tuple[ModuleCall, ...] = ()
    resources: tuple[Resource, ...] = ()
    problems: tuple[ParseProblem, ...] = ()
    description: str = ""  # the README's first paragraph as plain text, for lists and search
    terraform_version: str = ""  # `terraform { required_version }` as written; empty when none


@dataclass(frozen=True)
class ModuleDocs:
    """A module's documentation at one commit: its root, and its `modules/*` submodules and
    `examples/*` examples, each sorted by path; for a module in a folder of its repository, the
    examples under the repository's own `examples/` too, by their path from the module's
    folder (`../../examples/basic`)."""

    commit: str
    root: FolderDocs
    submodules: tuple[FolderDocs, ...] = ()
    examples: tuple[FolderDocs, ...] = ()
    commit_time: int = 0  # the commit's committer time, Unix seconds
    repository_examples: tuple[FolderDocs, ...] = ()

    def calls(self) -> tuple[tuple[str, ModuleCall], ...]:
        """The `module` blocks of its root and submodules whose source is no local path, each
        with its folder: what the module calls elsewhere (its examples are no dependents)."""
        return tuple(
            (folder.path, call)
            for folder in (self.root, *self.submodules)
            for call in folder.module_calls
            if not call.source.startswith(("./", "../"))
        )

    def requirements(self) -> tuple[tuple[str, ProviderRequirement], ...]:
        """The `required_providers` entries of its root and submodules, each with its folder:
        the providers the module needs (its examples' are no dependents, as for `calls`)."""
        return tuple(
            (folder.path, required)
            for folder in (self.root, *self.submodules)
            for required in folder.providers
        )
