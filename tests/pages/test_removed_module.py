"""A discovered module whose repository left its source, in the real browser: its page says so,
and still shows its versions; the home page leaves it out under `on_removed: hide`."""

from __future__ import annotations

import shutil
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from gitreg.catalog.load import load_catalog
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer, wait_until

WAIT = 30


def _open(driver: webdriver.Chrome, url: str) -> None:
    driver.get(url)
    WebDriverWait(driver, WAIT).until(lambda d: d.find_elements(By.TAG_NAME, "footer"), url)


def test_a_removed_module_says_so_and_a_hidden_one_leaves_the_home_page(
    tmp_path: Path, browser: webdriver.Chrome
) -> None:
    srv = tmp_path / "srv"
    for name in ("terraform-aws-vpc", "terraform-aws-dns", "terraform-aws-nat"):
        GitRepo(srv / name).release("v1.0.0", module_files("1.0.0"))
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\nsources:\n"
        "  - folder: {path: srv, namespace: local, interval: 1s, on_removed: hide}\n"
    )
    catalog = load_catalog(tmp_path / "registry.yaml")
    with RegistryServer(catalog, refresh=True) as served:

        def read_modules() -> set[str]:
            entries = served.sync.snapshot.index.entries()
            return {str(e.spec.address) for e in entries if e.versions.releases}

        # read, not only discovered: a repository removed before its first read has no
        # versions to keep serving, and its page says so instead
        wait_until(lambda: len(read_modules()) == 3, WAIT, "three modules discovered and read")
        _open(browser, served.url + "/modules/local/dns/aws")
        assert not browser.find_elements(By.ID, "banner-removed")

        shutil.rmtree(srv / "terraform-aws-dns")

        def marked() -> bool:
            entry = served.sync.snapshot.index.get("local", "dns", "aws")
            return entry is not None and entry.spec.removed

        wait_until(marked, WAIT, "dns marked removed")
        _open(browser, served.url + "/modules/local/dns/aws")
        banner = browser.find_element(By.ID, "banner-removed").text
        assert "Removed from its source" in banner and "still install" in banner
        assert browser.find_elements(By.CSS_SELECTOR, "#panel-versions tbody tr")

        _open(browser, served.url + "/")
        text = browser.find_element(By.TAG_NAME, "main").text
        assert "vpc" in text and "nat" in text and "dns" not in text
