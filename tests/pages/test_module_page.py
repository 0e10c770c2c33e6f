"""A module page as a team shares it, in a real browser over real HTTPS: the version selector,
the usage snippet for the version shown with its required inputs as placeholders (pasted into
the real terraform with the page's CLI `host` block, it installs and validates), the required
Terraform version and providers, the tabs (with and without script, by keyboard), the examples
at a monorepo's root and its sibling modules, the inputs on a phone, and the banners of a
repository that cannot be read and of a tag that moved or went."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from gitreg.catalog.load import load_catalog
from gitreg.catalog.settings import TlsFiles
from gitreg.process.tlscert import TlsMaterial
from tests.support.browser import (
    DESKTOP,
    PHONE,
    chromium,
    copied_by_button,
    full_page_screenshot,
    require_chromium,
)
from tests.support.catalogue import TOKEN
from tests.support.gitrepo import GitRepo, git
from tests.support.servers import RegistryServer
from tests.support.terraform_cli import needs_terraform, run_terraform
from tests.support.tls_clients import trusting

HOSTNAME = "registry.example.test"
WAIT = 30  # seconds: the first page builds its docs

NET = """\
terraform {
  required_version = ">= 1.3"
}

variable "name" {
  type        = string
  description = "What the network is called."
}
variable "size" {
  type = number
}
variable "enabled" {
  type = bool
}
variable "zones" {
  type = list(string)
}
variable "labels" {
  type = map(string)
}
variable "settings" {
  type = object({ mode = string, replicas = optional(number, 1) })
}
variable "pair" {
  type = tuple([string, number])
}
variable "anything" {}
variable "region" {
  type        = string
  default     = "eu-west-1"
  description = "Where it runs: a description long enough to wrap on a phone's narrow screen."
}

resource "terraform_data" "network" {
  input = var.name
}

output "summary" {
  value = "${var.name}-${var.size}-${var.enabled}-${length(var.zones)}-${var.settings.mode}-${var.pair[0]}"
}
"""
DNS = 'variable "zone" {\n  type = string\n}\noutput "zone" {\n  value = var.zone\n}\n'
NET_EXAMPLE = """\
module "net" {
  source   = "../../modules/net"
  name     = "example"
  size     = 1
  enabled  = true
  zones    = ["a"]
  labels   = {}
  settings = { mode = "x" }
  pair     = ["a", 1]
  anything = 1
}
"""
DNS_EXAMPLE = 'module "dns" {\n  source = "../../modules/dns"\n  zone   = "example.com"\n}\n'


def _write(root: Path) -> Path:
    mono = GitRepo(root / "mono")
    files = {
        "modules/net/main.tf": NET,
        "modules/net/README.md": "# Net\n\nA network, version one.\n",
        "modules/dns/main.tf": DNS,
        "examples/net-basic/main.tf": NET_EXAMPLE,
        "examples/dns-only/main.tf": DNS_EXAMPLE,
    }
    mono.release("net/v1.0.0", files)
    mono.tag("dns/v1.0.0")
    mono.release("net/v1.1.0", {"modules/net/README.md": "# Net\n\nA network, version 1.1.\n"})
    mono.release("net/v1.2.0-rc.1", {"modules/net/README.md": "# Net\n\nA network, soon.\n"})
    for name in ("moving", "gone"):
        repo = GitRepo(root / name)
        repo.release("v1.0.0", {"main.tf": 'output "x" {\n  value = 1\n}\n'})
        repo.release("v1.1.0", {"main.tf": 'output "x" {\n  value = 2\n}\n'})
    path = root / "registry.yaml"
    path.write_text(f"""\
hostname: {HOSTNAME}
cache_dir: cache
modules:
  - {{namespace: infra, name: net, system: generic, repo: {root / "mono"}, path: modules/net,
      tags: "net/v{{version}}"}}
  - {{namespace: infra, name: dns, system: generic, repo: {root / "mono"}, path: modules/dns,
      tags: "dns/v{{version}}"}}
  - {{namespace: infra, name: moving, system: generic, repo: {root / "moving"}}}
  - {{namespace: infra, name: gone, system: generic, repo: {root / "gone"}}}
