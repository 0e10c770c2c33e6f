"""A consumer's lock files read for the providers they lock: each `provider` block with its
version and constraints, and each lock file that cannot be read named, never the end of the
read."""

from __future__ import annotations

from gitreg.dependents.provider_uses import locked_in
from gitreg.git.trees import DocFile
from tests.support.provider_dependents_world import lock_file

HOST = "registry.example.test"


def test_each_locked_provider_with_its_version_and_constraints() -> None:
    files = [
        DocFile("main.tf", b'module "x" {\n  source = "a/b/c"\n}\n'),
        DocFile(
            "prod/.terraform.lock.hcl",
            lock_file(
                (f"{HOST}/platform/widget", "1.0.0", "~> 1.0, >= 1.0.0"),
                ("registry.terraform.io/hashicorp/null", "3.2.2", ""),
            ).encode(),
        ),
    ]
    uses, problems = locked_in(files, "platform", "live", "abc")
    assert [(u.caller.path, u.source, u.locked, u.constraint) for u in uses] == [
        ("prod/.terraform.lock.hcl", f"{HOST}/platform/widget", "1.0.0", "~> 1.0, >= 1.0.0"),
        ("prod/.terraform.lock.hcl", "registry.terraform.io/hashicorp/null", "3.2.2", ""),
    ]
    assert {(u.caller.kind, u.caller.namespace, u.caller.version) for u in uses} == {
        ("consumer", "platform", "abc")
    }
    assert problems == []


def test_a_lock_file_that_cannot_be_read_is_named_and_the_rest_read() -> None:
    good = lock_file((f"{HOST}/platform/widget", "1.0.0", "")).encode()
    files = [
        DocFile("a/.terraform.lock.hcl", b'provider "x" {\n  version =\n'),
        DocFile("b/.terraform.lock.hcl", b'provider "x" {\n  constraints = "1.0"\n}\n'),
        DocFile("c/.terraform.lock.hcl", None, "larger than 262144 bytes: not read"),
        DocFile("d/.terraform.lock.hcl", "# caf\xe9\n".encode("latin-1")),
        DocFile("e/.terraform.lock.hcl", good),
    ]
    uses, problems = locked_in(files, "platform", "live", "abc")
    assert [u.caller.path for u in uses] == ["e/.terraform.lock.hcl"]
    assert [(p.path, p.message) for p in problems] == [
        ("a/.terraform.lock.hcl", "syntax error at line 2, column 12"),
        ("b/.terraform.lock.hcl", "provider 'x' has no version"),
        ("c/.terraform.lock.hcl", "larger than 262144 bytes: not read"),
        ("d/.terraform.lock.hcl", "not UTF-8 text"),
    ]
