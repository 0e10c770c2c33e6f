"""Who serves an address, settled: explicit entries win and set the found one aside; two
found claims on one address are a conflict, neither served."""

from __future__ import annotations

from gitreg.address import ModuleAddress
from gitreg.catalog.specs import ModuleSpec
from gitreg.git.location import RepoLocation
from gitreg.sources.claims import Conflict, settle
from gitreg.sources.survey import FoundModule, Survey


def spec(address: str, repo: str = "x") -> ModuleSpec:
    location = RepoLocation(f"https://git.example.com/{repo}.git", "https")
    return ModuleSpec(address=ModuleAddress.parse(*address.split("/")), repo=location)


def found(source: str, *claims: tuple[str, str], removed: bool = False) -> Survey:
    modules = tuple(
        FoundModule(spec(address, repository), source, repository, removed=removed)
        for address, repository in claims
    )
    return Survey(source, 1.0, tuple(r for _, r in claims), modules)


def test_nothing_found_serves_nothing_more() -> None:
    settled = settle([spec("infra/vpc/aws")], [])
    assert (settled.served, settled.conflicts, settled.shadowed) == ((), (), ())


def test_distinct_addresses_are_all_served() -> None:
    a = found(
        "sources[0]", ("local/vpc/aws", "terraform-aws-vpc"), ("local/dns/aws", "terraform-aws-dns")
    )
    b = found("sources[1]", ("team/vpc/aws", "terraform-aws-vpc"))
    settled = settle([spec("infra/vpc/aws")], [a, b])
    assert [str(m.spec.address) for m in settled.served] == [
        "local/vpc/aws",
        "local/dns/aws",
        "team/vpc/aws",
    ]
    assert settled.specs == tuple(m.spec for m in settled.served)
    assert settled.problems() == []


def test_an_explicit_entry_wins_and_the_found_one_is_set_aside() -> None:
    claim = found("sources[0]", ("Infra/VPC/aws", "terraform-aws-vpc"), ("infra/dns/aws", "dns"))
    settled = settle([spec("infra/vpc/aws")], [claim])
    assert [str(m.spec.address) for m in settled.served] == ["infra/dns/aws"]
    assert [(str(m.spec.address), m.source, m.repository) for m in settled.shadowed] == [
        ("Infra/VPC/aws", "sources[0]", "terraform-aws-vpc")
    ]


def test_two_sources_claiming_one_address_serve_neither() -> None:
    a = found("sources[0]", ("local/vpc/aws", "terraform-aws-vpc"), ("local/dns/aws", "dns"))
    b = found("sources[1]", ("local/vpc/aws", "team/terraform-aws-vpc"))
    settled = settle([], [a, b])
    assert [str(m.spec.address) for m in settled.served] == ["local/dns/aws"]
    assert settled.conflicts == (
        Conflict(
            "local/vpc/aws",
            ("sources[0] terraform-aws-vpc", "sources[1] team/terraform-aws-vpc"),
        ),
    )
    assert settled.problems() == [
        "module local/vpc/aws is claimed by sources[0] terraform-aws-vpc and by sources[1]"
        " team/terraform-aws-vpc: neither is served until one of them stops claiming it"
    ]


def test_two_repositories_of_one_source_claiming_one_address_serve_neither() -> None:
    a = found("sources[0]", ("local/vpc/aws", "terraform-aws-vpc"), ("LOCAL/vpc/aws", "monorepo"))
    settled = settle([], [a])
    assert settled.served == () and len(settled.conflicts) == 1


def test_an_explicit_entry_resolves_a_conflict() -> None:
    a = found("sources[0]", ("local/vpc/aws", "terraform-aws-vpc"))
    b = found("sources[1]", ("local/vpc/aws", "terraform-aws-vpc"))
    settled = settle([spec("local/vpc/aws")], [a, b])
    assert settled.conflicts == () and len(settled.shadowed) == 2


def test_a_removed_module_is_served_still_and_still_claims_its_address() -> None:
    gone = found("sources[0]", ("local/vpc/aws", "terraform-aws-vpc"), removed=True)
    settled = settle([], [gone])
    assert [m.removed for m in settled.served] == [True]
    rival = found("sources[1]", ("local/vpc/aws", "terraform-aws-vpc"))
    assert settle([], [gone, rival]).served == ()


def test_settling_the_same_inputs_gives_the_same_answer() -> None:
    a = found("sources[0]", ("local/vpc/aws", "terraform-aws-vpc"), ("local/dns/aws", "dns"))
    b = found("sources[1]", ("local/dns/aws", "dns"))
    assert settle([], [a, b]) == settle([], [a, b])
