"""A small kustomize, for the tests of deploy/kubernetes where `kubectl kustomize` is absent:
the features those manifests use (resources, namespace, configMapGenerator with its name hash,
strategic-merge patches), and an error for any other, never a guess. A test checks it renders
what kubectl does wherever kubectl is installed."""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

Resource = dict[str, Any]

_KEYS = {"apiVersion", "kind", "namespace", "resources", "configMapGenerator", "patches"}
_GENERATOR_KEYS = {"name", "files", "behavior"}
# Kinds without a namespace, among those a kustomization here could list.
_CLUSTER_KINDS = {"Namespace", "ClusterRole", "ClusterRoleBinding", "PersistentVolume"}
# The patchMergeKey of each list of objects a strategic-merge patch may touch; kustomize takes
# them from the OpenAPI schema. A list of objects elsewhere is refused, not replaced blindly.
_MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "ports": "containerPort",
}


class Unsupported(Exception):
    """The kustomization uses something this renderer does not implement."""


@dataclass
class _Build:
    resources: list[Resource] = field(default_factory=list)
    generated: set[int] = field(default_factory=set)  # id() of the generated ConfigMaps


def render(folder: Path) -> list[Resource]:
    """What `kubectl kustomize folder` prints, as a list of objects (in no particular order)."""
    build = _build(folder.resolve(), set())
    renames: dict[str, str] = {}
    for resource in build.resources:
        if id(resource) in build.generated:
            name = resource["metadata"]["name"]
            renames[name] = f"{name}-{config_map_hash(resource)}"
            resource["metadata"]["name"] = renames[name]
    for resource in build.resources:
        _rename_config_maps(resource, renames)
    return build.resources


def _build(folder: Path, seen: set[Path]) -> _Build:
    if folder in seen:
        raise Unsupported(f"{folder}: a cycle of kustomizations")
    seen = seen | {folder}
    kustomization = yaml.safe_load((folder / "kustomization.yaml").read_text())
    unknown = set(kustomization) - _KEYS
    if unknown:
        raise Unsupported(f"{folder}: kustomization keys {sorted(unknown)}")
    build = _Build()
    for entry in kustomization.get("resources", []):
        path = (folder / entry).resolve()
        if path.is_dir():
            inner = _build(path, seen)
            build.resources += inner.resources
            build.generated |= inner.generated
        else:
            build.resources += [d for d in yaml.safe_load_all(path.read_text()) if d]
    for generator in kustomization.get("configMapGenerator", []):
        _generate(folder, generator, build)
    for patch in kustomization.get("patches", []):
        if set(patch) != {"path"}:
            raise Unsupported(f"{folder}: a patch with {sorted(patch)}")
        _patch(build.resources, yaml.safe_load((folder / patch["path"]).read_text()))
    namespace = kustomization.get("namespace")
    if namespace is not None:
        for resource in build.resources:
            if resource["kind"] not in _CLUSTER_KINDS:
                resource["metadata"]["namespace"] = namespace
    return build


def _generate(folder: Path, generator: dict[str, Any], build: _Build) -> None:
    unknown = set(generator) - _GENERATOR_KEYS
    if unknown:
        raise Unsupported(f"{folder}: configMapGenerator keys {sorted(unknown)}")
    data = {Path(f).name: (folder / f).read_text() for f in generator["files"]}
    behavior = generator.get("behavior", "create")
    name = generator["name"]
    existing = [
        r for r in build.resources if id(r) in build.generated and r["metadata"]["name"] == name
    ]
    if behavior == "create":
        if existing:
            raise Unsupported(f"{folder}: ConfigMap {name} is generated twice")
        config_map = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name},
            "data": data,
        }
        build.resources.append(config_map)
        build.generated.add(id(config_map))
    elif behavior in ("replace", "merge") and len(existing) == 1:
        if behavior == "replace":
            existing[0]["data"] = data
        else:
            existing[0]["data"].update(data)
    else:
        raise Unsupported(f"{folder}: configMapGenerator {name} with behavior {behavior}")


def config_map_hash(config_map: Resource) -> str:
    """kustomize's name suffix: the SHA-256 of the ConfigMap's kind, name and data as Go's
    json.Marshal writes them (sorted keys, <, > and & escaped), ten hex digits with the
    characters that could spell words swapped out. The name is always empty: kustomize looks
    it up as one field called "metadata/name", which no ConfigMap has."""
    encoded: dict[str, Any] = {"kind": "ConfigMap", "name": "", "data": config_map["data"]}
    if config_map.get("binaryData"):
        encoded["binaryData"] = config_map["binaryData"]
    text = json.dumps(encoded, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escape)
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    digest = hashlib.sha256(text.encode()).hexdigest()[:10]
    return digest.translate(str.maketrans("013ae", "ghkmt"))


def _rename_config_maps(value: Any, renames: dict[str, str]) -> None:
    """Point every reference to a generated ConfigMap at its hashed name: volumes, env and
    envFrom (the references a pod spec can hold)."""
    if isinstance(value, dict):
        for key in ("configMap", "configMapKeyRef", "configMapRef"):
            ref = value.get(key)
            if isinstance(ref, dict) and ref.get("name") in renames:
                ref["name"] = renames[ref["name"]]
        for item in value.values():
            _rename_config_maps(item, renames)
    elif isinstance(value, list):
        for item in value:
            _rename_config_maps(item, renames)


def _patch(resources: list[Resource], patch: Resource) -> None:
    targets = [
        r
        for r in resources
        if r["kind"] == patch["kind"]
        and r["apiVersion"] == patch["apiVersion"]
        and r["metadata"]["name"] == patch["metadata"]["name"]
    ]
    if len(targets) != 1:
        raise Unsupported(f"a patch of {patch['kind']}/{patch['metadata']['name']} matches none")
    _merge(targets[0], patch, "")


def _merge(target: dict[str, Any], patch: dict[str, Any], where: str) -> None:
    """A strategic merge: maps merge, null deletes, a list of objects merges by its key, any
    other list is replaced."""
    for key, value in patch.items():
        path = f"{where}.{key}"
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value, path)
        elif isinstance(value, list) and any(isinstance(item, dict) for item in value):
            if key not in _MERGE_KEYS:
                raise Unsupported(f"a patch of the list {path}: its merge key is not known here")
            target[key] = _merge_list(target.get(key, []), value, _MERGE_KEYS[key], path)
        else:
            target[key] = copy.deepcopy(value)


def _merge_list(
    target: list[dict[str, Any]], patch: list[dict[str, Any]], key: str, where: str
) -> list[dict[str, Any]]:
    merged = list(target)
    added = []
    for item in patch:
        same = [t for t in merged if t.get(key) == item[key]]
        if same:
            _merge(same[0], item, f"{where}[{item[key]}]")
        else:
            added.append(copy.deepcopy(item))
    return added + merged  # kustomize puts what a patch adds first
