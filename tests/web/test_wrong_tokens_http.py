"""Wrong tokens slowed per client address, through the real app over TLS: the gate's sleep is
replaced by one that records each delay (the schedule itself: tests/auth/test_wrong_tokens.py)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from gitreg.auth.gate import Gate
from gitreg.catalog.load import load_catalog
from gitreg.process.tlscert import TlsMaterial
from tests.support.tls_clients import served_over_tls

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

    with served_over_tls(catalog, tls) as (server, client):
        gate = server.state.current.world.gate
        assert isinstance(gate, Gate)
        gate.wrong_tokens.sleep = recorded

        def status(token: str, path: str = "/v1/status") -> int:
            return client.get(path, headers={"Authorization": f"Bearer {token}"}).status_code

        assert [status(f"guess-{i}") for i in range(8)] == [401] * 8
        assert delays == [0.25, 0.5, 1.0]  # the first five cost nothing, then more each time
        assert status(RIGHT) == 200 and len(delays) == 3
        assert client.get("/v1/status").status_code == 401  # no token at all: no guess
