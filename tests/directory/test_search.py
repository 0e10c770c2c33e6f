"""Search: every term must match somewhere; exact names first; bounded queries."""

from __future__ import annotations

import pytest

from gitreg.directory.listing import Listing, readable_listing
from gitreg.directory.search import MAX_QUERY, query_problem, search, search_providers
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
def listing(served: Served) -> Listing:
    def describe(entry: ModuleEntry, release: Release) -> str:
        return DESCRIPTIONS[entry.spec.address.name]

    return readable_listing(served.sync.snapshot, served.providers, lambda ns: True, describe)


def names(listing: Listing, query: str) -> list[str]:
    return [m.name for m in search(listing, query)]


def test_exact_name_first_then_prefix_then_anywhere(listing: Listing) -> None:
    assert names(listing, "vpc") == ["vpc", "web-vpc", "naming"]  # name, in name, description


def test_every_term_must_match(listing: Listing) -> None:
    assert names(listing, "vpc aws") == ["vpc"]
    assert names(listing, "network azurerm") == ["web-vpc"]
    assert names(listing, "vpc nothing-like-it") == []


def test_case_does_not_matter(listing: Listing) -> None:
    assert names(listing, "VPC") == names(listing, "vpc")
    assert names(listing, "infra") == ["dns", "naming", "vpc"]  # namespace `Infra` too


def test_an_address_finds_its_module_first(listing: Listing) -> None:
    assert names(listing, "infra/vpc/aws")[0] == "vpc"
    assert names(listing, "apps/web-vpc") == ["web-vpc"]


def test_systems_and_prefixes(listing: Listing) -> None:
    assert names(listing, "azurerm") == ["web-vpc"]
    assert names(listing, "nam") == ["naming"]


def test_an_empty_query_is_everything_in_order(listing: Listing) -> None:
    assert search(listing, "  ") == list(listing.modules)


def test_providers_are_searched_by_type(listing: Listing) -> None:
    assert [p.type for p in search_providers(listing, "widg")] == ["widget"]
    assert search_providers(listing, "vpc") == []


def test_queries_are_bounded(listing: Listing) -> None:
    assert query_problem("x" * MAX_QUERY) is None
    assert "at most 200" in (query_problem("x" * (MAX_QUERY + 1)) or "")
    assert "more than 16 words" in (query_problem(" ".join("a" * 17)) or "")
    with pytest.raises(ValueError, match="at most"):
        search(listing, "x" * 1000)
