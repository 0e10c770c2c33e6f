"""providers.v1: release folders, signatures, package hashes, the provider index."""
