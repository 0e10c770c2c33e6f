"""gitreg: Git tags become a Terraform/OpenTofu registry."""

__version__ = "0.1.0"
