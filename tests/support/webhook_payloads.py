"""Push and release payloads and headers shaped like each forge's own (trimmed to the fields that
matter, with their real names and nesting), for a repository served at https://HOST/ORG/REPO."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable
from dataclasses import dataclass


def _hmac(secret: str, body: bytes) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Forge:
    name: str  # the gitreg endpoint: /v1/webhooks/<name>
    payload: Callable[[str, str, str], dict[str, object]]  # (host, path, tag) → JSON
    headers: Callable[[str, bytes], dict[str, str]]  # (secret, body) → headers

    def request(self, host: str, path: str, tag: str, secret: str) -> tuple[bytes, dict[str, str]]:
        body = json.dumps(self.payload(host, path, tag)).encode()
        return body, {"Content-Type": "application/json", **self.headers(secret, body)}


def github_payload(host: str, path: str, tag: str) -> dict[str, object]:
    owner, name = path.split("/", 1)
    return {
        "ref": f"refs/tags/{tag}",
        "before": "0" * 40,
        "after": "a" * 40,
        "created": True,
        "deleted": False,
        "forced": False,
        "base_ref": None,
        "compare": f"https://{host}/{path}/compare/{tag}",
        "commits": [],
        "head_commit": None,
        "repository": {
            "id": 1296269,
            "node_id": "MDEwOlJlcG9zaXRvcnkxMjk2MjY5",
            "name": name,
            "full_name": path,
            "private": True,
            "owner": {"name": owner, "login": owner},
            "html_url": f"https://{host}/{path}",
            "url": f"https://{host}/{path}",
            "git_url": f"git://{host}/{path}.git",
            "ssh_url": f"git@{host}:{path}.git",
            "clone_url": f"https://{host}/{path}.git",
            "svn_url": f"https://{host}/{path}",
            "default_branch": "main",
        },
        "pusher": {"name": owner, "email": f"{owner}@example.com"},
        "sender": {"login": owner, "id": 1},
    }


def gitlab_payload(host: str, path: str, tag: str) -> dict[str, object]:
    namespace, name = path.split("/", 1)
    project = {
        "id": 1,
        "name": name,
        "web_url": f"https://{host}/{path}",
        "git_ssh_url": f"git@{host}:{path}.git",
        "git_http_url": f"https://{host}/{path}.git",
        "namespace": namespace,
        "visibility_level": 0,
        "path_with_namespace": path,
        "default_branch": "main",
        "homepage": f"https://{host}/{path}",
        "url": f"git@{host}:{path}.git",
        "ssh_url": f"git@{host}:{path}.git",
        "http_url": f"https://{host}/{path}.git",
    }
    return {
        "object_kind": "tag_push",
        "event_name": "tag_push",
        "before": "0" * 40,
        "after": "a" * 40,
        "ref": f"refs/tags/{tag}",
        "ref_protected": True,
        "checkout_sha": "a" * 40,
        "user_id": 1,
        "user_name": "John Smith",
        "project_id": 1,
        "project": project,
        "commits": [],
        "total_commits_count": 0,
        "repository": {
            "name": name,
            "url": f"ssh://git@{host}/{path}.git",
            "description": "",
            "homepage": f"https://{host}/{path}",
            "git_http_url": f"https://{host}/{path}.git",
            "git_ssh_url": f"git@{host}:{path}.git",
            "visibility_level": 0,
        },
    }


def gitea_payload(host: str, path: str, tag: str) -> dict[str, object]:
    owner, name = path.split("/", 1)
    return {
        "ref": f"refs/tags/{tag}",
        "before": "0" * 40,
        "after": "a" * 40,
        "compare_url": f"https://{host}/{path}/compare/{tag}",
        "commits": [],
        "total_commits": 0,
        "head_commit": None,
        "repository": {
            "id": 1,
            "owner": {"id": 1, "login": owner, "username": owner},
            "name": name,
            "full_name": path,
            "private": True,
            "html_url": f"https://{host}/{path}",
            "ssh_url": f"git@{host}:{path}.git",
            "clone_url": f"https://{host}/{path}.git",
            "default_branch": "main",
        },
        "pusher": {"id": 1, "login": owner, "username": owner},
        "sender": {"id": 1, "login": owner, "username": owner},
    }


def bitbucket_cloud_payload(host: str, path: str, tag: str) -> dict[str, object]:
    return {
        "push": {
            "changes": [
                {
                    "new": {
                        "type": "tag",
                        "name": tag,
                        "target": {"type": "commit", "hash": "a" * 40},
                    },
                    "old": None,
                    "created": True,
                    "forced": False,
                    "closed": False,
                }
            ]
        },
        "repository": {
            "type": "repository",
            "full_name": path,
            "name": path.split("/", 1)[1],
            "uuid": "{c2c1b9a0-0000-0000-0000-000000000000}",
            "is_private": True,
            "links": {
                "self": {"href": f"https://api.{host}/2.0/repositories/{path}"},
                "html": {"href": f"https://{host}/{path}"},
                "avatar": {"href": f"https://{host}/{path}/avatar/32/"},
            },
        },
        "actor": {"type": "user", "display_name": "Jane"},
    }


def bitbucket_server_payload(host: str, path: str, tag: str) -> dict[str, object]:
    project, slug = path.split("/", 1)
    return {
        "eventKey": "repo:refs_changed",
        "date": "2026-11-22T10:00:00+0000",
        "actor": {"name": "admin", "id": 1},
        "repository": {
            "slug": slug,
            "id": 84,
            "name": slug,
            "scmId": "git",
            "state": "AVAILABLE",
            "forkable": True,
            "project": {
                "key": project.upper(),
                "id": 84,
                "name": project,
                "public": False,
                "type": "NORMAL",
            },
            "public": False,
            "links": {
                "clone": [
                    {"href": f"ssh://git@{host}:7999/{path}.git", "name": "ssh"},
                    {"href": f"https://{host}/scm/{path}.git", "name": "http"},
                ],
                "self": [
                    {"href": f"https://{host}/projects/{project.upper()}/repos/{slug}/browse"}
                ],
            },
        },
        "changes": [
            {
                "ref": {"id": f"refs/tags/{tag}", "displayId": tag, "type": "TAG"},
                "refId": f"refs/tags/{tag}",
                "fromHash": "0" * 40,
                "toHash": "a" * 40,
                "type": "ADD",
            }
        ],
    }


def github_release_payload(host: str, path: str, tag: str) -> dict[str, object]:
    """GitHub's `release` event (action published; also created, edited, deleted...)."""
    return {
        "action": "published",
        "release": {
            "url": f"https://api.{host}/repos/{path}/releases/1",
            "html_url": f"https://{host}/{path}/releases/tag/{tag}",
            "id": 1,
            "tag_name": tag,
            "target_commitish": "main",
            "name": tag,
            "draft": False,
            "prerelease": False,
            "created_at": "2026-11-22T10:00:00Z",
            "published_at": "2026-11-22T10:00:00Z",
            "assets": [],
        },
        "repository": github_payload(host, path, tag)["repository"],
        "sender": {"login": path.split("/", 1)[0], "id": 1},
    }


