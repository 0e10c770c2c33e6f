"""What stops gitreg waits longer than a stop takes: the shutdown grace and the time to close are
read from the code, the stop timeouts from deploy/ (the systemd unit, the container's `docker
stop` timeout, the Kubernetes grace period) and from any page that states one, and compared."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gitreg.catalog.load import load_catalog
from gitreg.process.server import DEFAULT_GRACE, SHUTDOWN_MOST, longest_stop
from tests.support import kustomize

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
KUBERNETES = DEPLOY / "kubernetes"
# Every page that may tell an operator a stop timeout.
PAGES = sorted([*DEPLOY.rglob("*.md"), *(REPO / "docs").rglob("*.md"), REPO / "README.md"])
_DURATION = re.compile(r"(\d+)\s*(s|sec|min|m)?\b")


def _seconds(text: str) -> float:
    match = _DURATION.fullmatch(text.strip())
    assert match, text
    return float(match[1]) * (60 if match[2] in ("min", "m") else 1)


@pytest.fixture(scope="module")
def default_grace(tmp_path_factory: pytest.TempPathFactory) -> float:
    """shutdown_grace of a catalog that does not set it."""
    path = tmp_path_factory.mktemp("catalog") / "registry.yaml"
    path.write_text("cache_dir: cache\nmirror: {}\n")
    return load_catalog(path).server.shutdown_grace


def test_the_default_grace_is_the_one_the_server_uses(default_grace: float) -> None:
    assert default_grace == DEFAULT_GRACE
    assert longest_stop(default_grace) == DEFAULT_GRACE + SHUTDOWN_MOST


def test_systemd_waits_longer_than_a_stop_takes(default_grace: float) -> None:
    unit = dict(
        line.split("=", 1)
        for line in (DEPLOY / "gitreg.service").read_text().splitlines()
        if "=" in line and not line.startswith("#")
    )
    assert unit["KillSignal"] == "SIGTERM"
    assert "--workers" not in unit["ExecStart"]  # workers would want 10 s more (run_workers)
    assert _seconds(unit["TimeoutStopSec"]) > longest_stop(default_grace)


def test_the_container_is_run_with_a_stop_timeout_longer_than_a_stop(default_grace: float) -> None:
    """An image cannot set `docker stop`'s timeout (10 s unless told): the Containerfile says
    what to run it with, and so must every page that shows one."""
    containerfile = (DEPLOY / "Containerfile").read_text()
    assert re.search(r"^STOPSIGNAL SIGTERM$", containerfile, re.MULTILINE)
    told = re.findall(r"--stop-timeout[ =](\d+)", containerfile)
    assert told, "the Containerfile says which --stop-timeout to run the image with"
    for page in [DEPLOY / "Containerfile", *PAGES]:
        text = page.read_text()
        stated = re.findall(r"--stop-timeout[ =](\d+)|\bstop (?:-t|--time[ =])\s*(\d+)", text)
        for timeout in (int(a or b) for a, b in stated):
            assert timeout > longest_stop(default_grace), f"{page.relative_to(REPO)}: {timeout}"


def test_pages_state_no_shorter_stop_timeout(default_grace: float) -> None:
    for page in PAGES:
        text = page.read_text()
        for found in re.findall(r"TimeoutStopSec=(\w+)", text):
            assert _seconds(found) > longest_stop(default_grace), page
        for found in re.findall(r"terminationGracePeriodSeconds:\s*(\d+)", text):
            assert int(found) > longest_stop(default_grace), page


@pytest.mark.parametrize(
    "folder",
    ["base", *(f"overlays/{p.name}" for p in sorted((KUBERNETES / "overlays").iterdir()))],
)
def test_kubernetes_waits_longer_than_the_prestop_sleep_and_a_stop(
    folder: str, tmp_path: Path
) -> None:
    resources = kustomize.render(KUBERNETES / folder)
    (deployment,) = (r for r in resources if r["kind"] == "Deployment")
    (config_map,) = (r for r in resources if r["kind"] == "ConfigMap")
    path = tmp_path / "registry.yaml"
    path.write_text(config_map["data"]["registry.yaml"])
    grace = load_catalog(path, frozenset()).server.shutdown_grace  # its own, or the default
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    pre_stop = container["lifecycle"]["preStop"]["sleep"]["seconds"]
    assert pod["terminationGracePeriodSeconds"] > pre_stop + longest_stop(grace)
