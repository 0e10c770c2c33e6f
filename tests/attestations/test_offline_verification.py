"""The commands docs/verifying.md gives, as they are: a key made with `openssl genpkey`
(Ed25519, then P-256), the envelope, key and archive fetched from the real app over HTTP with
curl, the signature verified with jq, base64 and openssl, the archive compared with the subject;
a changed payload and a changed archive fail."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import pytest

from gitreg.catalog.load import load_catalog
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer
from tests.support.site_snippets import claimed, failing_sh, run_sh

PAGE = "verifying.md"
PRIVATE = "/etc/gitreg/provenance.pem"

pytestmark = pytest.mark.skipif(
    not all(shutil.which(tool) for tool in ("jq", "openssl", "curl", "sha256sum")),
    reason="the documented commands need jq, openssl, curl and sha256sum (.ci/run installs jq)",
)


def test_the_documented_commands_verify_provenance(tmp_path: Path) -> None:
    with claimed(PAGE, "test_the_documented_commands_verify_provenance") as page:
        make = {
            "ed25519": page.take("sh", "-algorithm ed25519"),
            "p256": page.take("sh", "ec_paramgen_curve:P-256"),
        }
        configured = page.take("yaml", "provenance:")
        fetch = page.take("sh", "curl -fsS -o env.json")
        prepare = page.take("sh", "> pae")
        verify = {
            "ed25519": page.take("sh", "openssl pkeyutl -verify"),
            "p256": page.take("sh", "openssl dgst -sha256 -verify"),
        }
        compare = page.take("sh", "sha256sum")
    said = {"ed25519": "Signature Verified Successfully", "p256": "Verified OK"}
    GitRepo(tmp_path / "repo").release("v1.0.0", module_files("1.0.0", "modules/net"), True)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin"}
    for kind in ("ed25519", "p256"):
        folder = tmp_path / kind
        folder.mkdir()
        key = folder / "provenance.pem"
        run_sh(make[kind].replace(PRIVATE, str(key)), folder, env)
        (folder / "registry.yaml").write_text(
            "cache_dir: cache\n"
            + configured.replace(PRIVATE, str(key))
            + "modules:\n  - {namespace: infra, name: vpc, system: aws,"
            f" repo: {tmp_path / 'repo'}, path: modules/net}}\n"
        )
        with RegistryServer(load_catalog(folder / "registry.yaml")) as server:
            run_sh(_on(fetch, server.url), folder, env)
        run_sh(prepare, folder, env)
        assert said[kind] in run_sh(verify[kind], folder, env).stdout
        assert run_sh(compare, folder, env).stdout == "archive matches\n"

        envelope = json.loads((folder / "env.json").read_text())
        payload = base64.b64decode(envelope["payload"]).replace(b"v1.0.0", b"v1.0.1")
        envelope["payload"] = base64.b64encode(payload).decode()
        (folder / "env.json").write_text(json.dumps(envelope))
        run_sh(prepare, folder, env)
        failing_sh(verify[kind], folder, env)
        with (folder / "archive.tar.gz").open("ab") as archive:
            archive.write(b"\0")
        assert "archive matches" not in failing_sh(compare, folder, env)


def _on(text: str, url: str) -> str:
    """The page's commands against the test's server and module."""
    return text.replace("https://registry.example.com", url).replace(
        "vpc/aws/1.2.0", "vpc/aws/1.0.0"
    )
