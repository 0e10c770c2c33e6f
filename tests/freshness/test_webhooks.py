"""Webhook parsing and signatures, table-driven, on payloads captured from the forges."""

from __future__ import annotations

import json

import pytest

from gitreg.freshness.webhooks import PARSERS, repo_key, verifier

GITHUB_TAG_PUSH = """{"ref":"refs/tags/tag2","before":"0000000000000000000000000000000000000000",
 "after":"98248f0e892ce4e4e37411730ac98b53f2aa1261","created":true,"deleted":false,
 "forced":true,"base_ref":"refs/heads/br2","compare":"https://github.com/nevik/testrepo/compare/tag2",
 "commits":[],"head_commit":{"id":"98248f0e892ce4e4e37411730ac98b53f2aa1261","message":"commit 4"},
 "repository":{"id":1,"name":"testrepo","full_name":"nevik/testrepo",
   "html_url":"https://github.com/nevik/testrepo","url":"https://github.com/nevik/testrepo",
   "git_url":"git://github.com/nevik/testrepo.git","ssh_url":"git@github.com:nevik/testrepo.git",
   "clone_url":"https://github.com/nevik/testrepo.git","default_branch":"master","created_at":1373104990},
 "pusher":{"name":"nevik","email":"nevik@example.com"},"sender":{"login":"nevik"}}"""

GITLAB_TAG_PUSH = """{"object_kind":"tag_push","event_name":"tag_push",
 "before":"0000000000000000000000000000000000000000","after":"82b3d5ae55f7080f1e6022629cdb57bfae7cccc7",
 "ref":"refs/tags/v1.0.0","checkout_sha":"82b3d5ae55f7080f1e6022629cdb57bfae7cccc7",
 "user_id":1,"user_name":"John Smith","user_username":"jsmith","project_id":1,
 "project":{"id":1,"name":"Example","web_url":"http://example.com/jsmith/example",
   "git_ssh_url":"git@example.com:jsmith/example.git","git_http_url":"http://example.com/jsmith/example.git",
   "namespace":"Jsmith","path_with_namespace":"jsmith/example","default_branch":"master",
   "homepage":"http://example.com/jsmith/example","url":"git@example.com:jsmith/example.git",
   "ssh_url":"git@example.com:jsmith/example.git","http_url":"http://example.com/jsmith/example.git"},
 "repository":{"name":"Example","url":"ssh://git@example.com/jsmith/example.git",
   "homepage":"http://example.com/jsmith/example","git_http_url":"http://example.com/jsmith/example.git",
   "git_ssh_url":"git@example.com:jsmith/example.git","visibility_level":0},
 "commits":[],"total_commits_count":0}"""

GITEA_TAG_PUSH = """{"ref":"refs/tags/v1.2.0","before":"0000000000000000000000000000000000000000",
 "after":"67b56589a45103f891bdee7c0546e5d40bc02001",
 "compare_url":"http://localhost:3000/example/example/compare/0000000000000000000000000000000000000000...67b56589a45103f891bdee7c0546e5d40bc02001",
 "commits":[],"head_commit":{"id":"67b56589a45103f891bdee7c0546e5d40bc02001","message":"example\\n"},
 "repository":{"id":1,"owner":{"id":1,"login":"example","username":"example"},"name":"example",
   "full_name":"example/example","private":false,"html_url":"http://localhost:3000/example/example",
   "ssh_url":"git@localhost:example/example.git","clone_url":"http://localhost:3000/example/example.git",
   "default_branch":"master"},
 "pusher":{"id":1,"login":"example"},"sender":{"id":1,"login":"example"}}"""

BITBUCKET_CLOUD_TAG_PUSH = """{"actor":{"display_name":"Milana Stojadinov","uuid":"{53c5}","type":"user"},
 "push":{"changes":[{"created":true,"closed":false,"forced":false,"truncated":false,"old":null,
   "new":{"type":"tag","name":"v1.6","message":"my version 1.6\\n","date":"2021-06-15T10:58:28+00:00","tagger":{},
     "target":{"type":"commit","hash":"daf07dd85350b95d05a7fe898e07022c5dcd95b9","message":"Push commit\\n"},
     "links":{"html":{"href":"https://bitbucket.org/milana_stojadinov/elixir-project/commits/tag/v1.6"}}}}]},
 "repository":{"type":"repository","full_name":"milana_stojadinov/elixir-project","name":"elixir-project",
   "scm":"git","is_private":true,"uuid":"{730ede8d}",
   "links":{"html":{"href":"https://bitbucket.org/milana_stojadinov/elixir-project"},
            "self":{"href":"https://api.bitbucket.org/2.0/repositories/milana_stojadinov/elixir-project"}},
   "workspace":{"slug":"milana_stojadinov","type":"workspace"}}}"""

