"""modules.v1: tags resolved to versions, the ledger, the index handlers read, archives."""
