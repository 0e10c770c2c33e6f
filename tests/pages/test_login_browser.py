"""Signing in with the OpenID provider in a real browser (headless Chromium): from a private
module page, through "Sign in with <provider>" and the provider's own form, back on the module
page it started from, with the header saying who is signed in and until when."""

from __future__ import annotations

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.support.browser import chromium
from tests.web.test_login import Served
from tests.web.test_login import served as served  # the registry and provider, over TLS

WAIT = 30  # seconds: the first module page builds its docs


def _wait_for(driver: webdriver.Chrome, what: str, test: object) -> None:
    WebDriverWait(driver, WAIT).until(lambda d: test(d), what)  # type: ignore[operator]


@pytest.mark.parametrize("javascript", [True, False])
def test_sign_in_with_the_provider_comes_back_to_the_module_page(
    served: Served, javascript: bool
) -> None:
    driver = chromium(javascript=javascript, test_certificates=True)
    try:
        page = served.url + "/modules/platform/net/aws"
        driver.get(page)
        assert driver.find_element(By.TAG_NAME, "h1").text == "Sign in needed"
        driver.find_element(By.CSS_SELECTOR, "main a.button").click()
        _wait_for(
            driver, "the sign-in page", lambda d: d.find_elements(By.ID, "sign-in-with-provider")
        )
        button = driver.find_element(By.ID, "sign-in-with-provider")
        assert button.text == "Sign in with Acme SSO"
        button.click()
        _wait_for(driver, "the provider's form", lambda d: d.find_elements(By.NAME, "sub"))
        driver.find_element(By.NAME, "sub").send_keys("alice")
        driver.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
        _wait_for(driver, "the page that asked", lambda d: d.current_url == page)
        _wait_for(driver, "its content", lambda d: "platform/net/aws" in d.title)
        header = driver.find_element(By.CSS_SELECTOR, "header.site").text
        assert "Signed in as alice@acme.example until" in header and "UTC" in header
    finally:
        driver.quit()
