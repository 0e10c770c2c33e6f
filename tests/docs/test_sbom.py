"""The bill of materials from documentation, at its edges: a module that requires nothing, one
whose repository URL is no URI, a provider source Terraform refuses; each bill valid CycloneDX."""

from __future__ import annotations

import json
from typing import Any

from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

from gitreg.address import ModuleAddress
from gitreg.docs.extract import module_docs
from gitreg.docs.sbom import SbomSubject, ThisRegistry, bom_json
from gitreg.git.trees import DocFile

COMMIT = "3f" * 20
SUBJECT = SbomSubject(ModuleAddress("acme", "vpc", "aws"), "1.0.0", "v1.0.0", COMMIT)


def _unknown(module: ModuleAddress, constraint: str) -> tuple[str | None, str]:
    return None, f"no module {module} on this registry"


NOWHERE = ThisRegistry("registry.example.test", frozenset({"registry.example.test"}), _unknown)


def bill(files: dict[str, str], subject: SbomSubject = SUBJECT) -> dict[str, Any]:
    docs = module_docs(
        [DocFile(path, text.encode()) for path, text in files.items()], commit=COMMIT
    )
    text = bom_json(docs, subject, NOWHERE).decode()
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(text) is None
    body: dict[str, Any] = json.loads(text)
    return body


def test_a_module_that_requires_nothing_has_no_components() -> None:
    body = bill({"main.tf": 'output "x" {\n  value = 1\n}\n'})
    assert "components" not in body or body["components"] == []
    assert body["metadata"]["timestamp"] == "1970-01-01T00:00:00+00:00"  # no commit time known


def test_a_repository_url_that_is_no_uri_is_left_out() -> None:
    subject = SbomSubject(
        SUBJECT.address, "1.0.0", "v1.0.0", COMMIT, repository="https://git.example.com/a%zz.git"
    )
    module = bill({"main.tf": ""}, subject)["metadata"]["component"]
    assert "externalReferences" not in module


def test_a_provider_source_terraform_refuses_is_named_with_why() -> None:
    files = {
        "main.tf": 'terraform {\n  required_providers {\n    w = { source = "a/b/c/d" }\n  }\n}\n'
    }
    (widget,) = bill(files)["components"]
    assert widget["name"] == "a/b/c/d"
    problems = [p["value"] for p in widget["properties"] if p["name"].endswith("invalid_source")]
    assert problems == ["'a/b/c/d' has 4 parts; a provider source has at most three"]


def test_the_same_docs_give_the_same_bytes() -> None:
    files = {
        "main.tf": 'module "a" {\n  source = "acme/net/aws"\n}\n',
        "modules/x/main.tf": 'terraform {\n  required_version = ">= 1.6"\n}\n',
    }
    docs = module_docs([DocFile(p, t.encode()) for p, t in files.items()], commit=COMMIT)
    assert bom_json(docs, SUBJECT, NOWHERE) == bom_json(docs, SUBJECT, NOWHERE)
