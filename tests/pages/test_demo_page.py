"""`gitreg demo`'s module page in a real browser: opened at https://127.0.0.1:PORT, it names the
registry by its hostname (registry.example.com, which leads nowhere) and shows the CLI `host`
block beside the snippet; what the two Copy buttons give, pasted as they are, installs the
module with the real terraform."""

from __future__ import annotations

import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.support.browser import chromium, copied_by_button
from tests.support.servers import answers, free_port, start_gitreg, wait_until
from tests.support.terraform_cli import needs_terraform, run_terraform
from tests.support.tls_clients import trusting

TOP = Path(__file__).resolve().parents[2]
WAIT = 60  # seconds: the demo reads its repositories, the first page builds its docs


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """`gitreg demo` on a copy of the bundled catalog: its URL and its CA."""
    shutil.copy(TOP / "registry.yaml", tmp_path / "registry.yaml")
    shutil.copytree(TOP / "examples", tmp_path / "examples")
    port = free_port()
    config = str(tmp_path / "registry.yaml")
    with (tmp_path / "demo.out").open("w") as out:
        process = start_gitreg(
            "demo", "--config", config, "--listen", f"127.0.0.1:{port}", output=out
        )
    ca = tmp_path / ".gitreg" / "demo-tls" / "ca.pem"
    url = f"https://127.0.0.1:{port}"
    try:
        wait_until(
            lambda: (
                process.poll() is not None
                or (ca.exists() and answers(f"{url}/readyz", trusting(ca)))
            ),
            WAIT,
            "the demo serving",
        )
        assert process.poll() is None, (tmp_path / "demo.out").read_text()
        yield url, ca
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)


@needs_terraform
def test_what_the_demo_page_copies_installs(demo: tuple[str, Path], tmp_path: Path) -> None:
    url, ca = demo
    driver = chromium(test_certificates=True)
    copied = {}
    try:
        driver.execute_cdp_cmd(
            "Browser.grantPermissions",
            {"origin": url, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]},
        )
        driver.get(url + "/modules/examples/network/generic")
        WebDriverWait(driver, WAIT).until(lambda d: d.find_elements(By.ID, "host-block"))
        for source in ("usage-snippet", "host-block"):
            copied[source] = copied_by_button(driver, source, WAIT)
        siblings = [a.text for a in driver.find_elements(By.CSS_SELECTOR, "p.siblings a")]
    finally:
        driver.quit()
    assert 'source  = "registry.example.com/examples/network/generic"' in copied["usage-snippet"]
    assert copied["host-block"].startswith('host "registry.example.com" {')
    assert siblings == ["examples/naming/generic"]  # the monorepo's other module

    workdir = tmp_path / "tf"
    workdir.mkdir()
    (workdir / "cli.tfrc").write_text(copied["host-block"] + "\n")
    (workdir / "main.tf").write_text(
        copied["usage-snippet"] + '\noutput "version" {\n  value = module.network.version\n}\n'
    )
    init = run_terraform(workdir, ca, "init", "-input=false")
    assert init.returncode == 0, init.stdout + init.stderr
    applied = run_terraform(workdir, ca, "apply", "-auto-approve", "-input=false")
    assert applied.returncode == 0, applied.stderr
    assert 'version = "1.1.0"' in applied.stdout
