"""Headers every answer carries, set in one place rather than by each handler.

- `X-Content-Type-Options: nosniff`: a browser never takes a JSON answer, an archive or an error
  for HTML or script, whatever bytes a repository put in it;
- `Strict-Transport-Security` over TLS (registry.yaml's `hsts`);
- `Cache-Control: private` on an answer made for a principal (a token's, a session's, a signed
  URL's: `answered_to`), which a shared cache must not keep and hand to someone else.

A header the handler set itself wins: archives' and pages' own Cache-Control, pages' nosniff.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

PRINCIPAL_KEY = "gitreg.principal"  # in the request's scope: the name it was answered to

_NOSNIFF = (b"x-content-type-options", b"nosniff")
_PRIVATE = (b"cache-control", b"private")
_HSTS = b"strict-transport-security"


def answered_to(scope: Scope, name: str) -> None:
    """Say that this request is answered as `name`, a principal other than the public."""
    scope[PRINCIPAL_KEY] = name


class AnswerHeaders:
    """Pure ASGI; `hsts`: the Strict-Transport-Security value, None for none."""

    def __init__(self, app: ASGIApp, hsts: str | None) -> None:
        self.app = app
        self.hsts = (_HSTS, hsts.encode("ascii")) if hsts else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        hsts = self.hsts if scope.get("scheme") == "https" else None

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                names = {name.lower() for name, _ in headers}
                if _NOSNIFF[0] not in names:
                    headers.append(_NOSNIFF)
                if hsts is not None and _HSTS not in names:
                    headers.append(hsts)
                if PRINCIPAL_KEY in scope and _PRIVATE[0] not in names:
                    headers.append(_PRIVATE)
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)
