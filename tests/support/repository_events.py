"""A forge's event that a repository was created (GitHub's and Gitea's organization `repository`
event, a GitLab system hook's `project_create`), shaped and signed as each forge sends it."""

from __future__ import annotations

import hashlib
import hmac

from tests.support.forge_shapes import ForgeKind


def repository_created(
    kind: ForgeKind, host: str, path: str
) -> tuple[dict[str, object], dict[str, str]]:
    """The forge's event for a repository created at `path`, and its event header."""
    owner, name = path.rsplit("/", 1)
    if kind == "gitlab":  # a system hook
        payload: dict[str, object] = {
            "event_name": "project_create",
            "name": name,
            "path": name,
            "path_with_namespace": path,
            "project_id": 74,
            "project_visibility": "private",
        }
        return payload, {"X-Gitlab-Event": "System Hook"}
    repository = {
        "id": 7,
        "name": name,
        "full_name": path,
        "owner": {"login": owner, "username": owner},
        "html_url": f"https://{host}/{path}",
        "clone_url": f"https://{host}/{path}.git",
    }
    payload = {"action": "created", "repository": repository, "organization": {"login": owner}}
    if kind == "gitea":
        payload["organization"] = {"username": owner, "login": owner}
        return payload, {"X-Gitea-Event": "repository"}
    return payload, {"X-GitHub-Event": "repository"}


def signed(kind: ForgeKind, secret: str, body: bytes) -> dict[str, str]:
    """The header that signs `body` with `secret`, as `kind` sends it."""
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    if kind == "gitlab":
        return {"X-Gitlab-Token": secret}
    if kind == "gitea":
        return {"X-Gitea-Signature": digest}
    return {"X-Hub-Signature-256": f"sha256={digest}"}
