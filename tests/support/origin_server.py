"""A scripted origin registry over TLS on 127.0.0.1: real HTTP, answers a test can bend (a
hostile file name, a 500, a body too large, an outage), and a log of what was asked."""

from __future__ import annotations

import hashlib
import json
import ssl
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pgpy

from gitreg.process.tlscert import TlsMaterial
from tests.support.provider_releases import provider_zip


@dataclass
class Answer:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    delay: float = 0.0  # seconds before answering
    length: bool = True  # send Content-Length; without it, the body ends when the connection does
    headers: dict[str, str] = field(default_factory=dict)  # a redirect's Location, say
    stall: float = 0.0  # seconds the body stops halfway: an origin dripping its answer


@dataclass
class ScriptedOrigin:
    tls: TlsMaterial
    answers: dict[str, Answer] = field(default_factory=dict)
    asked: Counter[str] = field(default_factory=Counter)
    down: bool = False  # every request answers 503
    token: str | None = None  # when set, every request but /files/... needs it as a Bearer token
    authorization: dict[str, str | None] = field(default_factory=dict)  # path → what it carried

    def __post_init__(self) -> None:
        origin = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                origin.asked[self.path] += 1
                origin.authorization[self.path] = self.headers.get("Authorization")
                needs_token = origin.token and not self.path.startswith("/files/")
                if needs_token and self.headers.get("Authorization") != f"Bearer {origin.token}":
                    self._answer(Answer(401, b'{"errors": ["unauthorized"]}'))
                    return
                if answer := origin.answers.get(self.path):
                    time.sleep(answer.delay)
                answer = Answer(503, b"{}") if origin.down else origin.answers.get(self.path)
                self._answer(answer or Answer(404, b'{"errors": ["not found"]}'))

            def _answer(self, answer: Answer) -> None:
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.content_type)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                if answer.length:
                    self.send_header("Content-Length", str(len(answer.body)))
                else:
                    self.close_connection = True
                self.end_headers()
                if answer.stall:
                    half = len(answer.body) // 2
                    self.wfile.write(answer.body[:half])
                    self.wfile.flush()
                    time.sleep(answer.stall)
                    self.wfile.write(answer.body[half:])
                else:
                    self.wfile.write(answer.body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.tls.certfile, self.tls.keyfile)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.server.server_address[1]}/"

    def __enter__(self) -> ScriptedOrigin:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def json(self, path: str, body: object, status: int = 200) -> None:
        self.answers[path] = Answer(status, json.dumps(body).encode())

    def publish(
        self,
        key: pgpy.PGPKey,
        kind: str,
        versions: dict[str, tuple[str, ...]],
        filename: str = "terraform-provider-{kind}_{version}_{platform}.zip",
        files: ScriptedOrigin | None = None,
        namespace: str = "acme",
    ) -> dict[str, bytes]:
        """Serve discovery and providers.v1 for NAMESPACE/KIND, each version signed by `key`,
        its zips under `filename` (the origin's own naming: tests make it hostile); returns the
        zips by the name gitreg keeps them under. With `files`, that server holds the zips,
        SHA256SUMS and signatures (a download host apart from the registry's API)."""
        store = files or self
        at = files.url.rstrip("/") if files else ""
        self.json("/.well-known/terraform.json", {"providers.v1": "/v1/providers/"})
        base = f"/v1/providers/{namespace}/{kind}"
        listed, zips = [], {}
        for version, platforms in versions.items():
            sums, downloads = [], {}
            for platform in platforms:
                data = provider_zip(kind, version, platform)
                name = filename.format(kind=kind, version=version, platform=platform)
                zips[f"terraform-provider-{kind}_{version}_{platform}.zip"] = data
                store.answers[f"/files/{version}/{platform}.zip"] = Answer(
                    body=data, content_type="application/zip"
                )
                sums.append(f"{hashlib.sha256(data).hexdigest()}  {name}\n")
                downloads[platform] = (name, hashlib.sha256(data).hexdigest())
            text = "".join(sums).encode()
            store.answers[f"/files/{version}/SHA256SUMS"] = Answer(
                body=text, content_type="text/plain"
            )
            store.answers[f"/files/{version}/SHA256SUMS.sig"] = Answer(
                body=bytes(key.sign(text)), content_type="application/octet-stream"
            )
            for platform, (name, shasum) in downloads.items():
                os_name, arch = platform.split("_")
                self.json(
                    f"{base}/{version}/download/{os_name}/{arch}",
                    {
                        "protocols": ["5.0"],
                        "os": os_name,
                        "arch": arch,
                        "filename": name,
                        "download_url": f"{at}/files/{version}/{platform}.zip",
                        "shasums_url": f"{at}/files/{version}/SHA256SUMS",
                        "shasums_signature_url": f"{at}/files/{version}/SHA256SUMS.sig",
                        "shasum": shasum,
                        "signing_keys": {
                            "gpg_public_keys": [
                                {
                                    "key_id": key.fingerprint.keyid.upper(),
                                    "ascii_armor": str(key.pubkey),
                                }
                            ]
                        },
                    },
                )
            listed.append(
                {
                    "version": version,
                    "platforms": [
                        {"os": p.split("_")[0], "arch": p.split("_")[1]} for p in platforms
                    ],
                }
            )
        self.json(f"{base}/versions", {"versions": listed})
        return zips
