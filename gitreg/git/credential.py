"""How gitreg authenticates to the repositories under a URL: a token (from the environment or a
file), an SSH key, the CA bundle of the Git server. Named in registry.yaml's `credentials`."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Credential:
    """How to authenticate to every repository whose URL starts with `url`."""

    url: str
    username: str = "oauth2"
    token_env: str | None = None
    token_file: Path | None = None
    ssh_key: Path | None = None
    known_hosts: Path | None = None
    ca_file: Path | None = None  # the CA bundle that signs the Git server's HTTPS certificate

    def token(self) -> str | None:
        """Read at fetch time, so a rotated token file is picked up without a restart."""
        if self.token_env:
            return os.environ.get(self.token_env)
        if self.token_file:
            return self.token_file.read_text().strip()
        return None
