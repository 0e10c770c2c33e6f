"""The client an install is counted under, read from its User-Agent: Terraform or OpenTofu and
its version, anything else `other`. Counted, never trusted: a User-Agent is the client's to say."""

from __future__ import annotations

import re

_CLIENT = re.compile(r"\b(Terraform|OpenTofu)/(\d{1,6}(?:\.\d{1,6}){0,2}(?:-[0-9A-Za-z.]{1,20})?)")
_READ = 200  # characters of a User-Agent read, at most


def client_of(user_agent: str | None) -> tuple[str, str]:
    """(`terraform`, `1.11.4`), (`opentofu`, `1.10.0`), or (`other`, "")."""
    found = _CLIENT.search(user_agent[:_READ]) if user_agent else None
    if found is None:
        return "other", ""
    return found[1].lower(), found[2]