def gitlab_release_payload(host: str, path: str, tag: str) -> dict[str, object]:
    """GitLab's Release Hook (`object_kind: release`, action create, update or delete)."""
    return {
        "id": 1,
        "created_at": "2026-11-22 10:00:00 UTC",
        "description": "",
        "name": tag,
        "released_at": "2026-11-22 10:00:00 UTC",
        "tag": tag,
        "object_kind": "release",
        "project": gitlab_payload(host, path, tag)["project"],
        "url": f"https://{host}/{path}/-/releases/{tag}",
        "action": "create",
        "assets": {"count": 0, "links": [], "sources": []},
        "commit": {"id": "a" * 40, "message": "Release", "url": f"https://{host}/{path}"},
    }


def gitea_release_payload(host: str, path: str, tag: str) -> dict[str, object]:
    """Gitea's and Forgejo's `release` event (action published, updated or deleted)."""
    owner = path.split("/", 1)[0]
    return {
        "action": "published",
        "release": {
            "id": 1,
            "tag_name": tag,
            "target_commitish": "main",
            "name": tag,
            "body": "",
            "url": f"https://{host}/api/v1/repos/{path}/releases/1",
            "html_url": f"https://{host}/{path}/releases/tag/{tag}",
            "draft": False,
            "prerelease": False,
            "created_at": "2026-11-22T10:00:00Z",
            "published_at": "2026-11-22T10:00:00Z",
            "author": {"id": 1, "login": owner, "username": owner},
            "assets": [],
        },
        "repository": gitea_payload(host, path, tag)["repository"],
        "sender": {"id": 1, "login": owner, "username": owner},
    }


