"""Shared test helpers: Git repositories, servers on 127.0.0.1, provider releases, the terraform CLI,
gitreg's own imports."""
