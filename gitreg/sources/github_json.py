"""A repository as GitHub's REST API writes it, which Gitea's and Forgejo's v1 API write the same
way (`name`, `full_name`, `clone_url`, `ssh_url`, `default_branch`, `topics`, `archived`): read
once for both listers."""

from __future__ import annotations

from collections.abc import Sequence

from gitreg.sources.forge_json import Item, PageShape, flag, items, optional_text, text, words
from gitreg.sources.found import FoundRepository

# What `repository` reads of each item of a page: the rest is skipped unbuilt.
SHAPE = PageShape(
    "GitHubRepository",
    ("name", "full_name", "clone_url", "ssh_url", "default_branch", "topics", "archived"),
)


def repositories(body: object) -> Sequence[Item]:
    return items(body, "repository")


def repository(item: Item) -> FoundRepository:
    return FoundRepository(
        name=text(item, "name"),
        path=text(item, "full_name"),
        clone_https=text(item, "clone_url"),
        clone_ssh=optional_text(item, "ssh_url"),
        default_branch=optional_text(item, "default_branch"),
        topics=words(item, "topics") or (),
        archived=flag(item, "archived"),
    )
