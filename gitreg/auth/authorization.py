"""The token an Authorization header carries: `Bearer TOKEN`, or the password of `Basic` (a
netrc or a URL's user:token, what OpenTofu sends for an archive)."""

from __future__ import annotations

import base64
import binascii
import re

from gitreg.auth.principal import Refused

# Case does not matter in the scheme's name only: the token's characters already list both
# cases, and matching them without case costs ten times as much (every private request asks).
_BEARER = re.compile(r"(?i:bearer) +([A-Za-z0-9\-._~+/]+=*) *")
_BASIC = re.compile(r"(?i:basic) +([A-Za-z0-9+/]+=*) *")


def bearer_token(authorization: str | None) -> str:
    """The token of `Authorization: Bearer TOKEN`, or the password of `Basic`; Unauthorized
    without one."""
    if not authorization:
        raise Refused(
            "anonymous",
            "missing",
            "this registry is private: send a token (Authorization: Bearer ...); gitreg's"
            " documentation, 'A private registry', shows how to give Terraform one",
        )
    if match := _BEARER.fullmatch(authorization):
        return match[1]
    if match := _BASIC.fullmatch(authorization):
        try:
            _, sep, password = base64.b64decode(match[1], validate=True).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            sep, password = "", ""
        if sep and password:
            return password
    raise Refused(
        "anonymous", "malformed", "the Authorization header must be 'Bearer TOKEN' (or Basic)"
    )
