"""The `oci:` section of registry.yaml: the read-only OCI Distribution API at `/v2/`, for
OpenTofu's `oci://` module sources and `oci_mirror`; read by the same reader as the rest."""

from __future__ import annotations

from gitreg.catalog import yamldoc
from gitreg.catalog.settings import OciSettings


class OciSection(yamldoc.Reader):
    def oci(self, top: yamldoc.Mapping) -> OciSettings:
        """Off by default; `oci: {enabled: true}` serves it, `module_locations: true` also
        points OpenTofu 1.10 and later at it from a modules.v1 download."""
        m = self.section(top, "oci", "", {"enabled", "module_locations"})
        if m is None:
            return OciSettings()
        enabled = self.flag(m, "enabled", "oci", False)
        locations = self.flag(m, "module_locations", "oci", False)
        if locations and not enabled:
            self.problem(
                "oci.module_locations",
                m.key_lines["module_locations"],
                "needs oci.enabled: true: the locations it hands out point at /v2/",
            )
            locations = False
        return OciSettings(enabled=enabled, module_locations=locations)