FORGES = {
    "github": Forge(
        "github",
        github_payload,
        lambda s, b: {
            "X-GitHub-Event": "push",
            "X-GitHub-Delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
            "X-Hub-Signature-256": f"sha256={_hmac(s, b)}",
            "User-Agent": "GitHub-Hookshot/044aadd",
        },
    ),
    "gitlab": Forge(
        "gitlab",
        gitlab_payload,
        lambda s, b: {
            "X-Gitlab-Event": "Tag Push Hook",
            "X-Gitlab-Token": s,
            "X-Gitlab-Event-UUID": "13792a34-cac6-4fda-95a8-c58e00a3954e",
        },
    ),
    "gitea": Forge(
        "gitea",
        gitea_payload,
        lambda s, b: {
            "X-Gitea-Event": "push",
            "X-Gitea-Delivery": "f6266f16-1bf3-46a5-9ea4-602e06ead473",
            "X-Gitea-Signature": _hmac(s, b),
        },
    ),
    "forgejo": Forge(
        "gitea",
        gitea_payload,
        lambda s, b: {
            "X-Forgejo-Event": "push",
            "X-Forgejo-Delivery": "f6266f16-1bf3-46a5-9ea4-602e06ead473",
            "X-Forgejo-Signature": _hmac(s, b),
        },
    ),
    "bitbucket-cloud": Forge(
        "bitbucket",
        bitbucket_cloud_payload,
        lambda s, b: {
            "X-Event-Key": "repo:push",
            "X-Request-UUID": "fe5a2bdc-0000-0000-0000-000000000000",
            "X-Hub-Signature": f"sha256={_hmac(s, b)}",
        },
    ),
    "bitbucket-server": Forge(
        "bitbucket",
        bitbucket_server_payload,
        lambda s, b: {
            "X-Event-Key": "repo:refs_changed",
            "X-Request-Id": "a0b1c2d3-0000-0000-0000-000000000000",
            "X-Hub-Signature": f"sha256={_hmac(s, b)}",
        },
    ),
    "generic-hmac": Forge(
        "generic",
        lambda h, p, t: {"repository": f"https://{h}/{p}.git"},
        lambda s, b: {"X-Gitreg-Signature": f"sha256={_hmac(s, b)}"},
    ),
    "generic-bearer": Forge(
        "generic",
        lambda h, p, t: {"repository": f"https://{h}/{p}.git"},
        lambda s, b: {"Authorization": f"Bearer {s}"},
    ),
}


# A release published, as each forge's release webhook delivers it.
RELEASE_FORGES = {
    "github": Forge(
        "github",
        github_release_payload,
        lambda s, b: {
            "X-GitHub-Event": "release",
            "X-Hub-Signature-256": f"sha256={_hmac(s, b)}",
        },
    ),
    "gitlab": Forge(
        "gitlab",
        gitlab_release_payload,
        lambda s, b: {"X-Gitlab-Event": "Release Hook", "X-Gitlab-Token": s},
    ),
    "gitea": Forge(
        "gitea",
        gitea_release_payload,
        lambda s, b: {"X-Gitea-Event": "release", "X-Gitea-Signature": _hmac(s, b)},
    ),
    "forgejo": Forge(
        "gitea",
        gitea_release_payload,
        lambda s, b: {"X-Forgejo-Event": "release", "X-Forgejo-Signature": _hmac(s, b)},
    ),
}
