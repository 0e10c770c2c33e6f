"""The pages in a real browser (headless Chromium): the list and its search with and without
JavaScript, a module page and its inputs, the copy button, a hostile README that must run
nothing, sign-in and sign-out, basic accessibility, and screenshots to look at
(GITREG_SCREENSHOTS names their folder; by default a temporary one, printed)."""

from __future__ import annotations

import contextlib
import itertools
import os
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from tests.support.browser import DESKTOP, PHONE, chromium, full_page_screenshot
from tests.support.catalogue import HOSTNAME, TOKEN
from tests.support.servers import RegistryServer

WAIT = 30  # seconds: the first module page builds its docs


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = Path(os.environ.get("GITREG_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"screenshots in {folder}")
    return folder


def _wait(driver: webdriver.Chrome, condition: object, what: str) -> None:
    WebDriverWait(driver, WAIT).until(lambda d: condition(d), what)  # type: ignore[operator]


def _visible_modules(driver: webdriver.Chrome) -> list[str]:
    return [
        a.get_attribute("href") or ""
        for a in driver.find_elements(By.CSS_SELECTOR, "ul.entries li a")
        if a.is_displayed()
    ]


def test_search_filters_as_one_types(catalogue: RegistryServer, browser: webdriver.Chrome) -> None:
    browser.get(catalogue.url + "/")
    assert any(h.endswith("/modules/open/evil/generic") for h in _visible_modules(browser))
    box = browser.find_element(By.ID, "q")
    box.send_keys("vpc")
    _wait(
        browser,
        lambda d: all("evil" not in h for h in _visible_modules(d)),
        "the list to filter as one types",
    )
    shown = _visible_modules(browser)
    assert shown and all("/modules/open/vpc/aws" in h for h in shown)
    assert browser.current_url == catalogue.url + "/"  # no request: filtered in the page
    assert "1 shown" in browser.find_element(By.ID, "search-status").text
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys("zzz-nothing")
    _wait(browser, lambda d: not _visible_modules(d), "everything to be filtered out")
    assert "Nothing matches" in browser.find_element(By.ID, "search-status").text


def test_search_without_javascript(catalogue: RegistryServer) -> None:
    driver = chromium(javascript=False)
    try:
        driver.get(catalogue.url + "/")
        box = driver.find_element(By.ID, "q")
        box.send_keys("evil")
        box.submit()
        _wait(driver, lambda d: "?q=evil" in d.current_url, "the form to be sent")
        shown = _visible_modules(driver)
        assert shown and all("/modules/open/evil/generic" in h for h in shown)
        driver.get(catalogue.url + "/modules/open/vpc/aws")
        # Without script, there is nothing a copy button could do: it stays hidden.
        assert not driver.find_element(By.CSS_SELECTOR, "button[data-copy]").is_displayed()
    finally:
        driver.quit()


def test_a_module_page_and_its_inputs(catalogue: RegistryServer, browser: webdriver.Chrome) -> None:
    browser.get(catalogue.url + "/")
    browser.find_element(By.CSS_SELECTOR, 'a[href="/modules/open/vpc/aws"]').click()
    _wait(browser, lambda d: d.find_elements(By.TAG_NAME, "h1"), "the module page")
    assert browser.find_element(By.TAG_NAME, "h1").text == "open/vpc/aws"
    rows = browser.find_elements(By.CSS_SELECTOR, "#inputs + .table-scroll table.inputs tbody tr")
    cells = {}
    for row in rows:
        texts = [
            (c.get_attribute("textContent") or "").strip()
            for c in row.find_elements(By.TAG_NAME, "td")
        ]
        cells[texts[0].split()[0]] = texts
    assert list(cells) == ["cidr", "legacy_name", "password", "subnets"]
    assert cells["cidr"][1:4] == ["string", "none", "yes"]
    assert cells["cidr"][4] == "The VPC's address range."
    assert "sensitive" in cells["password"][0] and cells["password"][3] == "no"
    assert (
        "deprecated" in cells["legacy_name"][0] and "Use name instead." in cells["legacy_name"][4]
    )
    assert "object(" in cells["subnets"][1] and "Subnets per kind." in cells["subnets"][4]
    snippet = browser.find_element(By.ID, "usage-snippet").text
    assert f'source  = "{HOSTNAME}/open/vpc/aws"' in snippet and 'version = "~> 1.3"' in snippet


def test_the_copy_button_copies_the_snippet(
    catalogue: RegistryServer, browser: webdriver.Chrome
) -> None:
    browser.execute_cdp_cmd(
        "Browser.grantPermissions",
        {"origin": catalogue.url, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]},
    )
    browser.get(catalogue.url + "/modules/open/vpc/aws")
    button = browser.find_element(By.CSS_SELECTOR, "button[data-copy]")
    assert button.is_displayed()
    button.click()
    _wait(browser, lambda d: button.get_attribute("data-copied"), "the copy to be done")
    status = browser.find_element(By.ID, "usage-status").text
    expected = browser.find_element(By.ID, "usage-snippet").text
    if button.get_attribute("data-copied") == "copied":
        assert status == "Copied."
        copied = browser.execute_async_script(
            "const done = arguments[0];"
            "navigator.clipboard.readText().then(done, (e) => done('failed: ' + e));"
        )
        assert copied.strip() == expected.strip()
    else:  # the fallback: the snippet is left selected for the reader's own copy
        assert "press Ctrl+C" in status
        assert browser.execute_script("return String(window.getSelection())").strip() == expected


def test_a_hostile_readme_runs_nothing(
    catalogue: RegistryServer, browser: webdriver.Chrome
) -> None:
    browser.get(catalogue.url + "/modules/open/evil/generic")
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".readme"), "the README")
    title = browser.title
    for link in browser.find_elements(By.CSS_SELECTOR, ".readme a"):
        with contextlib.suppress(WebDriverException):
            link.click()
        if browser.current_url != catalogue.url + "/modules/open/evil/generic":
            browser.back()
    assert browser.execute_script("return window.pwned === undefined")
    assert browser.title == title and "pwned" not in browser.title
    readme = browser.find_element(By.CSS_SELECTOR, ".readme")
    html = readme.get_attribute("innerHTML") or ""
    assert "A README that tries to run script." in readme.text
    for banned in (
        "<script",
        "onerror",
        "onload",
        "<iframe",
        "<svg",
        "<form",
        "<style",
    ):
        assert banned not in html.lower(), banned
    assert not browser.find_elements(By.CSS_SELECTOR, ".readme [onerror], .readme [onclick]")
    urls = browser.execute_script(
        "return [...document.querySelectorAll('.readme [href], .readme [src]')]"
        ".map((e) => e.getAttribute('href') || e.getAttribute('src'));"
    )
    assert all(u.startswith(("https:", "http:", "mailto:", "#")) for u in urls), urls
    # The README's <style> would have hidden the page.
    assert browser.find_element(By.TAG_NAME, "body").is_displayed()


