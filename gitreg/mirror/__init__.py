"""The provider network mirror: hosted, mirror-folder and read-through sources."""