BITBUCKET_SERVER_TAG_PUSH = """{"eventKey":"repo:refs_changed","date":"2019-03-01T10:37:14+0100",
 "actor":{"name":"gopher","id":3231,"displayName":"Foo Bar","slug":"gopher","type":"NORMAL"},
 "repository":{"slug":"webhook-test","id":4,"name":"webhook-test","scmId":"git","state":"AVAILABLE",
   "project":{"key":"PRJ","id":2,"name":"Project","type":"NORMAL"},"public":false,
   "links":{"clone":[{"href":"ssh://git@server.bitbucket.local:7999/prj/webhook-test.git","name":"ssh"},
                     {"href":"https://server.bitbucket.local/scm/prj/webhook-test.git","name":"http"}],
            "self":[{"href":"https://server.bitbucket.local/projects/PRJ/repos/webhook-test/browse"}]}},
 "changes":[{"ref":{"id":"refs/tags/v1.2.0","displayId":"v1.2.0","type":"TAG"},"refId":"refs/tags/v1.2.0",
   "fromHash":"0000000000000000000000000000000000000000","toHash":"1097d939669e3209ff33e6dfe982d84c204f6087","type":"ADD"}]}"""


@pytest.mark.parametrize(
    ("forge", "headers", "payload", "repository", "triggers"),
    [
        (
            "github",
            {"x-github-event": "push"},
            GITHUB_TAG_PUSH,
            "https://github.com/nevik/testrepo.git",
            True,
        ),
        (
            "github",
            {"x-github-event": "ping"},
            '{"zen": "Keep it logically awesome.", "hook_id": 1}',
            None,
            False,
        ),
        (
            "gitlab",
            {"x-gitlab-event": "Tag Push Hook"},
            GITLAB_TAG_PUSH,
            "ssh://git@example.com:2222/jsmith/example.git",
            True,
        ),
        (
            "gitlab",
            {"x-gitlab-event": "Push Hook"},
            GITLAB_TAG_PUSH,
            "http://example.com/jsmith/example",
            True,
        ),
        (
            "gitea",
            {"x-gitea-event": "push"},
            GITEA_TAG_PUSH,
            "http://localhost:3000/example/example.git",
            True,
        ),
        (
            "gitea",
            {"x-forgejo-event": "push", "x-gitea-event": "push"},
            GITEA_TAG_PUSH,
            "git@localhost:example/example.git",
            True,
        ),
        (
            "bitbucket",
            {"x-event-key": "repo:push"},
            BITBUCKET_CLOUD_TAG_PUSH,
            "https://bitbucket.org/milana_stojadinov/elixir-project.git",
            True,
        ),
        (
            "bitbucket",
            {"x-event-key": "repo:push"},
            BITBUCKET_CLOUD_TAG_PUSH,
            "git@bitbucket.org:milana_stojadinov/elixir-project.git",
            True,
        ),
        (
            "bitbucket",
            {"x-event-key": "repo:refs_changed"},
            BITBUCKET_SERVER_TAG_PUSH,
            "https://server.bitbucket.local/scm/prj/webhook-test.git",
            True,
        ),
        (
            "bitbucket",
            {"x-event-key": "repo:refs_changed"},
            BITBUCKET_SERVER_TAG_PUSH,
            "ssh://git@server.bitbucket.local:7999/prj/webhook-test.git",
            True,
        ),
        ("bitbucket", {"x-event-key": "diagnostics:ping"}, "{}", None, False),
    ],
)
def test_payloads_name_their_repository(
    forge: str, headers: dict[str, str], payload: str, repository: str | None, triggers: bool
) -> None:
    push = PARSERS[forge](headers, json.loads(payload))
    assert push.triggers is triggers
    if repository:
        assert repo_key(repository) in {repo_key(u) for u in push.urls}


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("https://github.com/Org/Repo.git", "github.com/org/repo"),
        ("https://user@github.com:443/org/repo/", "github.com/org/repo"),
        ("git@github.com:org/repo.git", "github.com/org/repo"),
        ("ssh://git@git.example.com:2222/org/repo.git", "git.example.com/org/repo"),
        ("git://127.0.0.1:9418/org/repo.git", "127.0.0.1/org/repo"),
        ("/srv/git/repo.git", "/srv/git/repo"),
    ],
)
def test_repo_keys(url: str, key: str) -> None:
    assert repo_key(url) == key


def test_github_documented_signature() -> None:
    # The test vector from GitHub's "Validating webhook deliveries".
    body = b"Hello, World!"
    header = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    check = verifier("github", {"x-hub-signature-256": header}, body)
    assert check("It's a Secret to Everybody") and not check("another secret")


@pytest.mark.parametrize(
    ("forge", "headers"),
    [
        (
            "github",
            {
                "x-hub-signature-256": "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
            },
        ),
        (
            "gitea",
            {
                "x-gitea-signature": "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
            },
        ),
        (
            "gitea",
            {
                "x-forgejo-signature": "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
            },
        ),
        (
            "gitea",
            {
                "x-hub-signature-256": "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
            },
        ),
        (
            "bitbucket",
            {
                "x-hub-signature": "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
            },
        ),
        (
            "generic",
            {
                "x-gitreg-signature": "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
            },
        ),
        ("generic", {"authorization": "Bearer It's a Secret to Everybody"}),
        ("gitlab", {"x-gitlab-token": "It's a Secret to Everybody"}),
    ],
)
def test_each_forge_scheme(forge: str, headers: dict[str, str]) -> None:
    check = verifier(forge, headers, b"Hello, World!")
    assert check("It's a Secret to Everybody")
    assert not check("It's a Secret to Everybody!")
    assert not verifier(forge, {}, b"Hello, World!")("It's a Secret to Everybody")
