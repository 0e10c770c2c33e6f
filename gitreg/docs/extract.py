"""A module's documentation from its files: each folder's `*.tf` read with python-hcl2 and
merged (a module's variables are spread over several files), its README, and its description.
A file that does not parse is named in `problems`; the rest is documented all the same."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gitreg.docs import hcl
from gitreg.docs.model import (
    FolderDocs,
    Input,
    ModuleCall,
    ModuleDocs,
    Output,
    ParseProblem,
    ProviderRequirement,
    Resource,
)
from gitreg.docs.readme import description
from gitreg.git.trees import DocFile


def module_docs(
    files: Iterable[DocFile], *, commit: str, folder: str = "", commit_time: int = 0
) -> ModuleDocs:
    """`files` (paths relative to the module's root `folder`, as `doc_files` lists them) as
    documentation. Problems name files by their path in the repository."""
    folders: dict[str, _Folder] = {"": _Folder("")}
    for file in files:
        where, _, name = file.path.rpartition("/")
        target = folders.setdefault(where, _Folder(where))
        shown = posixpath.normpath(f"{folder}/{file.path}") if folder else file.path
        target.add(name, shown, file.data, file.why)
    root = folders.pop("").docs()
    ordered = sorted(folders.items())
    return ModuleDocs(
        commit=commit,
        root=root,
        submodules=tuple(f.docs() for path, f in ordered if path.startswith("modules/")),
        examples=tuple(f.docs() for path, f in ordered if path.startswith("examples/")),
        repository_examples=tuple(f.docs() for path, f in ordered if path.startswith("../")),
        commit_time=commit_time,
    )


@dataclass
class _Folder:
    """One folder's blocks as its files are read."""

    path: str
    readme: str = ""
    inputs: dict[str, Input] = field(default_factory=dict)
    outputs: dict[str, Output] = field(default_factory=dict)
    providers: dict[str, ProviderRequirement] = field(default_factory=dict)
    calls: dict[str, ModuleCall] = field(default_factory=dict)
    resources: dict[tuple[str, str, str], Resource] = field(default_factory=dict)
    problems: list[ParseProblem] = field(default_factory=list)
    terraform_version: str = ""

    def add(self, name: str, shown: str, data: bytes | None, why: str = "") -> None:
        if data is None:
            self.problems.append(ParseProblem(shown, why or "too large: not read"))
            return
        try:
            source = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            self.problems.append(ParseProblem(shown, "not UTF-8 text"))
            return
        if not name.endswith(".tf"):
            self.readme = source
            return
        try:
            body = hcl.parse(source)
        except hcl.HclSyntaxError as exc:
            self.problems.append(ParseProblem(shown, str(exc)))
            return
        try:
            self._read(body, shown)
        except Exception as exc:  # a shape nobody foresaw: this file's fault, not the module's
            self.problems.append(ParseProblem(shown, f"cannot document: {exc!r}"[:300]))

    def _read(self, body: Mapping[str, Any], shown: str) -> None:
        for name, block in hcl.labelled(body, "variable"):
            self._once(self.inputs, name, _input(name, block), shown, "variable")
        for name, block in hcl.labelled(body, "output"):
            self._once(self.outputs, name, _output(name, block), shown, "output")
        for name, block in hcl.labelled(body, "module"):
            self._once(self.calls, name, module_call(name, block), shown, "module")
        for mode, kind in (("managed", "resource"), ("data", "data")):
            for item in hcl.blocks(body, kind):
                for type_, named in hcl.attributes(item).items():
                    for name in hcl.attributes(named) if isinstance(named, Mapping) else ():
                        resource = Resource(hcl.label(type_), hcl.label(name), mode)
                        self.resources[(mode, resource.type, resource.name)] = resource
        for terraform in hcl.blocks(body, "terraform"):
            attrs = hcl.attributes(terraform)
            if "required_version" in attrs and not self.terraform_version:
                self.terraform_version = hcl.text(attrs["required_version"])
            for required in hcl.blocks(terraform, "required_providers"):
                for local, spec in hcl.attributes(required).items():
                    self.providers.setdefault(local, _provider(local, spec))

    def _once(self, found: dict[str, Any], name: str, value: object, shown: str, kind: str) -> None:
        # Terraform refuses a second declaration: say so, and document the first.
        if name in found:
            self.problems.append(ParseProblem(shown, f'{kind} "{name}" is declared twice'))
        else:
            found[name] = value

    def docs(self) -> FolderDocs:
        return FolderDocs(
            path=self.path,
            readme=self.readme,
            inputs=tuple(self.inputs[k] for k in sorted(self.inputs)),
            outputs=tuple(self.outputs[k] for k in sorted(self.outputs)),
            providers=tuple(self.providers[k] for k in sorted(self.providers)),
            module_calls=tuple(self.calls[k] for k in sorted(self.calls)),
            resources=tuple(self.resources[k] for k in sorted(self.resources)),
            problems=tuple(self.problems),
            description=description(self.readme),
            terraform_version=self.terraform_version,
        )


def module_call(name: str, block: Mapping[str, Any]) -> ModuleCall:
    """A `module` block's source and version constraint, as written."""
    attrs = hcl.attributes(block)
    return ModuleCall(name, hcl.text(attrs.get("source", "")), hcl.text(attrs.get("version", "")))


def _input(name: str, block: Mapping[str, Any]) -> Input:
    attrs = hcl.attributes(block)
    has_default = "default" in attrs
    return Input(
        name=name,
        type=hcl.render(attrs["type"]) if "type" in attrs else "",
        description=hcl.text(attrs.get("description", "")),
        default=hcl.render(attrs["default"]) if has_default else None,
        required=not has_default,
        sensitive=hcl.flag(attrs.get("sensitive"), False),
        nullable=hcl.flag(attrs.get("nullable"), True),
        deprecated=hcl.text(attrs.get("deprecated", "")),
    )


def _output(name: str, block: Mapping[str, Any]) -> Output:
    attrs = hcl.attributes(block)
    return Output(
        name=name,
        description=hcl.text(attrs.get("description", "")),
        sensitive=hcl.flag(attrs.get("sensitive"), False),
        deprecated=hcl.text(attrs.get("deprecated", "")),
    )


def _provider(local: str, spec: object) -> ProviderRequirement:
    if isinstance(spec, Mapping):  # aws = { source = "hashicorp/aws", version = "~> 5.0" }
        attrs = hcl.attributes(spec)
        source, version = attrs.get("source", ""), attrs.get("version", "")
        return ProviderRequirement(local, hcl.text(source), hcl.text(version))
    return ProviderRequirement(local, "", hcl.text(spec))  # before 0.13: aws = "~> 2.0"
