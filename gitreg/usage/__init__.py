"""Who uses what: each install counted, off the request path, and the counts read back."""
