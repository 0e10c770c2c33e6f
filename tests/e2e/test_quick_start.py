"""The site's quick start (docs/index.md), run as a user runs it: its commands in bash, in a copy
of this checkout's catalog and examples, against `gitreg demo`, with the real terraform. The one
change made to what the page says is the port: the demo listens on a free one."""

from __future__ import annotations

import re
import shutil
import signal
import textwrap
from pathlib import Path

import pytest

from tests.support.servers import answers, free_port, wait_until
from tests.support.site_snippets import (
    TOP,
    block,
    claimed,
    on_port,
    run_sh,
    shell_env,
    start_sh,
)
from tests.support.terraform_cli import needs_terraform, run_terraform, terraform_env
from tests.support.tls_clients import trusting

pytestmark = [pytest.mark.terraform, needs_terraform]

PAGE = "index.md"


def test_the_quick_start(tmp_path: Path) -> None:
    shutil.copy(TOP / "registry.yaml", tmp_path / "registry.yaml")
    shutil.copytree(TOP / "examples", tmp_path / "examples")
    env = shell_env(tmp_path / ".venv" / "bin")  # where the page's install puts gitreg
    port = free_port()
    printed = tmp_path / "demo.out"
    with claimed(PAGE, "test_the_quick_start") as page:
        demo = start_sh(
            page.take("sh", "gitreg demo"), tmp_path, env, printed, "--listen", f"127.0.0.1:{port}"
        )
        try:
            ca = tmp_path / ".gitreg" / "demo-tls" / "ca.pem"
            wait_until(
                lambda: (
                    demo.poll() is not None
                    or (ca.exists() and answers(f"https://127.0.0.1:{port}/readyz", trusting(ca)))
                ),
                60,
                "the demo serving",
            )
            assert demo.poll() is None, printed.read_text()
            said = printed.read_text()

            # The page's line that trusts the CA is the one the demo prints.
            export = page.take("sh", "export SSL_CERT_FILE=")
            assert f"export SSL_CERT_FILE={ca}\n" in said
            shown = run_sh(f'{export}printf %s "$SSL_CERT_FILE"', tmp_path, env).stdout
            assert shown == str(ca)

            workdir = tmp_path / "tf"
            workdir.mkdir()
            (workdir / "main.tf").write_text(on_port(page.take("hcl", 'module "network"'), port))
            (workdir / "cli.tfrc").write_text("")
            tf_env = {**terraform_env(workdir, ca), "TF_CLI_ARGS": "-no-color"}
            applied = run_sh(page.take("sh", "terraform init"), workdir, tf_env, stdin="yes\n")
            assert block(PAGE, "text", "Outputs:") in applied.stdout

            # The friendly name, through the host block the page shows and the demo prints.
            host_block = on_port(page.take("hcl", 'host "registry.example.com"'), port)
            printed_block = re.search(
                r'^    host "registry\.example\.com" \{\n.*?^    \}\n', said, re.M | re.S
            )
            assert printed_block is not None, said
            assert textwrap.dedent(printed_block[0]) == host_block
            friendly = tmp_path / "friendly"
            friendly.mkdir()
            (friendly / "cli.tfrc").write_text(host_block)
            (friendly / "main.tf").write_text(page.take("hcl", 'module "greeting"'))
            assert run_terraform(friendly, ca, "init", "-input=false").returncode == 0
            applied = run_terraform(friendly, ca, "apply", "-auto-approve", "-input=false")
            assert '"greeting" = "Hello, world!"' in applied.stdout, applied.stderr
        finally:
            demo.send_signal(signal.SIGINT)
            demo.wait(timeout=30)
    assert demo.returncode == 0, printed.read_text()
