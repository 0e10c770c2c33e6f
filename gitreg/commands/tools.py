"""Commands that need no running registry: `gitreg mirror sync` (the network mirror's cache
filled ahead of time), `gitreg cert` (a certificate from a local CA) and `gitreg token new`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from gitreg.auth.tokens import digest, new_token
from gitreg.catalog.auth import TOKEN_NAME
from gitreg.catalog.model import Catalog


def mirror(catalog: Catalog, args: argparse.Namespace) -> int:
    """`gitreg mirror sync PROVIDER...`: fill the network mirror's cache ahead of time."""
    # httpx and the mirror only here: `cert` and `token` start without them
    from gitreg.mirror.prefetch import parse_request, sync
    from gitreg.mirror.readthrough import ReadThrough
    from gitreg.providers.hashes import HashCache

    for text in args.providers:  # a mistyped request is refused before anything is fetched
        try:
            parse_request(text)
        except ValueError as exc:
            why = str(exc)
            where = "" if why.startswith(repr(text)) else f"{text}: "
            print(f"gitreg: {where}{why}", file=sys.stderr)
            return 2
    read_through = ReadThrough(
        catalog.mirror, catalog.cache_dir, HashCache(), own=catalog.server.hostname
    )
    try:
        failures = sync(read_through, args.providers, set(args.platform or ()))
    finally:
        read_through.close()
    print(f"{len(args.providers)} providers, {failures} failures")
    return 1 if failures else 0


def cert(args: argparse.Namespace) -> int:
    """`gitreg cert --host NAME ... --out DIR`: a certificate for `serve`, from a local CA."""
    from gitreg.process.tlscert import issue_certificate, parse_host

    try:
        hosts = tuple(dict.fromkeys(parse_host(h) for h in args.host))
    except ValueError as exc:
        print(f"gitreg: --host: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out).resolve()
    try:
        issued = issue_certificate(out, hosts)
    except ValueError as exc:
        print(f"gitreg: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"gitreg: --out {out}: cannot write in it: {exc.strerror or exc}", file=sys.stderr)
        return 1
    m = issued.material
    ca = "a new local CA" if issued.new_ca else "the local CA"
    print(
        f"""Made {m.certfile} and {m.keyfile} for {", ".join(hosts)}
(valid until {issued.not_after:%Y-%m-%d}), signed by {ca} {m.ca_cert}.
The CA's key {m.ca_key} is readable by you only: whoever holds it can make certificates
that everyone trusting the CA accepts. Keep it there: `gitreg cert --out {out}` reuses it.

Serve with it: in registry.yaml (or with --certfile and --keyfile),

    tls: {{certfile: {m.certfile}, keyfile: {m.keyfile}}}

Trust the CA where Terraform runs. On Linux, through the environment:

    export SSL_CERT_FILE={m.ca_cert}

(this replaces the system's CA list for that shell: to reach public registries too, give a
bundle holding both). Terraform on macOS and Windows ignores SSL_CERT_FILE; add the CA to the
system's trust store instead:

    security add-trusted-cert -r trustRoot -k ~/Library/Keychains/login.keychain-db {m.ca_cert}
    certutil -user -addstore Root {m.ca_cert}
"""
    )
    return 0


def token(args: argparse.Namespace) -> int:
    if not args.name:
        print("gitreg: token new: give the token's NAME", file=sys.stderr)
        return 2
    if not TOKEN_NAME.fullmatch(args.name):
        print(
            f"gitreg: token name {args.name!r}: must be 1 to 64 letters, digits, '.', '_' or '-'",
            file=sys.stderr,
        )
        return 2
    value = new_token()
    read = ", ".join(json.dumps(r) for r in args.read)
    print(
        f"token: {value}\n"
        "\n"
        "# Give the token to its user; paste this under auth.tokens in registry.yaml\n"
        "# (it holds only the token's SHA-256, so registry.yaml can be shared):\n"
        f"  - name: {args.name}\n"
        f'    token_sha256: "{digest(value).hex()}"\n'
        f"    read: [{read}]"
    )
    return 0
