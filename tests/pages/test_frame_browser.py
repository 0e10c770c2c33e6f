"""What every page shares, in a real browser (headless Chromium): the search box in the header,
the favicon, sign-in that brings the person back to the page that asked for it, the error
pages a person sees, and the frame at a phone's width."""

from __future__ import annotations

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from tests.support.browser import PHONE, chromium
from tests.support.catalogue import TOKEN
from tests.support.servers import RegistryServer

WAIT = 30  # seconds: the first module page builds its docs


def _wait_for(driver: webdriver.Chrome, what: str, test: object) -> None:
    WebDriverWait(driver, WAIT).until(lambda d: test(d), what)  # type: ignore[operator]


def _sign_in_on_the_page(driver: webdriver.Chrome) -> None:
    _wait_for(driver, "the sign-in form", lambda d: d.find_elements(By.ID, "token"))
    driver.find_element(By.ID, "token").send_keys(TOKEN)
    driver.find_element(By.CSS_SELECTOR, "form.signin button").click()


@pytest.mark.parametrize(
    "path", ["/modules/open/vpc/aws", "/providers/open/widget", "/signin", "/nothing-here"]
)
def test_search_from_any_page(
    catalogue: RegistryServer, browser: webdriver.Chrome, path: str
) -> None:
    browser.get(catalogue.url + path)
    box = browser.find_element(By.CSS_SELECTOR, "header.site form.search input#q")
    label = browser.find_element(By.CSS_SELECTOR, 'label[for="q"]')
    assert (
        box.is_displayed() and label.get_attribute("textContent") == "Search modules and providers"
    )
    assert browser.execute_script("return arguments[0].labels.length", box) == 1
    box.send_keys("vpc", Keys.ENTER)
    _wait_for(browser, "the search", lambda d: d.current_url == catalogue.url + "/?q=vpc")
    shown = [
        a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "ul.entries a")
    ]
    assert shown == [catalogue.url + "/modules/open/vpc/aws"]
    assert browser.find_element(By.ID, "q").get_attribute("value") == "vpc"


def test_the_favicon_is_shown(catalogue: RegistryServer, browser: webdriver.Chrome) -> None:
    browser.get(catalogue.url + "/providers/open/widget")
    sizes = browser.execute_async_script(
        """
        const done = arguments[0];
        const load = (src) => new Promise((ok) => {
          const img = new Image();
          img.onload = () => ok(img.naturalWidth);
          img.onerror = () => ok(-1);
          img.src = src;
        });
        const linked = document.querySelector('link[rel="icon"]').href;
        Promise.all([load(linked), load('/favicon.ico')]).then(done);
        """
    )
    assert sizes[0] > 0 and sizes[1] > 0, sizes


def test_sign_in_from_a_private_page_comes_back_to_it(catalogue: RegistryServer) -> None:
    driver = chromium()
    try:
        page = catalogue.url + "/modules/secret/db/aws"
        driver.get(page)
        assert driver.find_element(By.TAG_NAME, "h1").text == "Sign in needed"
        assert "private part of this registry" in driver.find_element(By.TAG_NAME, "main").text
        assert "README" not in driver.page_source
        driver.find_element(By.CSS_SELECTOR, "main a.button").click()
        _sign_in_on_the_page(driver)
        _wait_for(driver, "the page that asked", lambda d: d.current_url == page)
        _wait_for(driver, "its content", lambda d: "A private database module." in d.page_source)
        assert "Sign in" not in driver.title and driver.title.startswith("secret/db/aws")
        assert "Signed in as" in driver.find_element(By.CSS_SELECTOR, "header.site").text
    finally:
        driver.quit()


def test_the_header_sign_in_link_comes_back(catalogue: RegistryServer) -> None:
    driver = chromium()
    try:
        page = catalogue.url + "/providers/open/widget"
        driver.get(page)
        driver.find_element(By.CSS_SELECTOR, "header.site").find_element(
            By.LINK_TEXT, "Sign in"
        ).click()
        _sign_in_on_the_page(driver)
        _wait_for(driver, "the page the person was on", lambda d: d.current_url == page)
        assert "Signed in as" in driver.find_element(By.CSS_SELECTOR, "header.site").text
    finally:
        driver.quit()


