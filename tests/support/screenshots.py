"""The pages' screenshots for the documentation, taken by hand:

    python -m tests.support.screenshots [FOLDER]     # FOLDER: docs/images by default

It serves the bundled example catalog (`registry.yaml` at the repository root, as `gitreg demo`
does: its hostname, over HTTPS with a certificate of its own, on its port 8443 when that is
free) and, since that catalog has no
provider, a catalog of its own beside it with a hosted provider and a private namespace, built as
the tests build them. Then, in Debian's headless Chromium, the home, module, provider and
sign-in pages at 1280 and 390 pixels wide, light and dark, each the height of a screen:
`<page>-<width>-<light|dark>.png`. `tests/pages/test_screenshots.py` takes them into a
temporary folder, so that this walk cannot rot unnoticed."""

from __future__ import annotations

import dataclasses
import hashlib
import socket
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from gitreg.catalog.load import load_catalog
from gitreg.catalog.model import Catalog
from gitreg.catalog.settings import TlsFiles
from gitreg.process.tlscert import ensure_local_tls
from tests.support.browser import chromium
from tests.support.provider_releases import new_key, write_key, write_release
from tests.support.servers import RegistryServer

ROOT = Path(__file__).resolve().parents[2]
IMAGES = ROOT / "docs" / "images"
SCREENS = {1280: 800, 390: 844}  # width: height, in CSS pixels, at one device pixel each
SCHEMES = ("light", "dark")
TOKEN = "gitreg_screenshots-reader-0123456789"


@dataclass(frozen=True)
class Shot:
    page: str  # the file's first word
    server: str  # "examples" (registry.yaml) or "providers" (the catalog made beside it)
    path: str


SHOTS = (
    Shot("home", "examples", "/"),
    Shot("module", "examples", "/modules/examples/network/generic"),
    Shot("provider", "providers", "/providers/examples/widget"),
    Shot("signin", "providers", "/signin?next=%2Fmodules%2Fplatform%2Fdatabase%2Faws"),
)


def example_catalog(cache: Path) -> Catalog:
    """registry.yaml at the repository root, with its cache in `cache` (not the repository's)."""
    return dataclasses.replace(load_catalog(ROOT / "registry.yaml"), cache_dir=cache)


def provider_catalog(root: Path) -> Catalog:
    """A hosted provider with three versions, as the tests make them, under the example
    catalog's hostname; and a private namespace, so that its sign-in page asks for a token."""
    key = new_key("examples")
    write_key(key, root / "signing.asc")
    for version in ("1.0.0", "1.1.0", "2.0.0"):
        platforms = ("linux_amd64", "linux_arm64", "darwin_arm64", "windows_amd64")
        write_release(root / "widget" / version, "widget", version, platforms, signer=key)
    digest = hashlib.sha256(TOKEN.encode()).hexdigest()
    path = root / "registry.yaml"
    path.write_text(
        f"""\
hostname: registry.example.com
cache_dir: cache
signing: {{keys: [signing.asc]}}
providers:
  - {{namespace: examples, type: widget, artifacts: widget}}
mirror: {{read_through: false}}
auth:
  public: [examples]
  tokens:
    - {{name: platform-team, token_sha256: "{digest}", read: [platform]}}
"""
    )
    return load_catalog(path)


def _demo_port(catalog: Catalog) -> int | None:
    """The port `gitreg demo` listens on (what the pages show, in a CLI host block), if free."""
    with socket.socket() as probe:
        try:
            probe.bind((catalog.server.listen.host, catalog.server.listen.port))
        except OSError:
            return None
    return catalog.server.listen.port


@contextmanager
def served(work: Path, as_the_demo: bool = False) -> Iterator[dict[str, str]]:
    """Both catalogs served over HTTPS on 127.0.0.1: their base URLs, by name. `as_the_demo`:
    the example catalog on the demo's port when it is free (the pages then show the addresses
    `gitreg demo` prints), else on any."""
    material = ensure_local_tls(work / "tls", ("localhost", "127.0.0.1"))
    tls = TlsFiles(material.certfile, material.keyfile)
    (work / "providers").mkdir()
    catalog = example_catalog(work / "cache")
    port = _demo_port(catalog) if as_the_demo else None
    with ExitStack() as stack:
        examples = stack.enter_context(RegistryServer(catalog, tls, port=port))
        providers = stack.enter_context(RegistryServer(provider_catalog(work / "providers"), tls))
        yield {"examples": examples.url, "providers": providers.url}


def _browser(width: int, scheme: str) -> webdriver.Chrome:
    driver = chromium((width, SCREENS[width]), dark=scheme == "dark")
    # One device pixel per CSS pixel: a 390-wide picture is 390 pixels wide, and small.
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": SCREENS[width], "deviceScaleFactor": 1, "mobile": width < 600},
    )
    # The certificate is the one `served` made: nothing else is reached.
    driver.execute_cdp_cmd("Security.setIgnoreCertificateErrors", {"ignore": True})
    return driver


def take(urls: dict[str, str], folder: Path, shots: Sequence[Shot] = SHOTS) -> list[Path]:
    """Every shot at every width, in both schemes, into `folder`; the files written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for width in SCREENS:
        for scheme in SCHEMES:
            driver = _browser(width, scheme)
            try:
                for shot in shots:
                    driver.get(urls[shot.server] + shot.path)
                    WebDriverWait(driver, 60).until(
                        lambda d: d.find_elements(By.TAG_NAME, "footer")
                    )
                    path = folder / f"{shot.page}-{width}-{scheme}.png"
                    driver.save_screenshot(str(path))
                    written.append(path)
            finally:
                driver.quit()
    return written


def main(argv: Sequence[str]) -> int:
    folder = Path(argv[0]) if argv else IMAGES
    with (
        tempfile.TemporaryDirectory(prefix="gitreg-screenshots-") as work,
        served(Path(work), as_the_demo=True) as urls,
    ):
        for path in take(urls, folder):
            print(f"{path} ({path.stat().st_size // 1024} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
