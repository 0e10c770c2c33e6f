"""Where a person goes back to after signing in: a path of this registry, or `/`. The `next`
it comes from is in a link anyone can write, so anything that a browser could read as another
site's address (`//evil.example`, `/\\evil.example`, a scheme, a tab or newline it would strip)
is `/`: an open redirect would lend this registry's name to another site's page."""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit

MAX_LENGTH = 2048  # characters: a page's path and query, never a document
_SIGN_IN_PAGES = ("/signin", "/signout")  # going back there would only go round


def return_path(text: str | None) -> str:
    """`text` when it is a plain path (and query) of this site, else `/`."""
    if not text or len(text) > MAX_LENGTH or not text.startswith("/"):
        return "/"
    # Printable ASCII only: no controls (browsers drop tabs and newlines, so `/\t/x` would
    # become `//x`), no spaces, nothing a browser would normalise into something else.
    if any(not "!" <= c <= "~" for c in text):
        return "/"
    if "//" in text or "\\" in text:
        return "/"
    parts = urlsplit(text)
    if parts.scheme or parts.netloc or parts.path.startswith(_SIGN_IN_PAGES):
        return "/"
    return text


def sign_in_url(back_to: str) -> str:
    """The sign-in page's address, with where to go back to after it (none for `/`)."""
    back_to = return_path(back_to)
    return "/signin" if back_to == "/" else "/signin?" + urlencode({"next": back_to})
