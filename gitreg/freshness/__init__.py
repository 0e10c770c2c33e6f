"""Keeping what is served fresh: polling, watching, webhooks, and registry.yaml applied live."""
