"""A repository as a source lists it: what a survey knows of it before reading any of its Git;
what a source is to a survey (a Lister), and how it fails."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class FoundRepository:
    """One repository a source listed. `path` is its full path on the forge (`platform/net/
    terraform-aws-vpc`; for a folder source, relative to the folder), `name` its last segment."""

    name: str
    path: str
    clone_https: str  # "" where the source offers none (a folder source: `clone_local` instead)
    clone_ssh: str
    default_branch: str  # "": the source names none (Bitbucket; GitLab's empty repository)
    topics: tuple[str, ...] = ()
    archived: bool = False
    clone_local: str = ""  # a folder source's repository: its path on this machine

    def __init__(
        self,
        name: str,
        path: str,
        clone_https: str,
        clone_ssh: str,
        default_branch: str,
        topics: tuple[str, ...] = (),
        archived: bool = False,
        clone_local: str = "",
    ) -> None:
        # A listing makes 10,000 of these: its fields set at once, not one frozen
        # object.__setattr__ each as the dataclass's own __init__ does (cheaper:
        # bench/RESULTS.md, bench.discovery).
        self.__dict__.update(
            name=name,
            path=path,
            clone_https=clone_https,
            clone_ssh=clone_ssh,
            default_branch=default_branch,
            topics=topics,
            archived=archived,
            clone_local=clone_local,
        )


class Lister(Protocol):
    """What a source is to a survey: the repositories it lists now, all pages followed. Raises
    SourceUnavailable when the source cannot answer now (down, slow, rate-limiting: the last
    survey keeps serving) and SourceRefused when it answered no (a token without access, an
    unknown group: an error naming the source)."""

    def repositories(self) -> Sequence[FoundRepository]: ...


class SourceUnavailable(Exception):
    """The source cannot answer now; `retry_after` is how long it asked to be left alone, in
    seconds, when it said (Retry-After, a rate limit's reset)."""

    def __init__(self, why: str, retry_after: float | None = None) -> None:
        super().__init__(why)
        self.retry_after = retry_after


class SourceRefused(Exception):
    """The source answered, and the answer is no: a token it does not take or that may not read
    the group, a group or organisation it does not have."""
