"""Where the state replicas must share lives: the ledger of published tags, change notices
between replicas, who polls a repository, and browser sessions signed out (local disk by
default; PostgreSQL with state:)."""