def test_sign_in_shows_the_private_namespace_and_sign_out_hides_it(
    catalogue: RegistryServer,
) -> None:
    driver = chromium()
    try:
        driver.get(catalogue.url + "/")
        assert "/modules/secret/db/aws" not in driver.page_source
        driver.find_element(By.LINK_TEXT, "Sign in").click()
        _wait(driver, lambda d: d.find_elements(By.ID, "token"), "the sign-in page")
        driver.find_element(By.ID, "token").send_keys(TOKEN)
        driver.find_element(By.CSS_SELECTOR, "form.signin button").click()
        _wait(driver, lambda d: "Signed in as" in d.page_source, "the signed-in page")
        # Back where the person was (the list), not on a page titled "Sign in".
        assert driver.current_url == catalogue.url + "/" and "Sign in" not in driver.title
        cookies = {c["name"]: c for c in driver.get_cookies()}
        session = cookies["gitreg_session"]
        assert session["httpOnly"] and session["secure"] and session["sameSite"] == "Strict"
        assert TOKEN not in session["value"]
        assert driver.execute_script("return document.cookie") == ""  # HttpOnly: no script reads it
        driver.get(catalogue.url + "/")
        assert "/modules/secret/db/aws" in driver.page_source
        driver.find_element(By.CSS_SELECTOR, 'a[href="/modules/secret/db/aws"]').click()
        _wait(driver, lambda d: "A private database module." in d.page_source, "the private page")
        driver.find_element(By.XPATH, "//button[text()='Sign out']").click()
        _wait(driver, lambda d: d.find_elements(By.LINK_TEXT, "Sign in"), "the signed-out page")
        assert "/modules/secret/db/aws" not in driver.page_source
        assert "gitreg_session" not in {c["name"] for c in driver.get_cookies()}
    finally:
        driver.quit()


PAGES = [
    "/",
    "/?q=vpc",
    "/modules/open/vpc/aws",
    "/modules/open/evil/generic",
    "/providers/open/widget",
    "/signin",
    "/modules/open/nothing/aws",
]


