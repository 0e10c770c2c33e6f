"""Documentation kept on disk, one JSON file per (clone, commit, folder) under cache_dir/docs/.
Derived data: a file that is absent, unreadable, of another format or for another key is
simply built again; a commit's tree never changes, so a file that reads well never goes stale."""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import asdict
from pathlib import Path
from typing import Any

from gitreg.atomic import write_atomically
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

log = logging.getLogger(__name__)

# Raised whenever the JSON's shape or what extraction puts in it changes: older files rebuild.
# 2: the repository's root examples of a module in a folder; 3: `deprecated` (since read with
# the tags: modules/clone_read.py; a file of format 3 that holds it is read without it).
FORMAT = 3


class DocsCache:
    def __init__(self, cache_dir: Path) -> None:
        self.root = cache_dir / "docs"

    def path(self, clone: str, commit: str, folder: str) -> Path:
        """`clone`: the clone's name (its folder in cache_dir/git/, without `.git`)."""
        where = hashlib.sha256(folder.encode()).hexdigest()[:12] if folder else "root"
        return self.root / clone / f"{commit}.{where}.json"

    def load(self, clone: str, commit: str, folder: str) -> ModuleDocs | None:
        """The docs kept for the key, or None when there are none usable (then build them)."""
        path = self.path(clone, commit, folder)
        try:
            data = json.loads(path.read_bytes())
            if data.get("format") != FORMAT or data.get("folder") != folder:
                return None
            docs = from_json(data["docs"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            log.warning("rebuilding the docs in %s: unreadable (%s)", path.name, type(exc).__name__)
            return None
        return docs if docs.commit == commit else None

    def store(self, clone: str, folder: str, docs: ModuleDocs) -> None:
        body = {"format": FORMAT, "folder": folder, "docs": asdict(docs)}
        # "none": derived data, rebuilt if a crash of the machine leaves the file empty.
        data = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
        write_atomically(self.path(clone, docs.commit, folder), data, sync="none")


def from_json(data: dict[str, Any]) -> ModuleDocs:
    """The ModuleDocs `dataclasses.asdict` made of it; raises on any field amiss."""
    return ModuleDocs(
        commit=str(data["commit"]),
        root=_folder(data["root"]),
        submodules=tuple(_folder(f) for f in data["submodules"]),
        examples=tuple(_folder(f) for f in data["examples"]),
        commit_time=int(data["commit_time"]),
        repository_examples=tuple(_folder(f) for f in data["repository_examples"]),
    )


def _folder(data: dict[str, Any]) -> FolderDocs:
    return FolderDocs(
        path=str(data["path"]),
        readme=str(data["readme"]),
        inputs=tuple(Input(**item) for item in data["inputs"]),
        outputs=tuple(Output(**item) for item in data["outputs"]),
        providers=tuple(ProviderRequirement(**item) for item in data["providers"]),
        module_calls=tuple(ModuleCall(**item) for item in data["module_calls"]),
        resources=tuple(Resource(**item) for item in data["resources"]),
        problems=tuple(ParseProblem(**item) for item in data["problems"]),
        description=str(data["description"]),
        terraform_version=str(data["terraform_version"]),
    )