""")
    return path


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, tls: TlsMaterial) -> Iterator[RegistryServer]:
    catalog = load_catalog(_write(tmp_path_factory.mktemp("module-page")))
    with RegistryServer(catalog, TlsFiles(tls.certfile, tls.keyfile)) as server:
        yield server


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    require_chromium()
    driver = chromium(test_certificates=True)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = Path(os.environ.get("GITREG_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _open(driver: webdriver.Chrome, url: str) -> None:
    driver.get(url)
    WebDriverWait(driver, WAIT).until(lambda d: d.find_elements(By.TAG_NAME, "footer"), url)


def _text(driver: webdriver.Chrome, element_id: str) -> str:
    # textContent: what the Copy button copies, whether or not the element is shown.
    return str(driver.find_element(By.ID, element_id).get_attribute("textContent"))


def test_the_version_selector_goes_to_the_version_chosen(
    served: RegistryServer, browser: webdriver.Chrome
) -> None:
    for driver in (browser, chromium(javascript=False, test_certificates=True)):
        try:
            _open(driver, served.url + "/modules/infra/net/generic")
            pick = Select(driver.find_element(By.ID, "version-pick"))
            assert pick.first_selected_option.get_attribute("value") == "1.1.0"
            shown = [o.text for o in pick.options]
            assert shown == ["1.2.0-rc.1 (prerelease)", "1.1.0 (latest)", "1.0.0"]
            pick.select_by_value("1.0.0")
            driver.find_element(By.CSS_SELECTOR, "form.version-pick button").click()
            WebDriverWait(driver, WAIT).until(
                lambda d: d.current_url == served.url + "/modules/infra/net/generic/1.0.0",
                "the version's page",
            )
            assert "A network, version one." in driver.find_element(By.ID, "panel-readme").text
            assert 'version = "1.0.0"' in _text(driver, "usage-snippet")
            selected = Select(driver.find_element(By.ID, "version-pick")).first_selected_option
            assert selected.get_attribute("value") == "1.0.0"
        finally:
            if driver is not browser:
                driver.quit()


def test_the_snippet_asks_for_the_version_shown(
    served: RegistryServer, browser: webdriver.Chrome
) -> None:
    expected = {
        "": 'version = "~> 1.1"',  # the newest release: its newest patch
        "/1.0.0": 'version = "1.0.0"',  # an older one: `~> 1.0` would install 1.1.0
        "/1.2.0-rc.1": 'version = "1.2.0-rc.1"',  # a prerelease matches only exactly
    }
    for path, line in expected.items():
        _open(browser, served.url + "/modules/infra/net/generic" + path)
        snippet = _text(browser, "usage-snippet")
        assert line in snippet, (path, snippet)
        assert f'source  = "{HOSTNAME}/infra/net/generic"' in snippet
        # Required inputs as placeholders of their types; those with a default left out.
        for placeholder in (
            'name     = "..."',
            "size     = 0",
            "enabled  = false",
            "zones    = []",
            "labels   = {}",
            'settings = { mode = "..." }',
            'pair     = ["...", 0]',
            'anything = "..."',
        ):
            assert placeholder in snippet, (placeholder, snippet)
        assert "region" not in snippet


@needs_terraform
def test_the_copied_snippet_and_host_block_install_and_validate(
    served: RegistryServer, browser: webdriver.Chrome, tls: TlsMaterial, tmp_path: Path
) -> None:
    """The page opened at https://127.0.0.1:PORT names the registry by its hostname, which
    leads nowhere: its host block, in the CLI config, leads Terraform here."""
    browser.execute_cdp_cmd(
        "Browser.grantPermissions",
        {"origin": served.url, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]},
    )
    _open(browser, served.url + "/modules/infra/net/generic/1.0.0")
    host_block = copied_by_button(browser, "host-block")
    snippet = copied_by_button(browser, "usage-snippet")
    assert host_block.startswith(f'host "{HOSTNAME}"')
    assert f'"modules.v1"   = "https://127.0.0.1:{served.port}/v1/modules/"' in host_block
    (tmp_path / "cli.tfrc").write_text(host_block + "\n")
    (tmp_path / "main.tf").write_text(snippet + "\n")
    init = run_terraform(tmp_path, tls.ca_cert, "init", "-input=false")
    assert init.returncode == 0, init.stdout + init.stderr
    validate = run_terraform(tmp_path, tls.ca_cert, "validate")
    assert validate.returncode == 0, validate.stdout + validate.stderr
    installed = json.loads((tmp_path / ".terraform" / "modules" / "modules.json").read_text())
    versions = {m["Key"]: m.get("Version") for m in installed["Modules"]}
    assert versions["net"] == "1.0.0", versions


def test_the_required_terraform_and_providers_are_shown(
    served: RegistryServer, browser: webdriver.Chrome
) -> None:
    _open(browser, served.url + "/modules/infra/net/generic")
    requirements = browser.find_element(By.ID, "requirements").text
    assert "Terraform\n>= 1.3" in requirements
    assert "none declared" in requirements


def _shown_panels(driver: webdriver.Chrome) -> list[str]:
    return [
        p.get_attribute("data-panel") or ""
        for p in driver.find_elements(By.CSS_SELECTOR, "[data-panel]")
        if p.is_displayed()
    ]


def test_the_tabs_by_mouse_and_keyboard_and_without_script(
    served: RegistryServer, browser: webdriver.Chrome
) -> None:
    tabs = ["readme", "inputs", "outputs", "dependencies", "resources", "examples"]
    tabs += ["submodules", "versions", "used-by"]
    _open(browser, served.url + "/modules/infra/net/generic")
    assert _shown_panels(browser) == ["readme"]
    browser.find_element(By.ID, "tab-resources").click()
    assert _shown_panels(browser) == ["resources"]
    assert browser.current_url.endswith("#resources")
    assert "terraform_data.network" in browser.find_element(By.ID, "panel-resources").text
    tab = browser.switch_to.active_element
    assert tab.get_attribute("id") == "tab-resources"
    assert tab.get_attribute("aria-selected") == "true"
    tab.send_keys(Keys.ARROW_RIGHT)
    assert _shown_panels(browser) == ["examples"]
    assert browser.switch_to.active_element.get_attribute("id") == "tab-examples"
    browser.switch_to.active_element.send_keys(Keys.END)
    assert _shown_panels(browser) == ["used-by"]
    browser.switch_to.active_element.send_keys(Keys.HOME)
    assert _shown_panels(browser) == ["readme"]
    # Only the chosen tab is a Tab stop; Tab goes on into its panel.
    stops = browser.execute_script(
        "return [...document.querySelectorAll('[role=tab]')].filter((t) => t.tabIndex === 0)"
        ".map((t) => t.id)"
    )
    assert stops == ["tab-readme"]
    # A link to a section, or to a heading in it, opens its tab.
    _open(browser, served.url + "/modules/infra/net/generic#dependencies")
    assert _shown_panels(browser) == ["dependencies"]
    _open(browser, served.url + "/modules/infra/net/generic#rex-1")
    assert _shown_panels(browser) == ["examples"]

    driver = chromium(javascript=False, test_certificates=True)
    try:
        _open(driver, served.url + "/modules/infra/net/generic")
        assert _shown_panels(driver) == tabs  # all of them, one under the other
        driver.find_element(By.CSS_SELECTOR, 'nav.tabs a[href="#inputs"]').click()
        assert driver.current_url.endswith("#inputs")
    finally:
        driver.quit()


def test_the_examples_at_the_root_and_the_sibling_modules(
    served: RegistryServer, browser: webdriver.Chrome
) -> None:
    _open(browser, served.url + "/modules/infra/net/generic#examples")
    examples = browser.find_element(By.ID, "panel-examples").text
    assert "examples/net-basic" in examples and "repository root" in examples
    assert "examples/dns-only" not in examples  # it calls the other module
    assert "net from ../../modules/net" in examples  # what it calls, and its tables
    siblings = browser.find_element(By.CSS_SELECTOR, "p.siblings")
    assert [a.text for a in siblings.find_elements(By.TAG_NAME, "a")] == ["infra/dns/generic"]
    siblings.find_element(By.LINK_TEXT, "infra/dns/generic").click()
    WebDriverWait(browser, WAIT).until(lambda d: "/modules/infra/dns/generic" in d.current_url)
    _open(browser, browser.current_url + "#examples")
    examples = browser.find_element(By.ID, "panel-examples").text
    assert "examples/dns-only" in examples and "examples/net-basic" not in examples
    assert [a.text for a in browser.find_elements(By.CSS_SELECTOR, "p.siblings a")] == [
        "infra/net/generic"
    ]


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_inputs_keep_name_required_and_description_on_screen(
    served: RegistryServer, shots: Path, size: tuple[int, int]
) -> None:
    driver = chromium(size, test_certificates=True)
    try:
        _open(driver, served.url + "/modules/infra/net/generic#inputs")
        width = driver.execute_script("return window.innerWidth")
        assert driver.execute_script("return document.documentElement.scrollWidth") <= width
        rows = driver.find_elements(By.CSS_SELECTOR, "#panel-inputs table.inputs tbody tr")
        assert len(rows) == 9
        described = 0
        for row in rows:
            for cell in ("name", "required", "description"):
                found = row.find_element(By.CSS_SELECTOR, f"td.{cell}")
                if cell == "description" and not found.get_attribute("textContent"):
                    continue  # none to show: on a phone, no empty line says so
                described += cell == "description"
                box = driver.execute_script(
                    "const r = arguments[0].getBoundingClientRect();"
                    "return [r.left, r.right, r.width];",
                    found,
                )
                assert found.is_displayed() and box[0] >= 0 and box[1] <= width, (cell, box)
        assert described == 2  # name's and region's
        # The snippet keeps its lines whole: it scrolls sideways, never breaks an address.
        snippet = driver.find_element(By.CSS_SELECTOR, ".usage pre")
        assert snippet.value_of_css_property("white-space") == "pre"
        line_height = driver.execute_script(
            "return parseFloat(getComputedStyle(arguments[0]).lineHeight)", snippet
        )
        code = driver.find_element(By.ID, "usage-snippet")
        lines = _text(driver, "usage-snippet").count("\n") + 1
        assert code.size["height"] <= lines * line_height + 1
        tag = "phone" if size == PHONE else "desktop"
        for name, path in (("inputs", "#inputs"), ("top", "")):
            _open(driver, served.url + "/modules/infra/net/generic/1.0.0" + path)
            full_page_screenshot(driver, shots / f"module-page-{name}-{tag}.png")
    finally:
        driver.quit()


def test_the_deprecated_inputs_are_said(tmp_path: Path, browser: webdriver.Chrome) -> None:
    repo = GitRepo(tmp_path / "old")
    old = 'variable "size" {\n  default    = 1\n  deprecated = "Use count instead."\n}\n'
    repo.release("v1.0.0", {"main.tf": old})
    (tmp_path / "registry.yaml").write_text(
        "hostname: registry.example.test\ncache_dir: cache\nmodules:\n"
        f"  - {{namespace: infra, name: old, system: generic, repo: {repo.path}}}\n"
    )
    with RegistryServer(load_catalog(tmp_path / "registry.yaml")) as server:
        _open(browser, server.url + "/modules/infra/old/generic")
        banner = browser.find_element(By.ID, "banner-deprecated").text
    assert "Deprecated in 1.0.0" in banner and "input size: Use count instead." in banner


def test_a_repository_that_cannot_be_read_and_a_tag_that_moved_or_went(
    served: RegistryServer, browser: webdriver.Chrome, shots: Path
) -> None:
    snapshot = served.sync.snapshot
    moving = snapshot.index.get("infra", "moving", "generic")
    gone = snapshot.index.get("infra", "gone", "generic")
    assert moving is not None and gone is not None
    root = moving.spec.repo.url
    for path in ("/modules/infra/moving/generic/1.0.0", "/modules/infra/gone/generic"):
        _open(browser, served.url + path)
        assert not browser.find_elements(By.CSS_SELECTOR, ".banner")

    repo = GitRepo.existing(Path(root))
    published = git(repo.path, "rev-parse", "v1.0.0")
    repo.release("v1.0.0-moved", {"main.tf": 'output "x" {\n  value = 3\n}\n'})
    repo.tag("v1.0.0", force=True)
    git(repo.path, "tag", "-d", "v1.1.0")
    shutil.rmtree(gone.spec.repo.url)
    assert served.sync.sync_repo(moving.spec.repo, "poll")
    assert not served.sync.sync_repo(gone.spec.repo, "poll")

    _open(browser, served.url + "/modules/infra/moving/generic/1.0.0")
    banner = browser.find_element(By.ID, "banner-kept-tag").text
    assert "Tag v1.0.0 now names commit" in banner and published[:12] in banner
    _open(browser, served.url + "/modules/infra/moving/generic/1.1.0")
    banner = browser.find_element(By.ID, "banner-kept-tag").text
    assert "Tag v1.1.0 was deleted from the repository" in banner
    full_page_screenshot(browser, shots / "module-page-tag-deleted.png")

    _open(browser, served.url + "/modules/infra/gone/generic")
    banner = browser.find_element(By.ID, "banner-unreadable").text
    assert "Repository unreachable" in banner and "versions read before" in banner
    assert gone.spec.repo.url not in browser.page_source  # where it lives is the operators' to know
    versions = browser.find_elements(By.CSS_SELECTOR, "#panel-versions tbody tr")
    assert len(versions) == 2
    full_page_screenshot(browser, shots / "module-page-unreachable.png")


def test_the_version_form_without_script_is_a_redirect(
    served: RegistryServer, tls: TlsMaterial
) -> None:
    context = trusting(tls.ca_cert)
    with httpx.Client(base_url=served.url, verify=context, timeout=60) as client:
        chosen = client.get("/modules/infra/net/generic", params={"version": "1.0.0"})
        odd = client.get("/modules/infra/net/generic", params={"version": "../../x y"})
        followed = client.get(odd.headers["location"])
    assert chosen.status_code == 303 and chosen.headers["location"] == (
        "/modules/infra/net/generic/1.0.0"
    )
    # Whatever is asked stays within this module's pages: a 404, not a walk elsewhere.
    assert odd.headers["location"] == "/modules/infra/net/generic/..%2F..%2Fx%20y"
    assert followed.status_code == 404


def _monorepo(root: Path, extra: str) -> Path:
    repo = GitRepo(root / "mono")
    repo.write({"a/main.tf": DNS, "b/main.tf": DNS})
    repo.commit()
    repo.tag("a/v1.0.0")
    repo.tag("b/v1.0.0")
    digest = hashlib.sha256(TOKEN.encode()).hexdigest()
    path = root / "registry.yaml"
    path.write_text(f"""\
