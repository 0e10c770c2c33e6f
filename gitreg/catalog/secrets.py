"""Where a secret named in registry.yaml is kept, and what it is for; read at use, never shown."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

# What a secret named in the catalog is for: Git credentials, webhook secrets, origin tokens,
# the registry's own (client tokens, the URL-signing key), the shared state's database URL, the
# key provenance is signed with.
SecretUse = Literal["git", "webhook", "origin", "auth", "state", "provenance"]
SECRET_USES: frozenset[SecretUse] = frozenset(
    ("git", "webhook", "origin", "auth", "state", "provenance")
)


@dataclass(frozen=True)
class SecretRef:
    """Where a secret is kept: an environment variable or a file. Read at use, never shown."""

    env: str | None = None
    file: Path | None = None

    def value(self) -> str | None:
        if self.env:
            return os.environ.get(self.env) or None
        if self.file:
            try:
                return self.file.read_text().strip() or None
            except OSError:
                return None
        return None
