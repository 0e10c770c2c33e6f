"""The provider network mirror: requests/s for index.json and VERSION.json, of a hosted provider
and of one read through from an origin, against a bare Starlette app under the same Hypercorn;
and a read-through archive cold (fetched from an origin gitreg on loopback over TLS, verified,
cached) against warm (from the cache), in the same run.

    python -m bench.mirror [--zip-mb 20]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import statistics
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import httpx

from bench.harness import free_port, hypercorn_app, paired_requests_per_second, server


def _release(folder: Path, version: str, payload: bytes, signer: object) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for platform in ("linux_amd64", "darwin_arm64"):
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as z:
            z.writestr(f"terraform-provider-widget_v{version}", payload)
        name = f"terraform-provider-widget_{version}_{platform}.zip"
        (folder / name).write_bytes(out.getvalue())
        lines.append(f"{hashlib.sha256(out.getvalue()).hexdigest()}  {name}\n")
    sums = folder / f"terraform-provider-widget_{version}_SHA256SUMS"
    sums.write_text("".join(lines))
    (folder / f"{sums.name}.sig").write_bytes(bytes(signer.sign(sums.read_bytes())))  # type: ignore[attr-defined]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--zip-mb", type=int, default=20)
    parser.add_argument("--versions", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    import pgpy
    from pgpy.constants import EllipticCurveOID, HashAlgorithm, KeyFlags, PubKeyAlgorithm

    from gitreg.process.tlscert import ensure_local_tls

    key = pgpy.PGPKey.new(PubKeyAlgorithm.EdDSA, EllipticCurveOID.Ed25519)
    key.add_uid(pgpy.PGPUID.new("bench"), usage={KeyFlags.Sign}, hashes=[HashAlgorithm.SHA256])
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "bench.asc").write_text(str(key))
        tls = ensure_local_tls(root / "tls")
        versions = [f"1.{n}.0" for n in range(1, args.versions + 1)]
        for version in versions:
            _release(root / "releases" / version, version, os.urandom(args.zip_mb << 20), key)
        origin_port, mirror_port, bare_port = free_port(), free_port(), free_port()
        hosted = "signing: {keys: [bench.asc]}\nproviders:\n  - {namespace: acme, type: widget, artifacts: releases}\n"
        (root / "origin.yaml").write_text(
            f"hostname: registry.bench.test\ncache_dir: origin-cache\n{hosted}mirror: {{read_through: false}}\n"
        )
        # One instance serves both kinds: widget hosted here, and widget read through from the origin.
        (root / "mirror.yaml").write_text(
            f"hostname: mirror.bench.test\ncache_dir: mirror-cache\n{hosted}"
            f"mirror: {{read_through: true, origins: {{origin.bench.test: 'https://127.0.0.1:{origin_port}/'}}, ca_file: {tls.ca_cert}}}\n"
        )
        serve = [sys.executable, "-m", "gitreg", "serve", "--log-level", "warning", "--config"]
        newest = versions[-1]
        paths = {
            f"{source} {file}": f"/v1/mirror/{host}/acme/widget/{file}"
            for source, host in (
                ("hosted", "mirror.bench.test"),
                ("read-through", "origin.bench.test"),
            )
            for file in ("index.json", f"{newest}.json")
        }
        rps: dict[str, tuple[float, float, float]] = {}
        origin_cmd = [
            *serve,
            str(root / "origin.yaml"),
            "--listen",
            f"127.0.0.1:{origin_port}",
            "--certfile",
            str(tls.certfile),
            "--keyfile",
            str(tls.keyfile),
        ]
        mirror_cmd = [*serve, str(root / "mirror.yaml"), "--listen", f"127.0.0.1:{mirror_port}"]
        cold: list[float] = []
        warm: list[float] = []
        with (
            server(origin_cmd, origin_port, "/healthz", scheme="https", verify=str(tls.ca_cert)),
            server(mirror_cmd, mirror_port, "/healthz") as mirror,
            server(
                hypercorn_app("bench.bare_app:app", bare_port),
                bare_port,
                "/v1/mirror/h/n/t/index.json",
            ) as bare,
        ):
            for path in paths.values():
                httpx.get(mirror + path, timeout=60).raise_for_status()  # the release verified once
            for name, path in paths.items():
                rps[name] = paired_requests_per_second(bare + path, mirror + path, args.rounds)
            with httpx.Client(base_url=mirror, timeout=300) as client:
                for version in versions:
                    url = f"/v1/mirror/origin.bench.test/acme/widget/terraform-provider-widget_{version}_linux_amd64.zip"
                    for samples in (cold, warm):
                        start = time.perf_counter()
                        client.get(url).raise_for_status()
                        samples.append(time.perf_counter() - start)
    print(
        f"{'endpoint (median of ' + str(args.rounds) + ' rounds)':<32} {'bare req/s':>11} {'gitreg req/s':>13} {'ratio':>6}"
    )
    for name, (bare_n, gitreg_n, ratio) in rps.items():
        print(f"{name:<32} {bare_n:>11.0f} {gitreg_n:>13.0f} {ratio:>6.2f}")
    c, w = statistics.median(cold), statistics.median(warm)
    print(
        f"read-through archive of {args.zip_mb} MB, median of {len(versions)}: "
        f"cold {c * 1000:.0f} ms, warm {w * 1000:.0f} ms, cold/warm {c / w:.1f}"
    )


if __name__ == "__main__":
    main()
