"""Who may read what: client tokens, CI identity tokens, the Git server's word, signed URLs."""
