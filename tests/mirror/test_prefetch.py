"""`gitreg mirror sync` requests, table-driven."""

from __future__ import annotations

import pytest

from gitreg.address import ProviderAddress
from gitreg.mirror.prefetch import parse_request


@pytest.mark.parametrize(
    ("text", "address", "versions"),
    [
        ("registry.terraform.io/hashicorp/aws", "registry.terraform.io/hashicorp/aws", []),
        (" Example.com/Acme/Widget@v1.2.0 ", "example.com/acme/widget", ["1.2.0"]),
        (
            "example.com/acme/widget@1.0.0,V2.0.0-rc.1",
            "example.com/acme/widget",
            ["1.0.0", "2.0.0-rc.1"],
        ),
    ],
)
def test_good_requests(text: str, address: str, versions: list[str]) -> None:
    assert parse_request(text) == (ProviderAddress.parse(address), versions)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("hashicorp/aws", "name the origin too"),
        ("aws", "has 1 part"),
        ("example.com/acme/my_widget", "may not contain '_'"),
        ("example.com:8443/acme/widget", "without a port"),
        ("example.com/acme/widget@1.2", "1.2"),
    ],
)
def test_bad_requests(text: str, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_request(text)
    assert message in str(caught.value)
