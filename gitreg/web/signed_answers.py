"""An answer whose URLs were signed for one reader, kept as the pieces around those URLs.
It is made for each other reader the gate admits by signing the same paths for them
(`Gatekeeper.signed_all`, as the handler's `Admission.sign` did) and putting the pieces back
together; the rest of the answer is the same for all of them."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass

from gitreg.auth.gatekeeper import Gatekeeper
from gitreg.auth.principal import Principal

Headers = tuple[tuple[bytes, bytes], ...]
CONTENT_LENGTH = -1  # in SignedUrls.headers: the length of the body made


@dataclass(frozen=True, slots=True, eq=False)
class SignedUrls:
    """The body's pieces around its URLs, each signed for the reader as its handler signed it (a
    path and a suffix), JSON-encoded in between; its headers, a value being bytes, a URL's
    index, or CONTENT_LENGTH. Told apart by identity (each is one kept answer's): a request's
    lookup of the answer made of it does not hash all its pieces."""

    pieces: tuple[bytes, ...]  # one more than urls
    urls: tuple[tuple[str, str], ...]
    headers: tuple[tuple[bytes, bytes | int], ...]

    @classmethod
    def of(
        cls, headers: Headers, body: bytes, signed: Sequence[tuple[str, str, str]]
    ) -> SignedUrls | None:
        """The pieces of `body` around each signed URL (path, suffix, and the URL as signed, in
        the order the body has them); None when one is not found once, in order (then the
        answer is not kept)."""
        pieces: list[bytes] = []
        start = 0
        for _, _, url in signed:
            if not url.isascii():  # JSON and headers would write it otherwise than json.dumps
                return None
            encoded = json.dumps(url).encode()
            found = body.find(encoded, start)
            if found < 0 or body.count(encoded) != 1:
                return None
            pieces.append(body[start:found])
            start = found + len(encoded)
        pieces.append(body[start:])
        values = {url.encode("latin-1"): n for n, (_, _, url) in enumerate(signed)}
        made: list[tuple[bytes, bytes | int]] = []
        for name, value in headers:
            made.append(
                (name, CONTENT_LENGTH if name == b"content-length" else values.get(value, value))
            )
        urls = tuple((path, suffix) for path, suffix, _ in signed)
        return cls(tuple(pieces), urls, tuple(made))

    def made_for(self, gate: Gatekeeper, principal: Principal) -> tuple[Headers, bytes]:
        """The headers and body of the answer signed for `principal`."""
        return _assembled(self, gate.signed_all(self.urls, principal))


# The same URLs come back for a while (a signature is made once for EXPIRY_STEP seconds, the same
# for each request of one token in them): so does the answer made of them.
@functools.lru_cache(maxsize=1024)
def _assembled(signed: SignedUrls, urls: tuple[str, ...]) -> tuple[Headers, bytes]:
    """The answer's headers (a tuple: it is sent again and again) and body, with these URLs."""
    parts = [signed.pieces[0]]
    for url, piece in zip(urls, signed.pieces[1:], strict=True):
        parts += (json.dumps(url).encode(), piece)
    body = b"".join(parts)
    headers = []
    for name, value in signed.headers:
        if isinstance(value, int):
            value = (
                str(len(body)).encode()
                if value == CONTENT_LENGTH
                else urls[value].encode("latin-1")
            )
        headers.append((name, value))
    return tuple(headers), body
