"""Wrong tokens slowed per client address, through the real app over TLS: the gate's sleep is
replaced by one that records each delay (the schedule itself: tests/auth/test_wrong_tokens.py)."""

from __future__ import annotations

import hashlib
import ssl
from pathlib import Path

import httpx

from gitreg.auth.gate import Gate
from gitreg.catalog.load import load_catalog
from gitreg.catalog.model import TlsFiles
from gitreg.tlscert import TlsMaterial
from tests.support.servers import RegistryServer

RIGHT = "gitreg_Fv3nq0J2aPZb7Ykq1x8cTgWm4s6eHd9LrUoNiBlKjQE"


def test_wrong_tokens_are_answered_later_and_a_right_one_at_once(
    tls: TlsMaterial, tmp_path: Path
) -> None:
    digest = hashlib.sha256(RIGHT.encode()).hexdigest()
    (tmp_path / "registry.yaml").write_text(f"""
cache_dir: cache
mirror: {{read_through: false}}
auth:
  tokens: [{{name: ci, token_sha256: "{digest}", ops: true}}]
""")
    catalog = load_catalog(tmp_path / "registry.yaml")
    delays: list[float] = []

    async def recorded(delay: float) -> None:
        delays.append(delay)

    context = ssl.create_default_context(cafile=tls.ca_cert)
    with (
        RegistryServer(catalog, TlsFiles(tls.certfile, tls.keyfile)) as server,
        httpx.Client(base_url=server.url, timeout=10, verify=context) as client,
    ):
        gate = server.state.current.world.gate
        assert isinstance(gate, Gate)
        gate.wrong_tokens.sleep = recorded

        def status(token: str, path: str = "/v1/status") -> int:
            return client.get(path, headers={"Authorization": f"Bearer {token}"}).status_code

        assert [status(f"guess-{i}") for i in range(8)] == [401] * 8
        assert delays == [0.25, 0.5, 1.0]  # the first five cost nothing, then more each time
        assert status(RIGHT) == 200 and len(delays) == 3
        assert client.get("/v1/status").status_code == 401  # no token at all: no guess
