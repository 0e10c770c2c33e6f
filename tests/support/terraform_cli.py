"""The real terraform binary, run as the provider tests need it: a private CLI config
(`workdir/cli.tfrc`), a CA to trust, no checkpoint calls, and a trace log in `workdir/tf.log`."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

needs_terraform = pytest.mark.skipif(
    shutil.which("terraform") is None, reason="the terraform binary is not on PATH"
)


def terraform_env(workdir: Path, ca_cert: Path) -> dict[str, str]:
    """The environment terraform runs in, in `workdir`, trusting `ca_cert`."""
    return {
        **os.environ,
        "SSL_CERT_FILE": str(ca_cert),
        "TF_CLI_CONFIG_FILE": str(workdir / "cli.tfrc"),
        "CHECKPOINT_DISABLE": "1",
        "TF_IN_AUTOMATION": "1",
        "TF_LOG": "trace",
        "TF_LOG_PATH": str(workdir / "tf.log"),
    }


def run_terraform(workdir: Path, ca_cert: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["terraform", *args, "-no-color"],
        cwd=workdir,
        env=terraform_env(workdir, ca_cert),
        capture_output=True,
        text=True,
        timeout=240,
    )


def require_provider(workdir: Path, source: str, version: str) -> None:
    """A configuration in `workdir` that requires `source` at `version`, with an empty CLI
    config (no host block, no mirror)."""
    (workdir / "cli.tfrc").write_text("")
    (workdir / "main.tf").write_text(
        "terraform {\n  required_providers {\n"
        f'    widget = {{ source = "{source}", version = "{version}" }}\n'
        "  }\n}\n"
    )
