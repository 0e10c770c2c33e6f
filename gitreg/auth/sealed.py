"""Small values the registry hands out and must find unchanged and unread when they come back.

They are a sign-in under way, kept in the browser's cookie, and a one-time authorization code:
JSON sealed with AES-GCM under a key derived from the URL-signing keys, so that every worker and
replica opens what another sealed, no one else can read or forge one, and a rotated key still
opens what its predecessor sealed."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
from collections.abc import Sequence
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

MAX_SEALED = 4096  # characters: what a cookie or an authorization code may carry


class Sealer:
    """Seals for one purpose (`label`): a value sealed for one is never opened as another."""

    def __init__(self, keys: Sequence[bytes], label: bytes) -> None:
        if not keys:
            raise ValueError("sealing needs a key")
        self._label = label
        self._keys = [AESGCM(hmac.new(k, label, hashlib.sha256).digest()) for k in keys]

    def seal(self, value: dict[str, Any]) -> str:
        nonce = os.urandom(12)
        body = json.dumps(value, separators=(",", ":")).encode()
        sealed = nonce + self._keys[0].encrypt(nonce, body, self._label)
        return base64.urlsafe_b64encode(sealed).rstrip(b"=").decode()

    def open(self, text: str) -> dict[str, Any] | None:
        """What `text` holds; None when it was not sealed here for this purpose, or was
        changed."""
        if not text or len(text) > MAX_SEALED or not text.isascii():
            return None
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        except (binascii.Error, ValueError):
            return None
        if len(raw) < 12 + 16:
            return None
        for key in self._keys:
            try:
                body = key.decrypt(raw[:12], raw[12:], self._label)
            except InvalidTag:
                continue
            try:
                value = json.loads(body)
            except (ValueError, RecursionError):
                return None
            return value if isinstance(value, dict) else None
        return None
