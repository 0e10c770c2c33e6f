"""Whether an HTTP client's error is an untrusted TLS certificate, and what to set then.

Told apart from a server that cannot be reached: found among the error's causes, and said with
the reason and the key that names a CA bundle."""

from __future__ import annotations

import ssl
from urllib.parse import urlsplit


def untrusted_certificate(exc: BaseException) -> str | None:
    """Why the certificate was not trusted (`unable to get local issuer certificate`) when
    `exc`, or an error it was raised from, is a failed verification; None otherwise."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, ssl.SSLCertVerificationError):
            return str(cause.verify_message or cause.reason or "verification failed")
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    # httpx keeps the ssl error as a cause; a client that keeps only its text still says it.
    text = str(exc)
    if "CERTIFICATE_VERIFY_FAILED" in text:
        return text.split("certificate verify failed:", 1)[-1].split("(_ssl", 1)[0].strip()
    return None


def untrusted_text(url: str, reason: str, ca_key: str, whose: str = "your provider") -> str:
    """The sentence for an untrusted certificate: whose, why, and the key to set."""
    parts = urlsplit(url)
    return (
        f"the certificate of {parts.scheme}://{parts.netloc} is not trusted ({reason}): if"
        f" {whose} uses your company's CA, set {ca_key}"
    )
