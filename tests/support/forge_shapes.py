"""What each forge's API documents for a repository listing, as JSON: a GitLab v4 project, a
Gitea/Forgejo v1 and a GitHub REST repository, a Bitbucket Data Center 1.0 repository; and the
bodies each answers an error with. The stand-in forges (tests/support/forges.py) send these."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

ForgeKind = Literal["gitlab", "gitea", "github", "bitbucket"]
KINDS: tuple[ForgeKind, ...] = ("gitlab", "gitea", "github", "bitbucket")


@dataclass(frozen=True)
class ForgeRepository:
    """A repository a stand-in forge holds. `path` is the forge's full path: GitLab's
    `group/subgroup/name`, Gitea's and GitHub's `org/name`, Bitbucket's `KEY/slug`."""

    path: str
    topics: tuple[str, ...] = ()
    archived: bool = False
    default_branch: str = "main"
    clone_https: str = ""  # "": the forge's own URL, `/PATH.git`
    clone_ssh: str = ""  # "": `ssh://git@127.0.0.1:2222/PATH.git`

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def owner(self) -> str:
        return self.path.rsplit("/", 1)[0]


def repository_json(kind: ForgeKind, repository: ForgeRepository, number: int, url: str) -> bytes:
    """The repository as `kind` lists it; `number` is its id, `url` the forge's address."""
    https = repository.clone_https or f"{url}/{repository.path}.git"
    ssh = repository.clone_ssh or f"ssh://git@127.0.0.1:2222/{repository.path}.git"
    shape = {"gitlab": _gitlab, "gitea": _gitea, "github": _github, "bitbucket": _bitbucket}
    return json.dumps(shape[kind](repository, number, url, https, ssh)).encode()


def _gitlab(r: ForgeRepository, n: int, url: str, https: str, ssh: str) -> dict[str, object]:
    web = f"{url}/{r.path}"
    return {
        "id": n,
        "description": f"{r.name}, a module",
        "name": r.name.replace("-", " ").title(),  # the display name, not the path's segment
        "name_with_namespace": " / ".join(r.path.split("/")),
        "path": r.name,
        "path_with_namespace": r.path,
        "created_at": "2026-01-02T03:04:05.000Z",
        "default_branch": r.default_branch or None,
        "tag_list": list(r.topics),
        "topics": list(r.topics),
        "ssh_url_to_repo": ssh,
        "http_url_to_repo": https,
        "web_url": web,
        "readme_url": f"{web}/-/blob/{r.default_branch}/README.md",
        "avatar_url": None,
        "forks_count": 0,
        "star_count": 0,
        "last_activity_at": "2026-01-02T03:04:05.000Z",
        "namespace": {
            "id": 1000 + len(r.owner),
            "name": r.owner.rsplit("/", 1)[-1],
            "path": r.owner.rsplit("/", 1)[-1],
            "kind": "group",
            "full_path": r.owner,
            "parent_id": None,
            "web_url": f"{url}/groups/{r.owner}",
        },
        "_links": {
            "self": f"{url}/api/v4/projects/{n}",
            "issues": f"{url}/api/v4/projects/{n}/issues",
        },
        "empty_repo": False,
        "archived": r.archived,
        "visibility": "internal",
        "open_issues_count": 0,
        "permissions": {"project_access": None, "group_access": {"access_level": 20}},
    }


def _gitea(r: ForgeRepository, n: int, url: str, https: str, ssh: str) -> dict[str, object]:
    owner = {"id": 7, "login": r.owner, "full_name": "", "avatar_url": f"{url}/avatars/7"}
    return {
        "id": n,
        "owner": owner,
        "name": r.name,
        "full_name": r.path,
        "description": f"{r.name}, a module",
        "empty": False,
        "private": True,
        "fork": False,
        "template": False,
        "parent": None,
        "mirror": False,
        "size": 42,
        "html_url": f"{url}/{r.path}",
        "url": f"{url}/api/v1/repos/{r.path}",
        "ssh_url": ssh,
        "clone_url": https,
        "website": "",
        "stars_count": 0,
        "default_branch": r.default_branch,
        "archived": r.archived,
        "created_at": "2026-01-02T03:04:05Z",
        "updated_at": "2026-01-02T03:04:05Z",
        "archived_at": "2026-01-03T00:00:00Z" if r.archived else "1970-01-01T00:00:00Z",
        "permissions": {"admin": False, "push": False, "pull": True},
        "topics": list(r.topics),
    }


def _github(r: ForgeRepository, n: int, url: str, https: str, ssh: str) -> dict[str, object]:
    return {
        "id": n,
        "node_id": f"R_{n}",
        "name": r.name,
        "full_name": r.path,
        "owner": {"login": r.owner, "id": 7, "type": "Organization"},
        "private": True,
        "html_url": f"https://github.example/{r.path}",
        "description": f"{r.name}, a module",
        "fork": False,
        "url": f"{url}/repos/{r.path}",
        "git_url": f"git://github.example/{r.path}.git",
        "ssh_url": ssh,
        "clone_url": https,
        "default_branch": r.default_branch,
        "archived": r.archived,
        "disabled": False,
        "visibility": "private",
        "topics": list(r.topics),
        "pushed_at": "2026-01-02T03:04:05Z",
        "created_at": "2026-01-02T03:04:05Z",
        "updated_at": "2026-01-02T03:04:05Z",
        "permissions": {"admin": False, "push": False, "pull": True},
    }


def _bitbucket(r: ForgeRepository, n: int, url: str, https: str, ssh: str) -> dict[str, object]:
    key = r.owner
    return {
        "slug": r.name,
        "id": n,
        "name": r.name,
        "hierarchyId": f"{n:020x}",
        "scmId": "git",
        "state": "AVAILABLE",
        "statusMessage": "Available",
        "forkable": True,
        "project": {"key": key, "id": 3, "name": key.title(), "public": False, "type": "NORMAL"},
        "public": False,
        "archived": r.archived,
        "links": {
            "clone": [{"href": https, "name": "http"}, {"href": ssh, "name": "ssh"}],
            "self": [{"href": f"{url}/projects/{key}/repos/{r.name}/browse"}],
        },
    }


def not_found(kind: ForgeKind, what: str) -> bytes:
    bodies: dict[ForgeKind, object] = {
        "gitlab": {"message": "404 Group Not Found"},
        "gitea": {"errors": [], "message": "The target couldn't be found.", "url": ""},
        "github": {
            "message": "Not Found",
            "documentation_url": "https://docs.github.com/rest/repos/repos",
            "status": "404",
        },
        "bitbucket": _bitbucket_error(
            f"Project {what} does not exist.",
            "com.atlassian.bitbucket.project.NoSuchProjectException",
        ),
    }
    return json.dumps(bodies[kind]).encode()


def unauthorized(kind: ForgeKind) -> bytes:
    bodies: dict[ForgeKind, object] = {
        "gitlab": {"message": "401 Unauthorized"},
        "gitea": {"message": "user does not exist [uid: 0, name: ]", "url": ""},
        "github": {
            "message": "Bad credentials",
            "documentation_url": "https://docs.github.com/rest",
            "status": "401",
        },
        "bitbucket": _bitbucket_error(
            "Authentication failed. Please check your credentials and try again.",
            "com.atlassian.bitbucket.auth.IncorrectPasswordAuthenticationException",
        ),
    }
    return json.dumps(bodies[kind]).encode()


def _bitbucket_error(message: str, exception: str) -> dict[str, object]:
    return {"errors": [{"context": None, "message": message, "exceptionName": exception}]}
