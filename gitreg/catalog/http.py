"""The `hsts:` and `mcp:` keys of registry.yaml: Strict-Transport-Security on answers served over
TLS, and the MCP endpoint; read by the same reader as the rest (key path and line)."""

from __future__ import annotations

from gitreg.catalog import yamldoc
from gitreg.catalog.settings import HstsPolicy, McpSettings


class HttpSection(yamldoc.Reader):
    def hsts(self, top: yamldoc.Mapping) -> HstsPolicy | None:
        """On by default; `hsts: false` turns it off, `hsts: {max_age: 1y,
        include_subdomains: true}` shapes it (`max_age: 0` tells browsers to forget it)."""
        default = HstsPolicy()
        value = top.get("hsts")
        if isinstance(value, bool):
            return default if value else None
        if value is not None and not isinstance(value, yamldoc.Mapping):
            self.problem(
                "hsts",
                top.key_lines["hsts"],
                f"must be false, or a mapping like {{max_age: 1y, include_subdomains: false}},"
                f" not {value!r}",
            )
            return default
        m = self.section(top, "hsts", "", {"max_age", "include_subdomains"})
        if m is None:
            return default
        max_age = self.duration(m, "max_age", "hsts", default.max_age, zero_is_off=True)
        return HstsPolicy(
            max_age=round(max_age),
            include_subdomains=self.flag(m, "include_subdomains", "hsts", False),
        )

    def mcp(self, top: yamldoc.Mapping) -> McpSettings:
        """`mcp: {enabled: true}` serves /mcp; off by default."""
        m = self.section(top, "mcp", "", {"enabled"})
        if m is None:
            return McpSettings()
        return McpSettings(enabled=self.flag(m, "enabled", "mcp", False))
