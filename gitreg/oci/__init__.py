"""The OCI Distribution side of the registry: names, manifests and packages OpenTofu pulls."""
