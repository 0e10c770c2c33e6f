"""registry.yaml: read once, checked with key paths and lines, held as frozen values."""
