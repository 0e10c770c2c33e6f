"""What `gitreg check` says of an auth: section beyond its syntax: namespaces nothing opens,
tokens that open nothing, a registry no one can read."""

from __future__ import annotations

from gitreg.auth.principal import NamespaceScope
from gitreg.catalog.model import Catalog


def auth_warnings(catalog: Catalog) -> list[str]:
    auth = catalog.auth
    if auth is None:
        return []
    warnings = [
        f"warning: auth.tokens[{i}]: token {t.name!r} opens nothing (no read, mirror or ops)"
        for i, t in enumerate(auth.tokens)
        if not (t.read or t.mirror or t.ops)
    ]
    if auth.git is not None or auth.oidc:
        return warnings  # who else may read is the Git server's or the issuer's to say
    scopes = [NamespaceScope(auth.public)] + [NamespaceScope(t.read) for t in auth.tokens]
    namespaces = {m.address.namespace.lower() for m in catalog.modules}
    namespaces |= {p.namespace.lower() for p in catalog.providers}
    for namespace in sorted(namespaces):
        if not any(scope.covers(namespace) for scope in scopes):
            warnings.append(
                f"warning: auth: no token opens namespace {namespace!r}, and it is not public"
            )
    return warnings
