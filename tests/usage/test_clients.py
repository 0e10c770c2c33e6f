"""The client an install is counted under, from its User-Agent: a table of what clients send."""

from __future__ import annotations

import pytest

from gitreg.usage.clients import client_of


@pytest.mark.parametrize(
    ("user_agent", "client"),
    [
        ("Terraform/1.11.4", ("terraform", "1.11.4")),
        ("Terraform/1.11.4 (+https://www.terraform.io)", ("terraform", "1.11.4")),
        (
            "HashiCorp Terraform/1.6.0-beta2 (+https://www.terraform.io)",
            ("terraform", "1.6.0-beta2"),
        ),
        ("OpenTofu/1.10.0", ("opentofu", "1.10.0")),
        ("OpenTofu/1.9 go-getter", ("opentofu", "1.9")),
        ("Go-http-client/1.1", ("other", "")),
        ("curl/8.5.0", ("other", "")),
        ("", ("other", "")),
        (None, ("other", "")),
        ("NotTerraform/1.0.0", ("other", "")),
        ("Terraform/", ("other", "")),
        ("x" * 300 + " Terraform/1.11.4", ("other", "")),  # past what is read
        ("Terraform/1.11.4-" + "a" * 100, ("terraform", "1.11.4-" + "a" * 20)),  # bounded
    ],
)
def test_the_client_of_a_user_agent(user_agent: str | None, client: tuple[str, str]) -> None:
    assert client_of(user_agent) == client