@pytest.mark.parametrize("hostile", ["//example.com/", "/\\example.com", "https://example.com/"])
def test_a_hostile_next_lands_home(catalogue: RegistryServer, hostile: str) -> None:
    driver = chromium()
    try:
        driver.get(catalogue.url + "/signin?next=" + hostile)
        _sign_in_on_the_page(driver)
        _wait_for(driver, "a page after sign-in", lambda d: "done=1" not in d.current_url)
        _wait_for(driver, "the list", lambda d: d.current_url == catalogue.url + "/")
    finally:
        driver.quit()


@pytest.mark.parametrize(
    ("path", "heading", "says"),
    [
        ("/nothing-here", "Not found", "There is no page at this address."),
        ("/modules/open/nothing/aws", "Not found", "No module open/nothing/aws on this registry."),
        ("/providers/secret/widget", "Sign in needed", "This page is in a private part"),
    ],
)
def test_an_error_page_speaks_to_a_person(
    catalogue: RegistryServer, browser: webdriver.Chrome, path: str, heading: str, says: str
) -> None:
    browser.get(catalogue.url + path)
    assert browser.find_element(By.TAG_NAME, "h1").text == heading
    main = browser.find_element(By.TAG_NAME, "main").text
    assert says.lower() in main.lower(), main
    # The message's first letter shows as a capital (text, for a search, keeps the API's).
    first = browser.execute_script(
        "return getComputedStyle(document.querySelector('.lead'), '::first-letter').textTransform"
    )
    assert first == "uppercase"
    assert browser.find_element(By.LINK_TEXT, "See all modules and providers").is_displayed()
    assert browser.find_element(By.ID, "q").is_displayed()
    assert "{" not in main and "errors" not in main


@pytest.mark.parametrize(
    "path", ["/", "/signin", "/nothing-here", "/modules/secret/db/aws", "/providers/open/widget"]
)
def test_the_frame_at_a_phone_width(catalogue: RegistryServer, path: str) -> None:
    driver = chromium(PHONE)
    try:
        driver.get(catalogue.url + path)
        overflow = driver.execute_script(
            "return document.documentElement.scrollWidth - window.innerWidth"
        )
        assert overflow <= 0, (path, overflow)
        width = driver.execute_script("return window.innerWidth")
        for selector in ("header.site .brand", "#q", "header.site form.search button", "h1"):
            box = driver.find_element(By.CSS_SELECTOR, selector).rect
            assert box["x"] >= 0 and box["x"] + box["width"] <= width, (path, selector, box)
        search = driver.find_element(By.CSS_SELECTOR, "#q").rect
        assert search["width"] >= width / 2, search  # a box one can type in, not a sliver
        link = driver.find_elements(By.CSS_SELECTOR, "header.site .who a, header.site .who button")
        assert all(e.is_displayed() for e in link)
    finally:
        driver.quit()


@pytest.mark.parametrize(
    "path", ["/nothing-here", "/modules/secret/db/aws", "/signin?next=%2Fproviders%2Fopen%2Fwidget"]
)
def test_the_frame_is_accessible(
    catalogue: RegistryServer, browser: webdriver.Chrome, path: str
) -> None:
    browser.get(catalogue.url + path)
    unlabelled = browser.execute_script(
        "return [...document.querySelectorAll('input, select, textarea')]"
        ".filter((e) => e.type !== 'hidden' && e.labels.length === 0"
        " && !e.getAttribute('aria-label')).map((e) => e.outerHTML);"
    )
    assert unlabelled == []
    levels = browser.execute_script(
        "return [...document.querySelectorAll('h1,h2,h3,h4,h5,h6')].map((h) => +h.tagName[1]);"
    )
    assert levels and levels[0] == 1 and levels.count(1) == 1, levels
    assert browser.find_elements(By.CSS_SELECTOR, 'form[role="search"]')
    # The skip link leads past the header to the page's own content.
    skip = browser.find_element(By.CSS_SELECTOR, "a.skip").get_attribute("href") or ""
    assert skip.endswith("#main") and browser.find_elements(By.CSS_SELECTOR, "main#main")
