"""What `gitreg check` says of an auth: section beyond its syntax: namespaces nothing opens,
tokens that open nothing, a registry no one can read; and archives it narrowed to a folder."""

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
