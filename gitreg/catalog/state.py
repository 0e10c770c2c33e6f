"""The `state:` section of registry.yaml: where the ledger of published tags lives when several
replicas must agree (PostgreSQL); read by the same reader as the rest (key path and line)."""

from __future__ import annotations

from gitreg.catalog import yamldoc
from gitreg.catalog.secrets import SecretRef
from gitreg.catalog.settings import PostgresSettings


class StateSection(yamldoc.Reader):
    def state(self, top: yamldoc.Mapping) -> PostgresSettings | None:
        m = self.section(top, "state", "", {"postgres"}, {"postgres"})
        if m is None or "postgres" not in m:
            return None
        where = "state.postgres"
        pg = self.section(m, "postgres", "state", {"dsn_env", "dsn_file"})
        if pg is None:
            return None
        env = self.env_name(pg, "dsn_env", where, "state")
        file = self.file(pg, "dsn_file", where, "state")
        if bool(env) == bool(file):
            if not self.problems_at(where):
                self.problem(
                    where,
                    m.key_lines["postgres"],
                    "give dsn_env or dsn_file (one of them): where the database URL is read",
                )
            return None
        return PostgresSettings(SecretRef(env, file))
