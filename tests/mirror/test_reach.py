"""Which URLs read-through may ask, and which addresses it connects to: a table of URLs, and
the connection check against a real listener on 127.0.0.1 that counts what reaches it."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpcore
import pytest

from gitreg.address import ProviderAddress
from gitreg.catalog.mirror_settings import MirrorSettings
from gitreg.errors import OriginRefused, OriginUnavailable
from gitreg.mirror.origin import OriginPackage, OriginRegistry
from gitreg.mirror.reach import PublicAddresses, Reach, is_public
from gitreg.mirror.readthrough import ReadThrough
from gitreg.process.tlscert import TlsMaterial
from gitreg.providers.hashes import HashCache
from tests.support.listeners import SilentListener, on_port_443
from tests.support.servers import wait_until

TERRAFORM, PRIVATE, LISTED = "registry.terraform.io", "private.example.test", "listed.example.test"
FILES = "files.example.test"  # an origin download_hosts lists too: it serves others' packages
SETTINGS = MirrorSettings(
    origins=(
        (TERRAFORM, "https://proxy.internal/terraform/"),
        (PRIVATE, "https://10.1.2.3:8443/"),
        (LISTED, "https://listed.example.test/"),
        (FILES, "https://10.9.9.9:8443/"),
    ),
    download_hosts=("releases.hashicorp.com", FILES),
)
REACH = Reach.of(SETTINGS)


@pytest.mark.parametrize(
    ("origin", "url", "download", "refused"),
    [
        (TERRAFORM, "https://proxy.internal/terraform/.well-known/terraform.json", False, None),
        (TERRAFORM, "https://registry.terraform.io/v1/providers/", False, None),  # its own name
        ("registry.opentofu.org", "https://registry.opentofu.org/v1/providers/", False, None),
        (PRIVATE, "https://10.1.2.3:8443/v1/providers/", False, None),
        (PRIVATE, "https://private.example.test/v1/providers/", False, None),
        (LISTED, "https://listed.example.test:443/x", False, None),
        (TERRAFORM, "https://releases.hashicorp.com/x/SHA256SUMS", True, None),
        (PRIVATE, "https://10.1.2.3:8443/files/x.zip", True, None),  # an origin serves its own
        (PRIVATE, "https://10.9.9.9:8443/files/x.zip", True, None),  # a listed download host's
        (PRIVATE, "https://files.example.test/x.zip", True, None),
        (TERRAFORM, "https://releases.hashicorp.com/x/", False, "is not registry.terraform.io's"),
        (TERRAFORM, "https://github.com/a/b/x.zip", True, "is neither registry.terraform.io's"),
        # Another origin's host and port, for its API or a download: never.
        (TERRAFORM, "https://10.1.2.3:8443/v1/providers/", False, "10.1.2.3:8443 is not regis"),
        (TERRAFORM, "https://10.1.2.3:8443/internal/SHA256SUMS", True, "10.1.2.3:8443 is neith"),
        (TERRAFORM, "https://private.example.test/x", True, "private.example.test:443 is neith"),
        (PRIVATE, "https://proxy.internal/terraform/", False, "proxy.internal:443 is not priv"),
        (PRIVATE, "https://registry.opentofu.org/v1/providers/", False, "is not private.exa"),
        (LISTED, "https://10.9.9.9:8443/v1/providers/", False, "10.9.9.9:8443 is not listed"),
        (PRIVATE, "https://10.1.2.3/v1/providers/", False, "10.1.2.3:443 is not private"),
        (PRIVATE, "https://10.1.2.3:8444/v1/providers/", False, "10.1.2.3:8444 is not private"),
        (TERRAFORM, "https://127.0.0.1/", False, "127.0.0.1:443 is not registry"),
        (TERRAFORM, "https://localhost/", False, "localhost:443 is not registry"),
        (TERRAFORM, "https://registry.terraform.io:8443/", False, "registry.terraform.io:8443 is"),
        (TERRAFORM, "http://registry.terraform.io/v1/providers/", False, "https only"),
        (TERRAFORM, "http://releases.hashicorp.com/x.zip", True, "https only"),
        (TERRAFORM, "ftp://registry.terraform.io/", False, "https only"),
        (TERRAFORM, "https://user:pw@registry.terraform.io/", False, "no credentials in a URL"),
        (TERRAFORM, "https://registry.terraform.io.evil.example/", False, "is not registry"),
        ("made-up.example.test", "https://made-up.example.test/", False, "is not an origin"),
    ],
)
def test_which_urls_work_for_an_origin_may_ask(
    origin: str, url: str, download: bool, refused: str | None
) -> None:
    if refused is None:
        REACH.check(origin, url, download)
        return
    with pytest.raises(OriginRefused, match=refused) as raised:
        REACH.check(origin, url, download)
    assert "pw" not in str(raised.value)


@pytest.mark.parametrize(
    ("origin", "url", "owns"),
    [
        (TERRAFORM, "https://proxy.internal/terraform/v1/providers/", True),
        (TERRAFORM, "https://proxy.internal:443/other/", True),  # the host and port are its own
        (TERRAFORM, "https://registry.terraform.io/v1/providers/", True),
        (TERRAFORM, "https://proxy.internal:8443/terraform/", False),
        (TERRAFORM, "https://releases.hashicorp.com/x.zip", False),  # a download host
        (TERRAFORM, "https://10.1.2.3:8443/v1/providers/", False),  # another origin's
        (PRIVATE, "https://10.9.9.9:8443/files/x.zip", False),  # a download host, named
        (FILES, "https://10.9.9.9:8443/files/x.zip", True),  # ... for its own work
        ("made-up.example.test", "https://made-up.example.test/", False),
        (TERRAFORM, "https://[::1/", False),  # not a URL
    ],
)
def test_where_an_origins_token_may_go(origin: str, url: str, owns: bool) -> None:
    assert REACH.owns(origin, url) is owns


def test_the_origins_a_request_may_name() -> None:
    assert sorted(REACH.origins) == [
        FILES,
        LISTED,
        PRIVATE,
        "registry.opentofu.org",
        TERRAFORM,
    ]
    assert not REACH.allows("127.0.0.1") and not REACH.allows("made-up.example.test")
    # Named hosts (keys and URLs) may be private; the public defaults may not.
    assert {PRIVATE, "10.1.2.3", "proxy.internal"} <= REACH.named
    assert "registry.opentofu.org" not in REACH.named
    assert "releases.hashicorp.com" not in REACH.named


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("8.8.8.8", True),
        ("2606:4700:4700::1111", True),
        ("127.0.0.1", False),
        ("10.0.0.1", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("169.254.169.254", False),  # a cloud's metadata service
        ("100.64.0.1", False),  # carrier-grade NAT
        ("0.0.0.0", False),
        ("224.0.0.1", False),
        ("239.255.255.250", False),
        ("240.0.0.1", False),
        ("255.255.255.255", False),
        ("::1", False),
        ("::", False),
        ("fe80::1%lo", False),
        ("fc00::1", False),
        ("fec0::1", False),
        ("ff02::1", False),
        ("ff0e::1", False),
        ("::ffff:127.0.0.1", False),
        ("::ffff:10.0.0.1", False),
    ],
)
def test_public_addresses(address: str, public: bool) -> None:
    assert is_public(address) is public


def test_a_name_that_resolves_to_a_private_address_gets_no_connection() -> None:
    with SilentListener() as listener:
        backend = PublicAddresses(named=())
        for host in ("localhost", "127.0.0.1"):
            with pytest.raises(OriginRefused, match="not a public address"):
                backend.connect_tcp(host, listener.port, timeout=5)
        assert listener.accepted == 0


def test_a_host_named_in_registry_yaml_is_reached_at_its_private_address() -> None:
    with SilentListener() as listener:
        stream = PublicAddresses(named=("127.0.0.1",)).connect_tcp(
            "127.0.0.1", listener.port, timeout=5
        )
        stream.close()
        wait_until(lambda: listener.accepted == 1, 10, "the connection")
        with SilentListener() as other:
            port = other.port
        with pytest.raises(httpcore.ConnectError):  # nothing listens there now
            PublicAddresses(named=("127.0.0.1",)).connect_tcp("127.0.0.1", port, timeout=5)
    assert listener.accepted == 1


def test_a_download_host_at_a_private_address_is_refused_when_connecting(tmp_path: Path) -> None:
    # Allowed by name (a hand-made setting: registry.yaml refuses a single label), refused by
    # the address it resolves to, before anything is sent.
    registry = OriginRegistry(MirrorSettings(download_hosts=("localhost",)))
    package = OriginPackage("linux", "amd64", "x.zip", "https://localhost/x.zip", "zh:0")
    address = ProviderAddress.parse("registry.terraform.io/hashicorp/null")
    with on_port_443() as listener:
        with pytest.raises(OriginRefused, match=r"localhost resolves to .*not a public address"):
            registry.download(address, package, tmp_path / "x.zip")
        assert not registry.is_down("localhost")  # a refusal, not an outage
    registry.close()
    assert listener.accepted == 0 and not list(tmp_path.iterdir())


def test_closing_read_through_ends_the_work_stalled_on_an_origin(
    tls: TlsMaterial, tmp_path: Path
) -> None:
    """At shutdown (or when a reload retires it), work reading from an origin that never answers
    ends at once rather than after its 20 s read timeout: the process exits when it should."""
    with SilentListener(tls) as stalled:
        settings = MirrorSettings(
            read_through=True,
            origins=(("origin.example.test", f"https://127.0.0.1:{stalled.port}/"),),
            ca_file=tls.ca_cert,
        )
        read_through = ReadThrough(settings, tmp_path, HashCache())
        address = ProviderAddress.parse("origin.example.test/acme/widget")
        failures: list[Exception] = []

        def ask() -> None:
            try:
                read_through.origin.versions(address)
            except Exception as exc:  # what the stalled thread ends with, checked below
                failures.append(exc)

        worker = threading.Thread(target=ask)
        worker.start()
        wait_until(lambda: stalled.accepted == 1, 10, "the connection")
        time.sleep(0.2)  # the request is sent: the worker waits for an answer
        read_through.close()
        worker.join(timeout=10)
        assert not worker.is_alive()
    assert [type(f) for f in failures] == [OriginUnavailable]
