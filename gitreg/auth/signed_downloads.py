"""The download side of the gate: URLs signed for a reader, and checked when they are fetched.

Terraform fetches archives and provider files without a token, so an answer's URLs are signed
for the reader it was made for, bound to what the reader's name stands for now. A part of `Gate`
(`gate.py`), kept apart to keep each short."""

from __future__ import annotations

from collections import Counter

from gitreg.auth.login import Login
from gitreg.auth.principal import GIT, Access, Principal
from gitreg.auth.signed_urls import UrlSigner
from gitreg.auth.tokens import StaticTokens
from gitreg.catalog.auth_settings import AuthSettings
from gitreg.errors import Forbidden


class SignedDownloads:
    settings: AuthSettings
    tokens: StaticTokens
    signer: UrlSigner
    counts: Counter[tuple[str, str]]
    login: Login | None

    def sign(self, path: str, principal: Principal) -> str:
        """The query string that lets `principal` fetch `path` without a token for a while."""
        return self.signer.query(path, principal.name, binding=self._binding(principal.name) or "")

    def signed(self, path: str, principal: Principal | None, suffix: str = "") -> str:
        """`path`, then `suffix` (a `//folder`), signed for `principal` (`sign`); unsigned for
        no one in particular."""
        return self.signed_all(((path, suffix),), principal)[0] if principal else path + suffix

    def signed_all(
        self, urls: tuple[tuple[str, str], ...], principal: Principal
    ) -> tuple[str, ...]:
        """`signed` each of `urls` (a path and a suffix) for `principal`: the same URLs for the
        same reader within one expiry step, made once (a kept answer's, asked again and again)."""
        return self.signer.urls(urls, principal.name, self._binding(principal.name) or "")

    def signed_url_principal(
        self, path: str, query: dict[str, str], access: Access, namespace: str | None = None
    ) -> str:
        """Who a signed download URL was given to; Forbidden when it does not verify, when its
        token is no longer configured or changed, or no longer opens `access` to `namespace`
        (a client token's scope, as registry.yaml says now)."""
        try:
            name = self.signer.check(path, query, binding_of=self._binding)
            named = self._named(name)
            token = named[1] if named is not None else None
            if token is not None and not token.may(access, namespace):
                raise Forbidden(
                    f"the token that signed this download URL ({name!r}) no longer opens it:"
                    " ask for the download again with a token that does"
                )
        except Forbidden:
            self.counts[("anonymous", "bad_signature")] += 1
            raise
        self.counts[(name, "signed_url")] += 1
        return name

    def _binding(self, name: str) -> str | None:
        found = self._named(name)
        return found[0] if found is not None else None

    def _named(self, name: str) -> tuple[str, Principal | None] | None:
        """What `name` stands for now, which a URL signed for it must find unchanged (a client
        token's digest, an issuer's URL, auth.git being on), and the client token's principal;
        None when nothing here goes by that name."""
        token = self.tokens.named(name)
        if token is not None:
            return f"token:{token[0].hex()}", token[1]
        for issuer in self.settings.oidc:
            if issuer.name == name:
                return f"oidc:{issuer.issuer}", None
        if name == GIT.name and self.settings.git is not None:
            return "git", None
        if self.login is not None:  # a person who signed in (their tokens are in the state)
            return f"login:{name}", None
        return None
