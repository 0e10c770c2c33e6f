"""The token an Authorization header carries: `Bearer TOKEN`, or the password of `Basic` (a
netrc or a URL's user:token, what OpenTofu sends for an archive)."""

from __future__ import annotations

import base64
import binascii
import re

from gitreg.auth.principal import Refused

_BEARER = re.compile(r"bearer +([A-Za-z0-9\-._~+/]+=*) *", re.IGNORECASE)
_BASIC = re.compile(r"basic +([A-Za-z0-9+/]+=*) *", re.IGNORECASE)


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
