"""The `auth:` section of registry.yaml, read by the same reader as the rest.

It holds public namespaces, client tokens, CI identity tokens (OIDC issuers), the key that signs
download URLs, and whether a module's Git server may decide; every problem is named with its key
path and line. See docs/reference/configuration.md."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar
from urllib.parse import urlsplit

from gitreg.catalog import yamldoc
from gitreg.catalog.auth_settings import AuthSettings, GitCheck, OidcIssuer, TokenSpec
from gitreg.catalog.login import LoginSection, issuer_problem
from gitreg.catalog.secrets import SecretRef

_Value = TypeVar("_Value")

TOKEN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_PATTERN = re.compile(r"[A-Za-z0-9_*?-]{1,64}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_TOKEN_KEYS = {
    *("name", "token_sha256", "token_env", "token_file", "read", "mirror", "ops", "preview")
}
_GIT_KEYS = {
    "check",
    "username",
    "cache",
    "timeout",
    "ca_file",
    "token_pattern",
    "checks_per_minute",
    "failed_logins_per_minute",
}
_GIT_USERNAME = re.compile(r"[^:\s]{1,64}")  # the user of Basic user:token, so no colon
_OIDC_KEYS = {"name", "issuer", "audience", "claims", "read", "mirror", "ops", "ca_file"}
AUTH_KEYS = {
    "public",
    "tokens",
    "oidc",
    "signing_key_env",
    "signing_key_file",
    "previous_signing_key_env",
    "previous_signing_key_file",
    "download_ttl",
    "git",
    "login",
}


class AuthSection(LoginSection):
    def auth(self, top: yamldoc.Mapping) -> AuthSettings | None:
        m = self.section(top, "auth", "", AUTH_KEYS)
        if m is None:
            return None
        ttl = self.duration(m, "download_ttl", "auth", 600.0)
        if not 10 <= ttl <= 86400:
            self.problem(
                "auth.download_ttl", m.key_lines["download_ttl"], "must be from 10s to 24h"
            )
        keys = [self.key_ref(m, "signing_key"), self.key_ref(m, "previous_signing_key")]
        if keys[1] is not None and keys[0] is None:
            self.problem(
                "auth.previous_signing_key_env",
                m.line,
                "a previous signing key needs a current one (signing_key_env or signing_key_file)",
            )
        names: dict[str, str] = {}  # token and issuer names, unique together: where each is
        return AuthSettings(
            public=self.patterns(m, "public", "auth"),
            tokens=self.tokens(m, names),
            url_keys=tuple(k for k in keys if k is not None),
            download_ttl=ttl,
            git=self.git_check(m),
            oidc=self.oidc(m, names),
            login=self.login(m),
        )

    def key_ref(self, m: yamldoc.Mapping, stem: str) -> SecretRef | None:
        env = self.env_name(m, f"{stem}_env", "auth", "auth")
        file = self.file(m, f"{stem}_file", "auth", "auth")
        if env and file:
            where = f"auth.{stem}_env"
            self.problem(where, m.key_lines[f"{stem}_env"], f"give {stem}_env or _file, not both")
        return SecretRef(env, file) if env or file else None

    def patterns(self, m: yamldoc.Mapping, key: str, path: str) -> tuple[str, ...]:
        result = []
        for where, line, item in self.items(m, key, parent=path):
            if isinstance(item, str) and _PATTERN.fullmatch(item):
                result.append(item)
            else:
                self.problem(
                    where,
                    line,
                    f"must be a namespace or a pattern of them (platform, team-*, *), not {item!r}",
                )
        return tuple(result)

    def namespace_entries(
        self,
        top: yamldoc.Mapping,
        key: str,
        keys: tuple[str, ...],
        read: Callable[[yamldoc.Mapping, str], _Value | None],
    ) -> list[tuple[tuple[str, ...], _Value]]:
        """A top-level list of `- {namespaces: [platform, team-*], KEYS...}` (as
        `require_signed_tags` and `publish_when` are): each entry's patterns and its value, as
        `read` makes it from the entry and its key path (None: refused, and said why)."""
        found = []
        for where, line, item in self.items(top, key):
            m = self.mapping(item, where, line, ("namespaces", *keys), ("namespaces",))
            if m is None:
                continue
            patterns = self.patterns(m, "namespaces", where)
            value = read(m, where)
            if patterns and value is not None:
                found.append((patterns, value))
        return found

    def tokens(self, m: yamldoc.Mapping, names: dict[str, str]) -> tuple[TokenSpec, ...]:
        result: list[TokenSpec] = []
        digests: dict[str, str] = {}
        for path, line, item in self.items(m, "tokens", parent="auth"):
            t = self.mapping(item, path, line, _TOKEN_KEYS, {"name"})
            if t is None:
                continue
            name = self.principal_name(t, path, line, self.string(t, "name", path), names)
            digest = self.string(t, "token_sha256", path)
            if digest is not None:
                digest = digest.lower()
                if not _SHA256.fullmatch(digest):
                    self.problem(
                        yamldoc.join(path, "token_sha256"),
                        t.key_lines["token_sha256"],
                        "must be 64 hex digits: the SHA-256 of the token (gitreg token new"
                        " prints it)",
                    )
                    digest = None
                elif digest in digests:
                    self.problem(path, line, f"the same token as {digests[digest]}")
                else:
                    digests[digest] = path
            env = self.env_name(t, "token_env", path, "auth")
            file = self.file(t, "token_file", path, "auth")
            given = [k for k in ("token_sha256", "token_env", "token_file") if k in t]
            if len(given) != 1:
                self.problem(path, line, "give one of token_sha256, token_env or token_file")
            spec = TokenSpec(
                name=name or "",
                sha256=digest,
                source=SecretRef(env, file) if env or file else None,
                read=self.patterns(t, "read", path),
                mirror=self.flag(t, "mirror", path, False),
                ops=self.flag(t, "ops", path, False),
                preview=self.flag(t, "preview", path, False),
            )
            if self.problems_at(path):
                continue
            result.append(spec)
        return tuple(result)

    def git_check(self, m: yamldoc.Mapping) -> GitCheck | None:
        """auth.git: a module's Git server decides for tokens this registry does not know.
        Given alone (`git:` or `git: {}`), every default holds."""
        g = self.section(m, "git", "auth", _GIT_KEYS)
        if g is None:
            return None
        default = GitCheck()
        check = self.choice(g, "check", "auth.git", ("repo", "git_url"))
        username = self.string(g, "username", "auth.git", default.username)
        if username is not None and not _GIT_USERNAME.fullmatch(username):
            self.problem(
                "auth.git.username",
                g.key_lines["username"],
                "must be 1 to 64 characters without ':' or spaces (the user of user:token)",
            )
        # A bound both ways: answers kept a second help no one; kept for a day, a revoked
        # token would still read for a day.
        cache = self.duration(g, "cache", "auth.git", default.cache)
        if not 5 <= cache <= 3600:
            self.problem("auth.git.cache", g.key_lines["cache"], "must be from 5s to 1h")
        timeout = self.duration(g, "timeout", "auth.git", default.timeout)
        if not 1 <= timeout <= 60:
            self.problem("auth.git.timeout", g.key_lines["timeout"], "must be from 1s to 60s")
        return GitCheck(
            check="git_url" if check == "git_url" else "repo",
            username=username or default.username,
            cache=cache,
            timeout=timeout,
            ca_file=self.file(g, "ca_file", "auth.git"),
            token_pattern=self.token_pattern(g) or default.token_pattern,
            checks_per_minute=self.count(
                g, "checks_per_minute", "auth.git", default.checks_per_minute, most=1000
            ),
            failed_logins_per_minute=self.count(
                g,
                "failed_logins_per_minute",
                "auth.git",
                default.failed_logins_per_minute,
                most=1000,
            ),
        )

    def token_pattern(self, g: yamldoc.Mapping) -> str | None:
        """auth.git.token_pattern: a regular expression a whole token must match to be taken
        to a Git server; one that matches nothing sent (the empty token) is refused too."""
        pattern = self.string(g, "token_pattern", "auth.git")
        if pattern is None:
            return None
        try:
            compiled = re.compile(pattern)
        except re.error as exc:
            self.problem(
                "auth.git.token_pattern",
                g.key_lines["token_pattern"],
                f"is not a regular expression: {exc}",
            )
            return None
        if compiled.fullmatch(""):
            self.problem(
                "auth.git.token_pattern",
                g.key_lines["token_pattern"],
                "matches the empty token: write the form of the forge's tokens (glpat-.+)",
            )
            return None
        return pattern

    def principal_name(
        self, m: yamldoc.Mapping, path: str, line: int, name: str | None, names: dict[str, str]
    ) -> str | None:
        """`name` checked: shown in logs and metrics, and unique among tokens and issuers."""
        if name is not None and not TOKEN_NAME.fullmatch(name):
            self.problem(
                yamldoc.join(path, "name"),
                m.key_lines.get("name", line),
                f"must be 1 to 64 letters, digits, '.', '_' or '-' (it is shown in logs"
                f" and metrics), not {name!r}",
            )
            return None
        if name is not None:
            if name in names:
                self.problem(path, line, f"the name {name!r} is already listed at {names[name]}")
            names.setdefault(name, path)
        return name

    def oidc(self, m: yamldoc.Mapping, names: dict[str, str]) -> tuple[OidcIssuer, ...]:
        result: list[OidcIssuer] = []
        for path, line, item in self.items(m, "oidc", parent="auth"):
            o = self.mapping(item, path, line, _OIDC_KEYS, {"issuer", "audience"})
            if o is None:
                continue
            issuer = self.string(o, "issuer", path)
            if issuer is not None and (problem := issuer_problem(issuer)):
                self.problem(yamldoc.join(path, "issuer"), o.key_lines["issuer"], problem)
                issuer = None
            given = self.string(o, "name", path)
            if given is None and "name" not in o and issuer is not None:
                given = urlsplit(issuer).hostname
            name = self.principal_name(o, path, line, given, names)
            spec = OidcIssuer(
                name=name or "",
                issuer=issuer or "",
                audience=self.string(o, "audience", path) or "",
                claims=self.claims(o, path),
                read=self.read_templates(o, path),
                mirror=self.flag(o, "mirror", path, False),
                ops=self.flag(o, "ops", path, False),
                ca_file=self.file(o, "ca_file", path),
            )
            if self.problems_at(path):
                continue
            result.append(spec)
        return tuple(result)
