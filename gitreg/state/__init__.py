"""Where the state replicas must share lives: local disk by default, PostgreSQL with state:.

It holds the ledger of published tags, change notices between replicas, who polls a repository,
and browser sessions signed out. See docs/how-it-works/internals.md."""
