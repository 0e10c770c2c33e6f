"""The reads replicas share in PostgreSQL: per repository, its line of the persisted index.

The line is the one the replica that last read the repository wrote (gitreg.modules.persisted),
so that a replica with an empty cache_dir serves `versions` before its clones exist. The lines
are opaque here: whoever reads one checks its digest and format."""

from __future__ import annotations

from collections.abc import Mapping

from gitreg.state.database import Database


def saved_reads(db: Database) -> dict[str, str]:
    with db.transaction() as conn:
        rows = conn.execute("SELECT repository, line FROM gitreg_repository_reads").fetchall()
    return {repository: line for repository, line in rows}


def save_reads(db: Database, replica: str, lines: Mapping[str, str]) -> None:
    with db.transaction() as conn, conn.cursor() as cursor:
        cursor.executemany(
            "INSERT INTO gitreg_repository_reads (repository, line, written_by)"
            " VALUES (%s, %s, %s) ON CONFLICT (repository) DO UPDATE"
            " SET line = excluded.line, written_by = excluded.written_by, written_at = now()",
            [(repository, line, replica) for repository, line in sorted(lines.items())],
        )
