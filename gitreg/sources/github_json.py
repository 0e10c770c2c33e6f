"""A repository as GitHub's REST API writes it, read once for both listers.

Gitea's and Forgejo's v1 API write it the same way (`name`, `full_name`, `clone_url`, `ssh_url`,
`default_branch`, `topics`, `archived`)."""

from __future__ import annotations

from gitreg.sources.forge_json import GitHubRepository, Shaped
from gitreg.sources.found import FoundRepository

PAGE = Shaped(list[GitHubRepository])


def repositories(page: list[GitHubRepository]) -> list[GitHubRepository]:
    return page


def repository(listed: GitHubRepository) -> FoundRepository:
    return FoundRepository(
        name=listed.name,
        path=listed.full_name,
        clone_https=listed.clone_url,
        clone_ssh=listed.ssh_url or "",
        default_branch=listed.default_branch or "",
        topics=listed.topics or (),
        archived=bool(listed.archived),
    )