hostname: {HOSTNAME}
cache_dir: cache
{extra}
modules:
  - {{namespace: open, name: a, system: generic, repo: {repo.path}, path: a, tags: "a/v{{version}}",
      archive: folder}}
  - {{namespace: secret, name: b, system: generic, repo: {repo.path}, path: b,
      tags: "b/v{{version}}", archive: folder}}
auth:
  public: [open]
  tokens:
    - {{name: reader, token_sha256: "{digest}", read: [secret]}}
""")
    return path


def test_sibling_modules_are_shown_to_those_who_may_read_them(tmp_path: Path) -> None:
    with (
        RegistryServer(load_catalog(_monorepo(tmp_path, ""))) as server,
        httpx.Client(base_url=server.url, timeout=60) as client,
    ):
        anyone = client.get("/modules/open/a/generic").text
        reader = client.get(
            "/modules/open/a/generic", headers={"Authorization": f"Bearer {TOKEN}"}
        ).text
    assert "/modules/secret/b/generic" not in anyone and "secret/b" not in anyone
    assert '<a href="/modules/secret/b/generic">secret/b/generic</a>' in reader


@pytest.mark.parametrize(
    ("public_url", "block"),
    [
        (f"https://{HOSTNAME}", ""),  # people open it at its hostname: nothing to map
        ("https://proxy.example.test:8443", "https://proxy.example.test:8443/v1/modules/"),
    ],
)
def test_behind_a_proxy_the_host_block_follows_public_url(
    tmp_path: Path, public_url: str, block: str
) -> None:
    catalog = load_catalog(_monorepo(tmp_path, f"public_url: {public_url}"))
    with (
        RegistryServer(catalog) as server,
        httpx.Client(base_url=server.url, timeout=60) as client,
    ):
        page = client.get("/modules/open/a/generic").text
    assert ('id="host-block"' in page) == bool(block)
    assert block in page
