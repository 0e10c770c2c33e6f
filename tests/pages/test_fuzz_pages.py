"""No page request gets a 5xx, whatever its path, query or cookie: property-based, on the app."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitreg.auth.sessions import COOKIE
from gitreg.catalog.load import load_catalog
from tests.support.asgi import in_process
from tests.support.catalogue import write_catalogue
from tests.support.state import serving_state

_segment = st.one_of(
    st.sampled_from(
        [
            "open",
            "secret",
            "vpc",
            "aws",
            "evil",
            "generic",
            "widget",
            "1.2.0",
            "v1.3.0",
            "..",
            "%2F",
            "%00",
            "AWS",
        ]
    ),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=40).map(
        lambda s: quote(s, safe="")
    ),
)
_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=300)


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.AsyncClient]:
    root = tmp_path_factory.mktemp("fuzz-pages")
    catalog = load_catalog(write_catalogue(root))
    state = serving_state(catalog)
    app = in_process(state)
    yield httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gitreg.test")
    state.docs.close()


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    prefix=st.sampled_from(["/modules", "/providers", "/static", "/signin", ""]),
    segments=st.lists(_segment, max_size=5),
    query=_text,
    cookie=st.one_of(
        st.none(),
        st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), max_size=200),
    ),
    method=st.sampled_from(["GET", "HEAD", "POST"]),
    # The home page's other parameters (and some it does not take), as pagers and people write
    # them: numbers, near-numbers, namespaces, anything.
    paging=st.lists(
        st.tuples(
            st.sampled_from(["page", "namespace", "q", "pgae", "PAGE"]),
            st.one_of(
                st.sampled_from(["1", "2", "0", "-1", "99999999", "1e3", "open", "secret"]),
                st.integers(min_value=-(10**12), max_value=10**12).map(str),
                _text,
            ),
        ),
        max_size=3,
    ),
)
def test_no_page_request_gets_a_server_error(
    client: httpx.AsyncClient,
    prefix: str,
    segments: list[str],
    query: str,
    cookie: str | None,
    method: str,
    paging: list[tuple[str, str]],
) -> None:
    path = prefix + "/" + "/".join(segments)
    headers = {"Cookie": f"{COOKIE}={cookie}"} if cookie is not None else {}
    if method == "POST":
        headers["Origin"] = "http://gitreg.test"
    params = httpx.QueryParams([("q", query), *paging])
    response = asyncio.run(
        client.request(method, path, params=params, headers=headers, content=query.encode())
    )
    assert response.status_code < 500, (method, path, query, cookie, response.text)
