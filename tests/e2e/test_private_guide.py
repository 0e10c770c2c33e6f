"""The site's "A private registry" (docs/private.md), run as a user runs it: the registry of
docs/own-registry.md, made private with the token `gitreg token new` prints and the entry it
prints pasted as the page shows; then the real terraform with the page's credentials block, with
the page's TF_TOKEN_ variable, and without a token, which fails.

What the test changes in the page's blocks: the token placeholder becomes the token printed, the
repository's URL the repository it made, 127.0.0.1:8443 the port it serves on."""

from __future__ import annotations

import re
import signal
import textwrap
from pathlib import Path

import pytest

from tests.support.gitrepo import GitRepo, git, module_files
from tests.support.servers import answers, free_port, wait_until
from tests.support.site_snippets import (
    block,
    claimed,
    failing_sh,
    on_port,
    run_sh,
    shell_env,
    start_sh,
)
from tests.support.terraform_cli import needs_terraform, terraform_env
from tests.support.tls_clients import trusting

pytestmark = [pytest.mark.terraform, needs_terraform]

OWN = "own-registry.md"
REPO_URL = "https://git.example.com/infra/terraform-aws-vpc.git"
DIGEST = re.compile(r'token_sha256: "[0-9a-f]{64}"')


def test_private_registry(tmp_path: Path) -> None:
    env = shell_env(tmp_path / "bin", {"GIT_CONFIG_GLOBAL": "/dev/null"})
    bare = tmp_path / "git" / "terraform-aws-vpc.git"
    bare.parent.mkdir()
    git(bare.parent, "init", "-q", "--bare", bare.name)
    work = GitRepo(tmp_path / "work")
    work.release("v1.0.0", module_files("1.0.0"))
    git(work.path, "push", "-q", str(bare), "--tags")

    registry = tmp_path / "registry"
    registry.mkdir()
    port = free_port()
    catalog = on_port(block(OWN, "yaml", "hostname:").replace(REPO_URL, str(bare)), port)
    run_sh(block(OWN, "sh", "gitreg cert"), registry, env)
    ca = registry / "tls" / "ca.pem"

    with claimed("private.md", "test_private_registry") as page:
        printed = run_sh(page.take("sh", "gitreg token new"), registry, env).stdout
        token = re.search(r"^token: (gitreg_\S+)$", printed, re.M)
        assert token is not None, printed
        entry = printed[printed.index("  - name:") :]
        (digest,) = DIGEST.findall(entry)

        # The page's auth: section is the entry printed, pasted under auth.tokens.
        section = page.take("yaml", "auth:\n  tokens:")
        pasted = DIGEST.sub(digest, section)
        assert textwrap.dedent(pasted.partition("tokens:\n")[2]) == textwrap.dedent(entry)
        (registry / "registry.yaml").write_text(catalog + pasted)

        log = tmp_path / "serve.log"
        served = start_sh(block(OWN, "sh", "gitreg serve"), registry, env, log)
        try:
            base = f"https://127.0.0.1:{port}"
            trust = trusting(ca)
            wait_until(
                lambda: served.poll() is not None or answers(f"{base}/readyz", trust),
                60,
                "gitreg serving",
            )
            assert served.poll() is None, log.read_text()
            host = on_port(block(OWN, "hcl", "host "), port)
            module = block(OWN, "hcl", 'module "vpc"')
            init = block(OWN, "sh", "terraform init")

            credentials = page.take("hcl", "credentials ").replace("gitreg_...", token[1])
            with_block = _workdir(tmp_path / "with-block", host + credentials, module)
            done = run_sh(init, with_block, terraform_env(with_block, ca))
            assert "Terraform has been successfully initialized" in done.stdout

            variable = page.take("sh", "TF_TOKEN_").replace("gitreg_...", token[1])
            with_variable = _workdir(tmp_path / "with-variable", host, module)
            done = run_sh(variable + init, with_variable, terraform_env(with_variable, ca))
            assert "Terraform has been successfully initialized" in done.stdout

            without = _workdir(tmp_path / "without", host, module)
            refused = failing_sh(init, without, terraform_env(without, ca))
            assert "401 Unauthorized" in refused, refused
        finally:
            served.send_signal(signal.SIGTERM)
            served.wait(timeout=60)
    assert served.returncode == 0, log.read_text()


def _workdir(folder: Path, cli_config: str, main_tf: str) -> Path:
    folder.mkdir()
    (folder / "cli.tfrc").write_text(cli_config)
    (folder / "main.tf").write_text(main_tf)
    return folder