@pytest.mark.parametrize("path", PAGES)
def test_basic_accessibility(
    catalogue: RegistryServer, browser: webdriver.Chrome, path: str
) -> None:
    browser.get(catalogue.url + path)
    unlabelled = browser.execute_script(
        """
        return [...document.querySelectorAll('input, select, textarea')]
          .filter((e) => e.type !== 'hidden' && e.type !== 'submit')
          .filter((e) => !(e.id && document.querySelector(`label[for="${e.id}"]`))
                         && !e.getAttribute('aria-label') && !e.closest('label'))
          .map((e) => e.outerHTML);
        """
    )
    assert unlabelled == []
    levels = browser.execute_script(
        "return [...document.querySelectorAll('h1,h2,h3,h4,h5,h6')].map((h) => +h.tagName[1]);"
    )
    assert levels and levels[0] == 1 and levels.count(1) == 1, levels
    skips = [(a, b) for a, b in itertools.pairwise(levels) if b > a + 1]
    assert skips == [], levels
    no_alt = browser.execute_script(
        "return [...document.images].filter((i) => !i.hasAttribute('alt')).map((i) => i.outerHTML);"
    )
    assert no_alt == []
    assert browser.execute_script("return document.documentElement.lang") == "en"
    assert browser.find_elements(By.CSS_SELECTOR, 'meta[name="viewport"]')


def _tab_order(driver: webdriver.Chrome, steps: int) -> list[str]:
    """What Tab reaches from the top of a freshly loaded page, in order."""
    reached = []
    for _ in range(steps):
        ActionChains(driver).send_keys(Keys.TAB).perform()
        active = driver.switch_to.active_element
        reached.append(
            active.get_attribute("id")
            or active.get_attribute("href")
            or active.text
            or active.tag_name
        )
    return reached


def test_the_main_controls_are_reachable_by_keyboard(
    catalogue: RegistryServer, browser: webdriver.Chrome
) -> None:
    browser.get(catalogue.url + "/")
    reached = _tab_order(browser, 8)
    assert "q" in reached and "Search" in reached
    assert any(str(r).endswith("/modules/open/broken/generic") for r in reached), reached
    browser.get(catalogue.url + "/modules/open/vpc/aws")
    reached = _tab_order(browser, 16)
    assert "Copy" in reached, reached


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_screenshots(
    catalogue: RegistryServer, shots: Path, size: tuple[int, int], dark: bool
) -> None:
    driver = chromium(size, dark=dark)
    try:
        tag = f"{'phone' if size == PHONE else 'desktop'}-{'dark' if dark else 'light'}"
        for name, path in (
            ("home", "/"),
            ("module", "/modules/open/vpc/aws"),
            ("provider", "/providers/open/widget"),
        ):
            driver.get(catalogue.url + path)
            _wait(driver, lambda d: d.find_elements(By.TAG_NAME, "footer"), path)
            # Readable on a phone: nothing wider than the screen but the tables' own scrollers.
            overflow = driver.execute_script(
                "return document.documentElement.scrollWidth - window.innerWidth"
            )
            assert overflow <= 0, (path, tag, overflow)
            background = driver.execute_script(
                "return getComputedStyle(document.body).backgroundColor"
            )
            assert (background == "rgb(21, 24, 28)") == dark, background
            assert full_page_screenshot(driver, shots / f"{name}-{tag}.png").stat().st_size > 0
    finally:
        driver.quit()


def test_a_namespace_page_by_page(many: RegistryServer, browser: webdriver.Chrome) -> None:
    browser.get(many.url + "/")
    assert not _visible_modules(browser)  # too many to show at once: the namespaces
    browser.find_element(By.CSS_SELECTOR, 'ul.namespace-list a[href="/?namespace=big"]').click()
    _wait(browser, lambda d: _visible_modules(d), "the namespace's first page")
    first = _visible_modules(browser)
    assert len(first) == 100 and first[0].endswith("/modules/big/mod0000/aws")
    assert not browser.find_elements(By.CSS_SELECTOR, 'a[rel="prev"]')
    browser.find_element(By.CSS_SELECTOR, 'a[rel="next"]').click()
    _wait(browser, lambda d: "page=2" in d.current_url, "the second page")
    assert _visible_modules(browser)[0].endswith("/modules/big/mod0100/aws")
    assert "Page 2 of 3" in browser.find_element(By.CSS_SELECTOR, "nav.pager").text
    box = browser.find_element(By.ID, "q")  # the script filters what the page shows
    box.send_keys("mod0150")
    _wait(browser, lambda d: len(_visible_modules(d)) == 1, "the page to filter")
    browser.find_element(By.CSS_SELECTOR, 'a[rel="prev"]').click()
    _wait(browser, lambda d: d.current_url == many.url + "/?namespace=big", "the first page")


@pytest.mark.parametrize("path", ["/", "/?namespace=big&page=3", "/?q=aws&page=2"])
def test_paged_lists_keep_their_headings_in_order(
    many: RegistryServer, browser: webdriver.Chrome, path: str
) -> None:
    browser.get(many.url + path)
    levels = browser.execute_script(
        "return [...document.querySelectorAll('h1,h2,h3,h4,h5,h6')].map((h) => +h.tagName[1]);"
    )
    assert levels[0] == 1 and levels.count(1) == 1 and max(levels) == 2, levels
    assert browser.find_elements(
        By.CSS_SELECTOR, 'nav.pager a[rel="prev"], nav.pager a[rel="next"]'
    )
