"""A repository as a source lists it: what discovery knows of it before reading any of its Git."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FoundRepository:
    """One repository a source listed. `path` is its full path on the forge (`platform/net/
    terraform-aws-vpc`; for a folder source, relative to the folder), `name` its last segment."""

    name: str
    path: str
    clone_https: str  # "" where the source offers none (a folder source: `clone_local` instead)
    clone_ssh: str
    default_branch: str
    topics: tuple[str, ...] = ()
    archived: bool = False
    clone_local: str = ""  # a folder source's repository: its path on this machine
