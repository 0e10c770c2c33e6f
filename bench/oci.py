"""What OCI costs beside modules.v1: requests/s of a manifest by tag (what OpenTofu asks first
for an `oci://` module, as a HEAD) against `versions` of the same server, in alternation; and
a cold module zip (the manifest's HEAD, which builds and hashes it, then the blob) against the
cold tarball of the same commit.

One `gitreg serve` process, plain HTTP on 127.0.0.1; wrk for the request rates. wrk cannot
measure HEADs (it waits for the body their Content-Length announces), so its requests are GETs
of the same manifest: the same handler and headers, and 600 bytes of body besides; a HEAD is
timed apart, by an httpx loop against the same loop's `versions`. The repository is
bench.archives', made anew (seeded), one commit and tag a round, so that every round's
archives are cold.

    python -m bench.oci [--rounds 5] [--concurrency 16] [--megabytes 20]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import httpx

from bench.archives import _repository
from bench.harness import free_port, git, gitreg_serve, server


def _rate(url: str, concurrency: int) -> float:
    out = subprocess.run(
        ["wrk", "-t2", f"-c{concurrency}", "-d3s", url],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    if "Non-2xx" in out:
        raise RuntimeError(f"errors under load:\n{out}")
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out)[1])  # type: ignore[index]


def _loop(client: httpx.Client, method: str, url: str, requests: int = 500) -> float:
    """Requests/s of one client asking `url` in a loop (a gauge, not a load)."""
    start = time.perf_counter()
    for _ in range(requests):
        client.request(method, url).raise_for_status()
    return requests / (time.perf_counter() - start)


def _seconds(action: object) -> float:
    start = time.perf_counter()
    action()  # type: ignore[operator]
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--megabytes", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo = root / "big"
        files = _repository(repo, args.megabytes * 1_000_000)
        for n in range(args.rounds):
            (repo / "round.txt").write_text(str(n))
            git(repo, "add", "--all")
            git(repo, "commit", "-qm", f"round {n}")
            git(repo, "tag", f"v1.0.{n}")
        (root / "registry.yaml").write_text(
            "cache_dir: cache\noci: {enabled: true}\n"
            "modules:\n  - {namespace: bench, name: big, system: generic, repo: big}\n"
        )
        port = free_port()
        versions = "/v1/modules/bench/big/generic/versions"
        with (
            server(gitreg_serve(root / "registry.yaml", port), port, versions) as base,
            httpx.Client(base_url=base, timeout=300) as client,
        ):
            tarballs, zips = [], []
            for n in range(args.rounds):
                version = f"1.0.{n}"

                def tarball(version: str = version) -> None:
                    download = client.get(f"/v1/modules/bench/big/generic/{version}/download")
                    client.get(download.json()["location"]).raise_for_status()

                def package(version: str = version) -> None:
                    answer = client.head(f"/v2/bench/big/generic/manifests/{version}")
                    digest = answer.raise_for_status().headers["docker-content-digest"]
                    manifest = client.get(f"/v2/bench/big/generic/manifests/{digest}").json()
                    layer = manifest["layers"][0]["digest"]
                    client.get(f"/v2/bench/big/generic/blobs/{layer}").raise_for_status()

                first, second = (tarball, package) if n % 2 == 0 else (package, tarball)
                timed = {first: _seconds(first), second: _seconds(second)}
                tarballs.append(timed[tarball])
                zips.append(timed[package])
            manifest = f"{base}/v2/bench/big/generic/manifests/1.0.0"
            pairs, heads = [], []
            for n in range(args.rounds):
                if n % 2 == 0:
                    plain = _rate(base + versions, args.concurrency)
                    oci = _rate(manifest, args.concurrency)
                else:
                    oci = _rate(manifest, args.concurrency)
                    plain = _rate(base + versions, args.concurrency)
                pairs.append((plain, oci))
                heads.append(
                    _loop(client, "HEAD", manifest) / _loop(client, "GET", base + versions)
                )
    print(f"{files} files, {args.megabytes} MB; median of {args.rounds} rounds")
    plain_rate = statistics.median(p for p, _ in pairs)
    oci_rate = statistics.median(o for _, o in pairs)
    ratio = statistics.median(o / p for p, o in pairs)
    print(f"versions GET       {plain_rate:9.0f} req/s")
    print(f"manifest GET, tag  {oci_rate:9.0f} req/s   ratio to versions {ratio:.2f}")
    print(
        f"manifest HEAD, tag one client in a loop: ratio to versions {statistics.median(heads):.2f}"
    )
    tar_ms, zip_ms = statistics.median(tarballs) * 1000, statistics.median(zips) * 1000
    ratios = statistics.median(z / t for t, z in zip(tarballs, zips, strict=True))
    print(f"cold tarball       {tar_ms:9.1f} ms")
    print(f"cold zip package   {zip_ms:9.1f} ms   ratio to the tarball {ratios:.2f}")


if __name__ == "__main__":
    main()
