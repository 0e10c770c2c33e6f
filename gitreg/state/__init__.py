"""Where the state replicas must share lives: the ledger of published tags, change notices
between replicas, and who polls a repository (local disk by default; PostgreSQL with state:)."""
