"""A real browser for the pages' tests: Debian's headless Chromium driven by selenium through
Debian's chromedriver (selenium's own browser downloads cannot be fetched here, and are not
needed: both paths are given, so Selenium Manager never runs)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM = os.environ.get("GITREG_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("GITREG_CHROMEDRIVER", "/usr/bin/chromedriver")

DESKTOP = (1280, 900)
PHONE = (390, 844)


def require_chromium() -> None:
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not (Path(path).is_file() or shutil.which(path)):
            pytest.skip(f"{path} is missing: install Debian's {package} to run the browser tests")


def chromium(
    size: tuple[int, int] = DESKTOP,
    dark: bool = False,
    javascript: bool = True,
    test_certificates: bool = False,
) -> webdriver.Chrome:
    """Headless Chromium at `size` (a phone's, with touch and its pixel ratio, at PHONE), in the
    light or dark colour scheme, with or without JavaScript; with `test_certificates`, it
    accepts a server certificate of a test's own CA (a registry served over TLS)."""
    require_chromium()
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",  # as root in CI
        "--disable-dev-shm-usage",  # a container's /dev/shm is small
        "--disable-gpu",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",  # nothing but the registry under test
        f"--window-size={size[0]},{size[1]}",
    ):
        options.add_argument(flag)
    if not javascript:
        options.add_experimental_option(
            "prefs", {"profile.managed_default_content_settings.javascript": 2}
        )
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    if test_certificates:
        options.set_capability("acceptInsecureCerts", True)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(60)
    phone = size == PHONE
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {
            "width": size[0],
            "height": size[1],
            "deviceScaleFactor": 2 if phone else 1,
            "mobile": phone,
        },
    )
    scheme = "dark" if dark else "light"
    driver.execute_cdp_cmd(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "prefers-color-scheme", "value": scheme}]},
    )
    return driver


def full_page_screenshot(driver: webdriver.Chrome, path: Path) -> Path:
    """The whole page, not just the window: the height set to the document's for the shot."""
    width = driver.execute_script("return window.innerWidth")
    height = driver.execute_script("return document.documentElement.scrollHeight")
    metrics = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})
    scale = 2 if width < 600 else 1
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {
            "width": width,
            "height": min(int(height), 4000),
            "deviceScaleFactor": scale,
            "mobile": width < 600,
        },
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(path))
    viewport = metrics["cssLayoutViewport"]
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {
            "width": viewport["clientWidth"],
            "height": viewport["clientHeight"],
            "deviceScaleFactor": scale,
            "mobile": width < 600,
        },
    )
    return path


def copied_by_button(driver: webdriver.Chrome, source: str, wait: float = 30) -> str:
    """What the Copy button of the element `source` gives: the clipboard's text (grant the page
    clipboard permissions first), or, where the page fell back to selecting it for the reader's
    own Ctrl+C, the selection."""
    button = driver.find_element(By.CSS_SELECTOR, f'button[data-copy="{source}"]')
    button.click()
    WebDriverWait(driver, wait).until(lambda d: button.get_attribute("data-copied"), "a copy")
    if button.get_attribute("data-copied") == "copied":
        return str(
            driver.execute_async_script(
                "const done = arguments[0];"
                "navigator.clipboard.readText().then(done, (e) => done('failed: ' + e));"
            )
        )
    return str(driver.execute_script("return String(window.getSelection())"))
