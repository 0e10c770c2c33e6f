"""The `downloads:` section of registry.yaml: whether installs are counted, for how long the
counts are kept, and who may see who downloaded; read by the same reader as the rest."""

from __future__ import annotations

from typing import Literal, cast

from gitreg.catalog import yamldoc
from gitreg.catalog.settings import DownloadSettings

DAY = 86400.0


class UsageSection(yamldoc.Reader):
    def downloads(self, top: yamldoc.Mapping) -> DownloadSettings:
        """On by default, kept 400 days, principals shown to ops tokens alone, revoked versions
        hidden from anonymous readers."""
        default = DownloadSettings()
        keys = {"enabled", "retention", "show_principals", "revoked_for_anonymous"}
        m = self.section(top, "downloads", "", keys)
        if m is None:
            return default
        retention = self.duration(m, "retention", "downloads", default.retention)
        if "retention" in m and retention < DAY and not self.problems_at("downloads.retention"):
            self.problem(
                "downloads.retention",
                m.key_lines["retention"],
                f"must be at least 1d: downloads are counted by day, not {m['retention']!r}",
            )
            retention = default.retention
        return DownloadSettings(
            enabled=self.flag(m, "enabled", "downloads", default.enabled),
            retention=retention,
            show_principals=self.flag(m, "show_principals", "downloads", False),
            revoked_for_anonymous=cast(
                Literal["hidden", "kept"],
                self.choice(m, "revoked_for_anonymous", "downloads", ("hidden", "kept")),
            ),
        )
