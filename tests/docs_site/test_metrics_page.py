"""docs/reference/metrics.md names every metric the real app's /metrics serves, with its type and
its labels; and no metric it does not serve. The app is served over real HTTP and TLS, with the
network mirror reading through, so that every collector answers."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from gitreg.catalog.load import load_catalog
from gitreg.process.tlscert import TlsMaterial
from tests.docs_site.site_pages import first_cells, page
from tests.support.gitrepo import GitRepo, module_files
from tests.support.tls_clients import served_over_tls


@pytest.fixture(scope="module")
def scraped(tmp_path_factory: pytest.TempPathFactory, tls: TlsMaterial) -> Iterator[str]:
    root = tmp_path_factory.mktemp("metrics")
    repo = GitRepo(root / "vpc")
    repo.release("v1.0.0", module_files("1.0.0"))
    young = GitRepo(root / "dns")  # its version pending for years: the pending metrics show
    young.release("v1.0.0", module_files("1.0.0"))
    (root / "srv").mkdir()
    (root / "registry.yaml").write_text(f"""
cache_dir: cache
sources:
  - folder: {{path: srv, glob: "terraform-*", namespace: local}}
modules:
  - {{namespace: infra, name: vpc, system: aws, repo: {repo.path}}}
  - {{namespace: infra, name: dns, system: aws, repo: {young.path},
     publish_when: {{min_age: 3650d}}}}
mirror: {{read_through: true}}
""")
    catalog = load_catalog(root / "registry.yaml")
    with served_over_tls(catalog, tls) as (_, client):
        # A mirror request for a host read-through does not read: a 404, counted, no connection.
        assert client.get("/v1/mirror/elsewhere.example/acme/widget/index.json").status_code == 404
        answer = client.get("/metrics")
        assert answer.status_code == 200, answer.text
        yield answer.text


def _served(text: str) -> dict[str, tuple[str, set[str]]]:
    """Each metric as a query names it (a counter with `_total`), its type and its labels."""
    found: dict[str, tuple[str, set[str]]] = {}
    for family in text_string_to_metric_families(text):
        name = f"{family.name}_total" if family.type == "counter" else family.name
        samples: list[Sample] = family.samples
        labels = {label for sample in samples for label in sample.labels}
        found[name] = (family.type, labels)
    return found


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def test_every_metric_served_is_on_the_page_with_its_type_and_labels(scraped: str) -> None:
    served = _served(scraped)
    assert "gitreg_mirror_downloaded_bytes_total" in served, "the mirror's collectors answered"
    rows = first_cells(page("reference/metrics.md"), "metric")
    missing = sorted(served.keys() - rows.keys())
    assert not missing, f"metrics /metrics serves, not on the page: {missing}"
    for name, (kind, labels) in served.items():
        cells = _cells(rows[name])
        assert cells[1] == kind, f"{name} is a {kind}, the page says {cells[1]}"
        on_page = set(cells[2].replace("`", "").replace(",", " ").split())
        assert labels <= on_page, f"{name}'s labels {sorted(labels)}, the page: {cells[2]}"


def test_every_metric_on_the_page_is_served(scraped: str) -> None:
    """In its tables, and in the examples of queries and alerts too."""
    text = page("reference/metrics.md")
    named = first_cells(text, "metric").keys() | set(re.findall(r"\bgitreg_\w+", text))
    unknown = sorted(named - _served(scraped).keys())
    assert not unknown, f"metrics on the page that /metrics does not serve: {unknown}"
