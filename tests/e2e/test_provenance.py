"""End to end: the real `terraform` installs a module from the registry, and the version's
provenance, verified with the key the registry serves, names as its subject the digest of what
terraform downloaded: the `?checksum=` terraform verified before unpacking, and the SHA-256 of
the archive at that URL."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from securesystemslib.signer import SSlibKey

from gitreg.attestations.envelopes import verified_payload
from gitreg.catalog.load import load_catalog
from gitreg.catalog.settings import TlsFiles
from gitreg.process.tlscert import TlsMaterial
from tests.support.provenance_keys import signing_registry
from tests.support.servers import RegistryServer
from tests.support.terraform_cli import needs_terraform, run_terraform
from tests.support.tls_clients import trusting

pytestmark = [pytest.mark.terraform, needs_terraform]


def test_the_subject_is_the_archive_terraform_installed(tmp_path: Path, tls: TlsMaterial) -> None:
    catalog = load_catalog(signing_registry(tmp_path))
    with RegistryServer(catalog, TlsFiles(tls.certfile, tls.keyfile)) as server:
        host = f"127.0.0.1:{server.port}"
        work = tmp_path / "work"
        work.mkdir()
        (work / "cli.tfrc").write_text("")
        (work / "main.tf").write_text(
            f'module "net" {{\n  source  = "{host}/infra/net/aws"\n  version = "1.0.0"\n}}\n'
            'output "version" {\n  value = module.net.version\n}\n'
        )
        done = run_terraform(work, tls.ca_cert, "init", "-input=false")
        assert done.returncode == 0, done.stdout + done.stderr
        done = run_terraform(work, tls.ca_cert, "apply", "-auto-approve", "-input=false")
        assert done.returncode == 0 and 'version = "1.0.0"' in done.stdout, done.stdout
        # What go-getter fetched, with the checksum it verified before it unpacked anything.
        downloaded = re.search(
            rf'"https://{re.escape(host)}(/v1/archives/\S+?)\?checksum=sha256:([0-9a-f]{{64}})"'
            " was downloaded",
            (work / "tf.log").read_text(),
        )
        assert downloaded, "terraform's log names the archive it downloaded"
        archive, checksum = downloaded.group(1).replace("//modules/net", ""), downloaded.group(2)
        with httpx.Client(base_url=f"https://{host}", verify=trusting(tls.ca_cert)) as client:
            fetched = hashlib.sha256(client.get(archive).content).hexdigest()
            envelope = client.get("/v1/modules/infra/net/aws/1.0.0/provenance").content
            pem = client.get("/v1/provenance/key.pem").content
    public = SSlibKey.from_crypto(serialization.load_pem_public_key(pem))
    statement = json.loads(verified_payload(envelope, public))
    (subject,) = statement["subject"]
    assert subject["digest"]["sha256"] == checksum == fetched
