"""`require_signed_tags`: who may sign release tags, per module, per source or per namespace.

A module's own entry wins, then its source's, then the first top-level entry whose namespaces
cover it (`Catalog` applies that one to every module it lists). The file is read and checked
here, once per content: a file that is not there or does not parse is refused with its key
path and the line at fault."""

from __future__ import annotations

import hashlib
from functools import partial

from gitreg.catalog import yamldoc
from gitreg.catalog.auth import AuthSection
from gitreg.catalog.specs import NamespaceTagSigners, TagSigners
from gitreg.git.tag_signatures import SignatureKind, signers_problem

KEY = "require_signed_tags"
_FILE_KEYS: dict[str, SignatureKind] = {"allowed_signers": "ssh", "keyring": "openpgp"}
# (kind, file, digest) → its problem: a reload or `gitreg list` does not run gpg again.
_checked: dict[tuple[str, str, str], tuple[int | None, str] | None] = {}


def tag_signers(reader: yamldoc.Reader, m: yamldoc.Mapping, path: str) -> TagSigners | None:
    """`require_signed_tags: {allowed_signers: FILE}` (SSH) or `{keyring: FILE}` (OpenPGP)."""
    s = reader.section(m, KEY, path, tuple(_FILE_KEYS))
    return None if s is None else _signers(reader, s, yamldoc.join(path, KEY))


def namespace_tag_signers(
    reader: AuthSection, top: yamldoc.Mapping
) -> tuple[NamespaceTagSigners, ...]:
    """The top-level list: `- {namespaces: [platform, team-*], allowed_signers: FILE}`."""
    read = partial(_signers, reader)
    found = reader.namespace_entries(top, KEY, tuple(_FILE_KEYS), read)
    return tuple(NamespaceTagSigners(patterns, signers) for patterns, signers in found)


def _signers(reader: yamldoc.Reader, m: yamldoc.Mapping, where: str) -> TagSigners | None:
    given = [key for key in _FILE_KEYS if key in m]
    if len(given) != 1:
        reader.problem(
            where,
            m.line,
            "give allowed_signers (an SSH allowed-signers file) or keyring (OpenPGP public"
            f" keys), one of them, not {' and '.join(given) or 'neither'}",
        )
        return None
    key = given[0]
    file = reader.file(m, key, where)
    if file is None or not file.is_file():
        return None  # the reader said why
    kind = _FILE_KEYS[key]
    content = file.read_bytes()
    digest = hashlib.sha256(content).hexdigest()
    if (kind, str(file), digest) not in _checked:
        _checked[(kind, str(file), digest)] = signers_problem(kind, file)
    problem = _checked[(kind, str(file), digest)]
    if problem is not None:
        at, why = problem
        reader.problem(
            yamldoc.join(where, key),
            m.key_lines[key],
            f"{file}{f', line {at}' if at else ''}: {why}",
        )
        return None
    return TagSigners(kind, file, digest)
