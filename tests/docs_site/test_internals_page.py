"""docs/how-it-works/internals.md says what each thing in cache_dir is: a private registry with
modules and hosted providers is served over real HTTPS, asked what clients and people ask (a
module's versions, download and archive, a provider's files, a page, a sign-in and sign-out),
and everything it wrote at the top of cache_dir must have its row on the page."""

from __future__ import annotations

from pathlib import Path

from gitreg.process.tlscert import TlsMaterial
from tests.docs_site.site_pages import first_cells, page
from tests.support.private_registry import READER, WIDGET_ZIP, bearer, private_registry


def test_everything_in_cache_dir_is_on_the_page(tmp_path: Path, tls: TlsMaterial) -> None:
    with private_registry(tmp_path, tls, url_keys="") as served:
        client, token = served.client, bearer(READER)
        module = "/v1/modules/secret/single/generic"
        assert client.get(f"{module}/versions", headers=token).status_code == 200
        location = client.get(f"{module}/1.0.0/download", headers=token).json()["location"]
        assert client.get(location).status_code == 200, "the archive, by its signed URL"
        provider = "/v1/providers/secret/widget/1.0.0/download/linux/amd64"
        files = client.get(provider, headers=token).json()
        assert files["filename"] == WIDGET_ZIP
        assert client.get(files["shasums_signature_url"]).status_code == 200
        assert client.get("/modules/open/single/generic").status_code == 200
        own = {"Origin": str(client.base_url).rstrip("/")}
        signed_in = client.post("/signin", data={"token": READER}, headers=own)
        assert signed_in.status_code == 303, signed_in.text
        assert client.post("/signout", headers=own).status_code == 303
    written = {
        f"{entry.name}/" if entry.is_dir() else entry.name
        for entry in (tmp_path / "cache").iterdir()
    }
    assert {"git/", "archives/", "auth/", "signatures/"} <= written
    rows = first_cells(page("how-it-works/internals.md"), "path")
    missing = sorted(written - rows.keys())
    assert not missing, f"what gitreg wrote in cache_dir, not on the page: {missing}"
