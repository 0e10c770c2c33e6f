"""Provider addresses, table-driven: what parses, what it folds to, and what the error says."""

from __future__ import annotations

import pytest

from gitreg.address import ProviderAddress, hostname_problem, provider_problem


@pytest.mark.parametrize(
    ("text", "hostname", "namespace", "provider_type"),
    [
        ("registry.terraform.io/hashicorp/aws", "registry.terraform.io", "hashicorp", "aws"),
        ("hashicorp/aws", None, "hashicorp", "aws"),
        ("Example.COM/Acme/Widget", "example.com", "acme", "widget"),  # folded, as Terraform does
        ("example.com/a/b", "example.com", "a", "b"),
        ("x/" + "n" * 64 + "/t", "x", "n" * 64, "t"),
        ("x/acme-corp/my-widget2", "x", "acme-corp", "my-widget2"),
        ("x/Acme_Corp/widget", "x", "acme_corp", "widget"),  # Terraform ≥ 1.16
        ("x/a__b-c_d/widget", "x", "a__b-c_d", "widget"),
        ("127.0.0.1/acme/widget", "127.0.0.1", "acme", "widget"),
        ("xn--bcher-kva.example/acme/widget", "xn--bcher-kva.example", "acme", "widget"),
    ],
)
def test_good_provider_addresses(
    text: str, hostname: str | None, namespace: str, provider_type: str
) -> None:
    address = ProviderAddress.parse(text)
    assert (address.hostname, address.namespace, address.type) == (
        hostname,
        namespace,
        provider_type,
    )
    assert str(address) == text.lower()
    assert ProviderAddress.parse(str(address)) == address


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("aws", "has 1 part separated by '/'"),
        ("a/b/c/d", "has 4 parts separated by '/'"),
        ("", "has 1 part"),
        ("example.com//aws", "provider namespace must not be empty"),
        ("example.com/acme/", "provider type must not be empty"),
        ("example.com/" + "n" * 65 + "/t", "is 65 characters long; at most 64 are allowed"),
        ("example.com/acme/my_type", "provider type 'my_type' may not contain '_'"),
        ("example.com/acme.corp/widget", "letters, digits, '-' and '_', not '.'"),
        ("example.com/_acme/widget", "must start and end with a letter or digit"),
        ("example.com/acme_/widget", "must start and end with a letter or digit"),
        ("example.com/acme--corp/widget", "may not contain '--'"),
        ("example.com/acme/wid--get", "may not contain '--'"),
        ("example.com/acme/wid.get", "not '.'"),
        ("example.com/acme/wïdget", "not 'ï'"),
        ("example.com/acme/%2e%2e", "not '%'"),
        ("example.com/-acme/widget", "must start and end with a letter or digit"),
        ("example.com/acme/widget-", "must start and end with a letter or digit"),
        ("example.com:8443/acme/widget", "give it without a port"),
        ("-example.com/acme/widget", "is not a provider's registry host name"),
        ("exa mple.com/acme/widget", "is not a provider's registry host name"),
        ("../acme/widget", "is not a provider's registry host name"),
    ],
)
def test_bad_provider_addresses(text: str, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        ProviderAddress.parse(text)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("value", "what", "message"),
    [
        ("widget", "type", None),
        ("Acme", "namespace", None),  # the catalog keeps a namespace's case
        ("Widget", "type", "provider type 'Widget' must be lowercase"),
        ("", "namespace", "provider namespace must not be empty"),
        ("a" * 64, "type", None),
        ("a b", "type", "not ' '"),
    ],
)
def test_provider_parts(value: str, what: str, message: str | None) -> None:
    problem = provider_problem(value, what)
    if message is None:
        assert problem is None
    else:
        assert problem is not None and message in problem


@pytest.mark.parametrize(
    ("value", "good"),
    [
        ("example.com", True),
        ("a", True),
        ("a" * 253, True),
        ("a" * 254, False),
        ("example.com.", False),
        ("Example.com", False),  # callers fold first
        ("example.com:443", False),
    ],
)
def test_hostnames(value: str, good: bool) -> None:
    assert (hostname_problem(value) is None) is good


def test_a_hostname_can_be_given_separately() -> None:
    address = ProviderAddress.of("Acme", "Widget", "Example.com")
    assert address == ProviderAddress("acme", "widget", "example.com")
    assert address.parts == ("example.com", "acme", "widget")
    assert ProviderAddress.of("acme", "widget").parts == ("acme", "widget")
