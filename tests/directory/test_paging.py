"""Pages cut from runs by their lengths: windows across runs, numbered pages at both ends."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from gitreg.directory.paging import Page, window
from gitreg.directory.view import directory_view
from tests.directory.conftest import Served
from tests.directory.test_view import no_description

RUNS: list[Sequence[int]] = [range(0, 3), (), (10, 11), range(20, 25)]


@pytest.mark.parametrize(
    ("offset", "limit", "page"),
    [
        (0, 4, [0, 1, 2, 10]),  # across an empty run
        (2, 3, [2, 10, 11]),
        (3, 100, [10, 11, 20, 21, 22, 23, 24]),
        (9, 5, [24]),
        (10, 5, []),  # at the end
        (50, 5, []),  # past it
        (0, 1, [0]),
    ],
)
def test_windows_across_runs(offset: int, limit: int, page: list[int]) -> None:
    assert window(RUNS, offset, limit) == (page, 10)


@pytest.mark.parametrize(
    ("number", "total", "exists", "previous", "following", "span"),
    [
        (1, 0, True, None, None, (0, 0)),  # an empty list has its one page, empty
        (2, 0, False, 1, None, (100, 0)),
        (1, 100, True, None, None, (0, 100)),
        (1, 101, True, None, 2, (0, 100)),
        (2, 101, True, 1, None, (100, 101)),
        (3, 101, False, 2, None, (200, 101)),
        (0, 101, False, None, 1, (-100, 0)),
    ],
)
def test_numbered_pages(
    number: int,
    total: int,
    exists: bool,
    previous: int | None,
    following: int | None,
    span: tuple[int, int],
) -> None:
    page = Page(number, 100, total)
    assert page.exists is exists
    assert (page.previous, page.next) == (previous, following)
    assert (page.start, page.stop) == span


def test_runs_by_namespace_name_and_system(served: Served) -> None:
    view = directory_view(served.sync.snapshot, served.providers, lambda ns: True, no_description)

    def addresses(namespace: str | None, name: str | None, system: str | None) -> list[str]:
        runs = view.module_runs(namespace, name, system)
        return [m.address for run in runs for m in view.described(run)]

    assert addresses(None, None, None) == [m.address for m in view.modules]
    assert addresses("INFRA", None, None) == [
        "infra/dns/aws",
        "infra/naming/generic",
        "Infra/vpc/aws",
    ]
    assert addresses(None, None, "aws") == ["infra/dns/aws", "Infra/vpc/aws"]
    assert addresses("infra", "vpc", None) == ["Infra/vpc/aws"]
    assert addresses("infra", "vpc", "generic") == []
    assert addresses("acme", None, None) == []  # providers only
    assert addresses("nothing", None, None) == []
    assert [(s.namespace, s.size) for s in view.shelves] == [
        ("acme", 1),
        ("apps", 1),
        ("infra", 3),
    ]


def test_a_reader_opened_to_some_modules_of_a_namespace(served: Served) -> None:
    view = directory_view(
        served.sync.snapshot,
        served.providers,
        lambda ns: False,
        no_description,
        lambda spec: getattr(spec, "path", None) in ("modules/vpc", "modules/dns"),
    )
    assert [(s.namespace, tuple(s.positions) != ()) for s in view.shelves] == [("infra", True)]
    runs = view.module_runs(None, None, "aws")
    assert [m.address for run in runs for m in view.described(run)] == [
        "infra/dns/aws",
        "Infra/vpc/aws",
    ]
    assert view.module_runs("infra", "naming", None) == []
