"""The `auth.login` section of registry.yaml, and the claim rules it shares with `auth.oidc`.

With it, people sign in with the company's OpenID provider. The rules are claim globs, and
namespace patterns that may name a claim's value. See docs/private.md."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from gitreg.catalog import yamldoc
from gitreg.catalog.auth_settings import LoginSettings, OidcIssuer
from gitreg.catalog.secrets import SecretRef

_PATTERN = re.compile(r"[A-Za-z0-9_*?-]{1,64}")
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_CLAIM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_SCOPE = re.compile(r"[!#-\[\]-~]{1,64}")  # RFC 6749's scope-token: printable, no space, " or \
_CLIENT_ID = re.compile(r"[!-~]{1,255}")
_LOGIN_KEYS = {
    "name",
    "issuer",
    "client_id",
    "client_secret_env",
    "client_secret_file",
    "scopes",
    "claims",
    "token_ttl",
    "ca_file",
    "name_claim",
}
_RULE_KEYS = {"match", "read", "mirror", "ops"}
MIN_TTL, MAX_TTL = 3600.0, 366 * 86400.0
# Claims of every ID token that say nothing of who signed in (OpenID Connect Core 2): naming
# people by one would give everyone the same name, or a new one at each sign-in.
_NOT_A_NAME = {"iss", "aud", "exp", "iat", "nbf", "nonce", "azp", "at_hash", "c_hash"}
_NOT_A_NAME |= {"auth_time", "acr", "amr", "jti", "sid"}


class LoginSection(yamldoc.Reader):
    def login(self, m: yamldoc.Mapping) -> LoginSettings | None:
        where = "auth.login"
        o = self.section(m, "login", "auth", _LOGIN_KEYS, {"issuer", "client_id"})
        if o is None:
            return None
        issuer = self.string(o, "issuer", where)
        if issuer is not None and (problem := issuer_problem(issuer)):
            self.problem(f"{where}.issuer", o.key_lines["issuer"], problem)
            issuer = None
        client_id = self.string(o, "client_id", where)
        if client_id is not None and not _CLIENT_ID.fullmatch(client_id):
            self.problem(
                f"{where}.client_id",
                o.key_lines["client_id"],
                "must be the client id the provider gave gitreg: printable, without spaces",
            )
        env = self.env_name(o, "client_secret_env", where, "auth")
        file = self.file(o, "client_secret_file", where, "auth")
        if env and file:
            self.problem(
                f"{where}.client_secret_env",
                o.key_lines["client_secret_env"],
                "give client_secret_env or client_secret_file, not both",
            )
        ttl = self.duration(o, "token_ttl", where, LoginSettings.token_ttl)
        if not MIN_TTL <= ttl <= MAX_TTL:
            self.problem(f"{where}.token_ttl", o.key_lines["token_ttl"], "must be from 1h to 366d")
        name = self.string(o, "name", where)
        if name is None and "name" not in o and issuer is not None:
            name = urlsplit(issuer).hostname
        ca_file = self.file(o, "ca_file", where)
        name_claim = self.name_claim(o, where)
        grants = self.login_grants(o, issuer or "", client_id or "", name or "", ca_file)
        settings = LoginSettings(
            name=name or "",
            issuer=issuer or "",
            client_id=client_id or "",
            client_secret=SecretRef(env, file) if env or file else None,
            scopes=self.scopes(o),
            grants=grants,
            token_ttl=ttl,
            ca_file=ca_file,
            name_claim=name_claim,
        )
        return None if self.problems_at(where) else settings

    def name_claim(self, o: yamldoc.Mapping, where: str) -> str | None:
        """The claim that names a person, if registry.yaml says which."""
        claim = self.string(o, "name_claim", where)
        if claim is not None and (not _CLAIM_NAME.fullmatch(claim) or claim in _NOT_A_NAME):
            self.problem(
                f"{where}.name_claim",
                o.key_lines["name_claim"],
                "must name the ID token's claim that names a person (preferred_username,"
                f" email, sub): letters, digits and '_', not {claim!r}",
            )
            return None
        return claim

    def scopes(self, o: yamldoc.Mapping) -> tuple[str, ...]:
        if "scopes" not in o:
            return LoginSettings.scopes
        result = []
        for where, line, item in self.items(o, "scopes", parent="auth.login"):
            if isinstance(item, str) and _SCOPE.fullmatch(item):
                result.append(item)
            else:
                self.problem(where, line, f"must be a scope (openid, email, groups), not {item!r}")
        if "openid" not in result and not self.problems_at("auth.login.scopes"):
            self.problem(
                "auth.login.scopes",
                o.key_lines["scopes"],
                "must hold openid: without it the provider sends no ID token",
            )
        return tuple(dict.fromkeys(result))

    def login_grants(
        self, o: yamldoc.Mapping, issuer: str, client_id: str, name: str, ca_file: Path | None
    ) -> tuple[OidcIssuer, ...]:
        """The claim rules, each as an `auth.oidc` entry of the provider for `client_id`."""
        result = []
        for path, line, item in self.items(o, "claims", parent="auth.login"):
            rule = self.mapping(item, path, line, _RULE_KEYS, {"read"})
            if rule is None:
                continue
            grant = OidcIssuer(
                name=name,
                issuer=issuer,
                audience=client_id,
                claims=self.claims(rule, path, "match"),
                read=self.read_templates(rule, path),
                mirror=self.flag(rule, "mirror", path, False),
                ops=self.flag(rule, "ops", path, False),
                ca_file=ca_file,
            )
            if not self.problems_at(path):
                result.append(grant)
        if "claims" not in o:
            self.problem(
                "auth.login",
                o.line,
                "give claims: the rules that say which namespaces a person reads"
                ' ({match: {groups: "platform"}, read: [platform]})',
            )
        return tuple(result)

    def claims(
        self, o: yamldoc.Mapping, path: str, key: str = "claims"
    ) -> tuple[tuple[str, str], ...]:
        """claim → glob. A YAML true or 3 stands for the text a token carries ("true", "3")."""
        c = o.get(key)
        where = yamldoc.join(path, key)
        if c is None:
            return ()
        if not isinstance(c, yamldoc.Mapping):
            self.problem(where, o.key_lines[key], "must be a mapping of claim: glob")
            return ()
        result = []
        for claim, value in c.items():
            glob = _claim_text(value)
            if glob is None or not glob:
                self.problem(
                    yamldoc.join(where, claim),
                    c.key_lines[claim],
                    f"must be a glob the claim's value matches (main, 'refs/tags/*'), not"
                    f" {value!r}",
                )
            else:
                result.append((claim, glob))
        return tuple(result)

    def read_templates(self, o: yamldoc.Mapping, path: str) -> tuple[str, ...]:
        """Namespace patterns in which `{claim}` stands for that claim's value."""
        result = []
        for where, line, item in self.items(o, "read", parent=path):
            names = _PLACEHOLDER.findall(item) if isinstance(item, str) else []
            bad = [n for n in names if not _CLAIM_NAME.fullmatch(n)]
            filled = _PLACEHOLDER.sub("x", item) if isinstance(item, str) else None
            if bad:
                self.problem(
                    where,
                    line,
                    f"{{{bad[0]}}} must name one claim: letters, digits and '_' (like"
                    f" {{namespace_path}})",
                )
            elif filled is None or not _PATTERN.fullmatch(filled):
                self.problem(
                    where,
                    line,
                    "must be a namespace or a pattern of them (platform, team-*, *, or"
                    f" {{claim}} for a claim's value), not {item!r}",
                )
            else:
                result.append(item)
        return tuple(result)


def issuer_problem(issuer: str) -> str | None:
    try:
        url = urlsplit(issuer)
        url.port  # noqa: B018 - a bad port raises
    except ValueError:
        url = None
    if url is None or url.scheme != "https" or not url.hostname:
        return f"must be an https:// URL (https://gitlab.com), not {issuer!r}"
    if url.query or url.fragment or "?" in issuer or "#" in issuer or url.username is not None:
        return f"must be an https:// URL without user, query or fragment, not {issuer!r}"
    return None


def _claim_text(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int)):
        return str(value).strip()
    return None
