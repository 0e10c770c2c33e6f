"""The provider network mirror: requests/s for index.json and VERSION.json against a bare
Starlette app under the same Hypercorn; and a read-through archive cold (fetched from an origin
gitreg on loopback, verified, cached) against warm (from the cache), in the same run.

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

from bench.harness import free_port, hypercorn_app, requests_per_second, server


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
    args = parser.parse_args()
    import pgpy
    from pgpy.constants import EllipticCurveOID, HashAlgorithm, KeyFlags, PubKeyAlgorithm

    from gitreg.tlscert import ensure_local_tls

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
        (root / "origin.yaml").write_text(
            "hostname: registry.bench.test\ncache_dir: origin-cache\nsigning: {keys: [bench.asc]}\n"
            "providers:\n  - {namespace: acme, type: widget, artifacts: releases}\nmirror: {read_through: false}\n"
        )
        (root / "mirror.yaml").write_text(
            "hostname: mirror.bench.test\ncache_dir: mirror-cache\nmodules: []\n"
            f"mirror: {{origins: {{origin.bench.test: 'https://127.0.0.1:{origin_port}/'}}, ca_file: {tls.ca_cert}}}\n"
        )
        serve = [sys.executable, "-m", "gitreg", "serve", "--log-level", "warning", "--config"]
        newest = versions[-1]
        index = "/v1/mirror/registry.bench.test/acme/widget/index.json"
        version_json = f"/v1/mirror/registry.bench.test/acme/widget/{newest}.json"
        rps = {}
        with server(hypercorn_app("bench.bare_app:app", bare_port), bare_port, index) as bare:
            rps["bare"] = (
                requests_per_second(bare + index),
                requests_per_second(bare + version_json),
            )
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
        cold, warm = [], []
        with server(
            origin_cmd, origin_port, "/healthz", scheme="https", verify=str(tls.ca_cert)
        ) as origin:
            local = f"http://127.0.0.1:{origin_port}"
            del local
            with server(mirror_cmd, mirror_port, "/healthz") as mirror:
                httpx.get(mirror + version_json.replace("registry.bench.test", "mirror.bench.test"))
                rps["gitreg"] = (
                    requests_per_second(
                        mirror + index.replace("registry.bench.test", "origin.bench.test")
                    ),
                    requests_per_second(
                        mirror + version_json.replace("registry.bench.test", "origin.bench.test")
                    ),
                )
                with httpx.Client(base_url=mirror, timeout=300) as client:
                    for version in versions:
                        url = f"/v1/mirror/origin.bench.test/acme/widget/terraform-provider-widget_{version}_linux_amd64.zip"
                        for samples in (cold, warm):
                            start = time.perf_counter()
                            client.get(url).raise_for_status()
                            samples.append(time.perf_counter() - start)
            del origin
    print(
        f"{'endpoint (read-through, cached)':<32} {'bare req/s':>11} {'gitreg req/s':>13} {'ratio':>6}"
    )
    for n, name in enumerate(("index.json", "VERSION.json")):
        print(
            f"{name:<32} {rps['bare'][n]:>11.0f} {rps['gitreg'][n]:>13.0f} {rps['gitreg'][n] / rps['bare'][n]:>6.2f}"
        )
    c, w = statistics.median(cold), statistics.median(warm)
    print(
        f"archive of {args.zip_mb} MB, median of {len(versions)}: cold {c * 1000:.0f} ms, warm {w * 1000:.0f} ms, warm/cold {w / c:.3f}"
    )


if __name__ == "__main__":
    main()
