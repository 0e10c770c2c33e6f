"""The container's health check: asks gitreg's /healthz on this host, over HTTPS, then plain
HTTP, with Python's standard library alone (the image has no curl). Exit 0 when it answers 200.

GITREG_HEALTHCHECK_URL replaces the addresses tried, one or more, separated by spaces (default:
HTTPS, then HTTP, on 127.0.0.1:8443): the first that answers 200 makes the check pass.
"""

from __future__ import annotations

import http.client
import os
import ssl
import sys
import urllib.request

DEFAULT_URLS = ["https://127.0.0.1:8443/healthz", "http://127.0.0.1:8443/healthz"]
TIMEOUT = 5.0


def _unverified() -> ssl.SSLContext:
    # Liveness is asked of the process on this host's loopback: its certificate names the
    # registry's hostname, not 127.0.0.1, and who answers is not in question here.
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def probe(url: str) -> str | None:
    """None when `url` answers 200; otherwise why not."""
    context = _unverified() if url.startswith("https:") else None
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT, context=context) as response:
            status = int(response.status)
    # URLError, HTTPError, refused connections and timeouts are OSErrors; an answer that is no
    # HTTP (plain HTTP asked of a TLS port) is an HTTPException.
    except (OSError, ValueError, http.client.HTTPException) as exc:
        return f"{url}: {exc}"
    return None if status == 200 else f"{url}: HTTP {status}"


def main() -> int:
    urls = os.environ.get("GITREG_HEALTHCHECK_URL", "").split() or DEFAULT_URLS
    problems = []
    for url in urls:
        problem = probe(url)
        if problem is None:
            return 0
        problems.append(problem)
    print("; ".join(problems), file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
