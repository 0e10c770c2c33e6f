"""Search: every term must match somewhere; exact names first; bounded queries."""

from __future__ import annotations

import pytest

from gitreg.directory.search import MAX_QUERY, query_problem, search, search_providers
from gitreg.directory.view import DirectoryView, directory_view
from gitreg.modules.index import ModuleEntry
from gitreg.modules.resolve import Release
from tests.directory.conftest import Served

DESCRIPTIONS = {
    "vpc": "A network with public and private subnets.",
    "naming": "Names for every resource, vpc included.",
    "web-vpc": "A web tier in its own network.",
    "dns": "Zones and records.",
}


@pytest.fixture(scope="module")
def view(served: Served) -> DirectoryView:
    def describe(entry: ModuleEntry, release: Release) -> str:
        return DESCRIPTIONS[entry.spec.address.name]

    return directory_view(served.sync.snapshot, served.providers, lambda ns: True, describe)


def names(view: DirectoryView, query: str) -> list[str]:
    return [m.name for m in search(view, query)]


def test_exact_name_first_then_prefix_then_anywhere(view: DirectoryView) -> None:
    assert names(view, "vpc") == ["vpc", "web-vpc", "naming"]  # name, in name, description


def test_every_term_must_match(view: DirectoryView) -> None:
    assert names(view, "vpc aws") == ["vpc"]
    assert names(view, "network azurerm") == ["web-vpc"]
    assert names(view, "vpc nothing-like-it") == []


def test_case_does_not_matter(view: DirectoryView) -> None:
    assert names(view, "VPC") == names(view, "vpc")
    assert names(view, "infra") == ["dns", "naming", "vpc"]  # namespace `Infra` too


def test_an_address_finds_its_module_first(view: DirectoryView) -> None:
    assert names(view, "infra/vpc/aws")[0] == "vpc"
    assert names(view, "apps/web-vpc") == ["web-vpc"]


def test_systems_and_prefixes(view: DirectoryView) -> None:
    assert names(view, "azurerm") == ["web-vpc"]
    assert names(view, "nam") == ["naming"]


def test_an_empty_query_is_everything_in_order(view: DirectoryView) -> None:
    assert search(view, "  ") == list(view.modules)


def test_providers_are_searched_by_type(view: DirectoryView) -> None:
    assert [p.type for p in search_providers(view, "widg")] == ["widget"]
    assert search_providers(view, "vpc") == []


def test_queries_are_bounded(view: DirectoryView) -> None:
    assert query_problem("x" * MAX_QUERY) is None
    assert "at most 200" in (query_problem("x" * (MAX_QUERY + 1)) or "")
    assert "more than 16 words" in (query_problem(" ".join("a" * 17)) or "")
    with pytest.raises(ValueError, match="at most"):
        search(view, "x" * 1000)
