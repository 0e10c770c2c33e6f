"""A hosted provider's page, over real HTTP and in Chromium: a version selector (with and
without script), the `required_providers` block for the version shown (`~>` on the newest,
the exact version on an older one's page), its platforms, and a phone's width. The provider
has three versions, as `tests/support/screenshots.py` makes it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape

import httpx
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests.support.browser import PHONE, chromium
from tests.support.screenshots import provider_catalog
from tests.support.servers import RegistryServer

PAGE = "/providers/examples/widget"
SOURCE = 'source  = "registry.example.com/examples/widget"'


@pytest.fixture(scope="module")
def widget(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryServer]:
    with RegistryServer(provider_catalog(tmp_path_factory.mktemp("widget"))) as server:
        yield server


def _get(server: RegistryServer, path: str) -> httpx.Response:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        return client.get(path)


def _snippet(page: str) -> str:
    found = re.search(r'<code id="usage-snippet">(.*?)</code>', page, re.S)
    assert found is not None
    return unescape(found[1])


def test_the_newest_version_asks_for_its_minor_series(widget: RegistryServer) -> None:
    page = _get(widget, PAGE)
    assert page.status_code == 200
    assert SOURCE in _snippet(page.text) and 'version = "~> 2.0"' in _snippet(page.text)
    assert '<option value="2.0.0" selected>2.0.0 (newest)</option>' in page.text
    assert '<option value="1.1.0">1.1.0</option>' in page.text
    for label, name in (("Linux, x86-64", "linux_amd64"), ("macOS, ARM64", "darwin_arm64")):
        assert f"<strong>{label}</strong> <code>{name}</code>" in page.text
    assert "terraform-provider-widget_2.0.0_windows_amd64.zip" in page.text
    assert re.search(r"SHA-256 <code>[0-9a-f]{64}</code>", page.text)


@pytest.mark.parametrize("path", [PAGE + "/1.1.0", PAGE + "/v1.1.0", PAGE + "/1.0.0"])
def test_an_older_version_asks_for_exactly_itself(widget: RegistryServer, path: str) -> None:
    page = _get(widget, path)
    version = path.rsplit("/", 1)[1].removeprefix("v")
    assert page.status_code == 200
    assert f'version = "{version}"' in _snippet(page.text) and "~>" not in _snippet(page.text)
    assert f'<option value="{version}" selected>' in page.text
    assert f"<title>examples/widget {version} · gitreg</title>" in page.text
    assert f"terraform-provider-widget_{version}_linux_amd64.zip" in page.text
    assert "terraform-provider-widget_2.0.0_linux_amd64.zip" not in page.text
    assert 'The newest is <a href="/providers/examples/widget">2.0.0</a>' in page.text


def test_the_newest_by_its_number_is_the_newest_page(widget: RegistryServer) -> None:
    page = _get(widget, PAGE + "/2.0.0")
    assert 'version = "~> 2.0"' in _snippet(page.text)


@pytest.mark.parametrize(
    ("query", "location"),
    [("1.1.0", PAGE + "/1.1.0"), ("v1.0.0", PAGE + "/1.0.0"), ("2.0.0", PAGE)],
)
def test_the_selector_without_script_goes_to_the_version(
    widget: RegistryServer, query: str, location: str
) -> None:
    answer = _get(widget, f"{PAGE}?version={query}")
    assert answer.status_code == 303 and answer.headers["location"] == location


@pytest.mark.parametrize(
    ("path", "status", "says"),
    [
        (PAGE + "/9.9.9", 404, "has no version 9.9.9"),
        (PAGE + "?version=9.9.9", 404, "has no version 9.9.9"),
        (PAGE + "/not-a-version", 400, "is not a version"),
        (PAGE + "?version=%00", 400, "is not a version"),
        (PAGE + "?version=1.0.0&version=1.1.0", 400, "only ?version=, once"),
        (PAGE + "?page=2", 400, "only ?version=, once"),
        (PAGE + "/1.0.0?version=1.1.0", 400, "only ?version=, once"),
    ],
)
def test_a_version_it_cannot_show_is_a_4xx_page(
    widget: RegistryServer, path: str, status: int, says: str
) -> None:
    page = _get(widget, path)
    assert page.status_code == status and page.headers["content-type"].startswith("text/html")
    assert says in unescape(page.text)


def test_the_selector_goes_to_the_version_chosen(widget: RegistryServer) -> None:
    driver = chromium()
    try:
        driver.get(widget.url + PAGE)
        # Choosing does not leave the page (a keyboard's arrow keys choose as they go): Show does.
        Select(driver.find_element(By.ID, "version")).select_by_value("1.1.0")
        assert driver.current_url == widget.url + PAGE
        driver.find_element(By.CSS_SELECTOR, "form.version-select button").click()
        WebDriverWait(driver, 30).until(lambda d: d.current_url == widget.url + PAGE + "/1.1.0")
        assert 'version = "1.1.0"' in driver.find_element(By.ID, "usage-snippet").text
        assert driver.find_element(By.CSS_SELECTOR, "tr.shown").text.startswith("1.1.0")
    finally:
        driver.quit()


def test_the_selector_without_javascript(widget: RegistryServer) -> None:
    driver = chromium(javascript=False)
    try:
        driver.get(widget.url + PAGE)
        Select(driver.find_element(By.ID, "version")).select_by_value("1.0.0")
        driver.find_element(By.CSS_SELECTOR, "form.version-select button").click()
        WebDriverWait(driver, 30).until(lambda d: d.current_url == widget.url + PAGE + "/1.0.0")
        assert 'version = "1.0.0"' in driver.find_element(By.ID, "usage-snippet").text
    finally:
        driver.quit()


@pytest.mark.parametrize("path", [PAGE, PAGE + "/1.0.0"])
def test_readable_on_a_phone(widget: RegistryServer, path: str) -> None:
    driver = chromium(PHONE)
    try:
        driver.get(widget.url + path)
        width = driver.execute_script("return window.innerWidth")
        overflow = driver.execute_script(
            "return document.documentElement.scrollWidth - window.innerWidth"
        )
        assert overflow <= 0, overflow
        for selector in ("h1", "#version", "ul.platforms li", ".usage pre"):
            box = driver.find_element(By.CSS_SELECTOR, selector).rect
            assert box["x"] >= 0 and box["x"] + box["width"] <= width, (selector, box)
        # The block keeps its lines: the address is never split over two (it scrolls instead).
        snippet = driver.find_element(By.ID, "usage-snippet")
        lines = driver.execute_script(
            "const r = document.createRange(); r.selectNodeContents(arguments[0]);"
            "return new Set([...r.getClientRects()].map((b) => Math.round(b.top))).size;",
            snippet,
        )
        assert lines == len(snippet.text.splitlines()) == 8
        assert SOURCE in snippet.text
    finally:
        driver.quit()


def test_the_selector_is_labelled_and_the_headings_in_order(widget: RegistryServer) -> None:
    driver = chromium()
    try:
        driver.get(widget.url + PAGE + "/1.0.0")
        select = driver.find_element(By.ID, "version")
        assert (
            driver.execute_script("return arguments[0].labels[0].textContent", select) == "Version"
        )
        levels = driver.execute_script(
            "return [...document.querySelectorAll('h1,h2,h3')].map((h) => +h.tagName[1]);"
        )
        assert levels[0] == 1 and levels.count(1) == 1 and max(levels) == 2, levels
        shown = driver.find_element(By.CSS_SELECTOR, 'tr[aria-current="page"]')
        assert shown.text.startswith("1.0.0")
    finally:
        driver.quit()


def test_opened_at_another_address_the_page_shows_the_host_block(widget: RegistryServer) -> None:
    """As the module page's: the block names the services at the address the browser used, so
    that `registry.example.com/examples/widget` installs from here as pasted."""
    page = _get(widget, PAGE)
    found = re.search(r'<code id="host-block">(.*?)</code>', page.text, re.S)
    assert found is not None, page.text
    block = unescape(found[1])
    assert block.startswith('host "registry.example.com" {')
    # Terraform speaks to a registry over https only: the block says so whatever the page used.
    assert f'"providers.v1" = "https://127.0.0.1:{widget.port}/v1/providers/"' in block
    with httpx.Client(base_url=widget.url, timeout=30) as client:
        at_its_name = client.get(PAGE, headers={"Host": "registry.example.com"})
    assert at_its_name.status_code == 200 and 'id="host-block"' not in at_its_name.text
