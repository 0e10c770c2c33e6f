"""Attestations: what the registry states and signs about the versions it serves."""
