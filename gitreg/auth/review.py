"""What `gitreg check` says of an auth: section beyond its syntax.

It names namespaces nothing opens, tokens that open nothing or are short enough to guess, a
registry no one can read, and archives it narrowed to a folder."""

from __future__ import annotations

from gitreg.auth.tokens import STRONG_BITS, strength
from gitreg.catalog.auth_settings import AuthSettings
from gitreg.catalog.model import Catalog
from gitreg.catalog.namespace_scope import NamespaceScope


def auth_warnings(catalog: Catalog) -> list[str]:
    auth = catalog.auth
    if auth is None:
        return []
    warnings = [
        f"warning: auth.tokens[{i}]: token {t.name!r} opens nothing (no read, mirror or ops)"
        for i, t in enumerate(auth.tokens)
        if not (t.read or t.mirror or t.ops)
    ]
    warnings += short_tokens(auth)
    if auth.git is not None:
        return warnings  # who else may read is the Git server's to say
    scopes = openers(auth)
    namespaces = {m.address.namespace.lower() for m in catalog.modules}
    namespaces |= {p.namespace.lower() for p in catalog.providers}
    for namespace in sorted(namespaces):
        if not any(scope.covers(namespace) for scope in scopes):
            warnings.append(
                f"warning: auth: nothing opens namespace {namespace!r}: no token reads it, no"
                " claim rule of auth.oidc or auth.login does, and it is not public"
            )
    return warnings


def openers(auth: AuthSettings) -> list[NamespaceScope]:
    """What opens a namespace: `public`, each token's `read`, and each claim rule's `read`
    (auth.oidc's, auth.login's). A rule whose `read` names a claim (`{namespace_path}`) may
    open any namespace: which, only its tokens say."""
    rules = [*auth.oidc, *(auth.login.grants if auth.login is not None else ())]
    scopes = [NamespaceScope(auth.public), *(NamespaceScope(t.read) for t in auth.tokens)]
    for rule in rules:
        claimed = any("{" in pattern for pattern in rule.read)
        scopes.append(NamespaceScope(("*",) if claimed else rule.read))
    return scopes


def archive_warnings(catalog: Catalog) -> list[str]:
    """Each module whose archives the catalog narrowed to its folder, and why: its repository
    also holds modules of other readers (gitreg.catalog.archive_scopes)."""
    warnings = []
    for i, spec in enumerate(catalog.modules):
        if spec.archive_narrowed_by:
            namespaces = ", ".join(repr(n) for n in spec.archive_narrowed_by)
            warnings.append(
                f"warning: modules[{i}].archive: {spec.address}'s archives hold only its folder"
                f" {spec.path}, not the whole repository: the repository also holds modules of"
                f" namespace {namespaces}, whose readers differ (write archive: folder to say so)"
            )
    return warnings


def short_tokens(auth: AuthSettings) -> list[str]:
    """A token set by hand (token_env, token_file: read now) that holds under 128 bits; one
    given as token_sha256 cannot be judged from its digest."""
    warnings = []
    for i, spec in enumerate(auth.tokens):
        value = spec.source.value() if spec.source else None
        if value is not None and (bits := strength(value)) < STRONG_BITS:
            warnings.append(
                f"warning: auth.tokens[{i}]: token {spec.name!r} holds at most {bits} bits of"
                f" entropy, under {STRONG_BITS}: it can be guessed (gitreg token new makes"
                " one of 256)"
            )
    return warnings
