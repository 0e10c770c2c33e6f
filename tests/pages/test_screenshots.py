"""The documentation's screenshots cannot rot: the walk `python -m tests.support.screenshots`
takes, over the example catalog and a provider beside it, into a temporary folder. Every page
at every width in both schemes is a PNG of that width, a screen high, small enough to ship."""

from __future__ import annotations

import struct
from pathlib import Path

from tests.support.browser import require_chromium
from tests.support.screenshots import SCHEMES, SCREENS, SHOTS, served, take

PNG = b"\x89PNG\r\n\x1a\n"


def test_every_page_at_every_width_in_both_schemes(tmp_path: Path) -> None:
    require_chromium()
    (tmp_path / "work").mkdir()
    with served(tmp_path / "work") as urls:
        written = take(urls, tmp_path / "images")
    expected = {
        f"{shot.page}-{width}-{scheme}.png"
        for shot in SHOTS
        for width in SCREENS
        for scheme in SCHEMES
    }
    assert {p.name for p in written} == expected and len(written) == len(expected) == 16
    for path in written:
        data = path.read_bytes()
        assert data[:8] == PNG and data[12:16] == b"IHDR", path.name
        width, height = struct.unpack(">II", data[16:24])
        wide = int(path.name.split("-")[1])
        assert (width, height) == (wide, SCREENS[wide]), path.name
        assert len(data) < 200_000, (path.name, len(data))
    # Light and dark are not the same picture.
    for shot in SHOTS:
        light = (tmp_path / "images" / f"{shot.page}-1280-light.png").read_bytes()
        assert light != (tmp_path / "images" / f"{shot.page}-1280-dark.png").read_bytes()
