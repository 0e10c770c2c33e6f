"""Deliveries: URLs as they may be shown, and refusals logged at a bounded rate."""

from __future__ import annotations

import logging

import pytest

from gitreg.freshness.deliveries import Delivery, DeliveryLog, shown_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://github.com/org/repo.git", "https://github.com/org/repo.git"),
        (
            "https://gitlab-ci-token:glcbt-abc@gitlab.example/g/p.git",
            "https://***@gitlab.example/g/p.git",
        ),
        ("https://ghp_abcdef@github.com/org/repo", "https://***@github.com/org/repo"),
        ("ssh://git@example.com:7999/prj/repo.git", "ssh://git@example.com:7999/prj/repo.git"),
        ("ssh://git:hunter2@example.com/repo.git", "ssh://git:***@example.com/repo.git"),
        ("git@github.com:org/repo.git", "git@github.com:org/repo.git"),
        ("  https://example.com/org/repo  ", "https://example.com/org/repo"),
    ],
)
def test_urls_are_shown_without_credentials(url: str, shown: str) -> None:
    assert shown_url(url) == shown


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def refusals(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]


def test_refusals_are_logged_at_most_once_per_interval_with_a_count(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = FakeClock()
    deliveries = DeliveryLog(interval=10.0, clock=clock)
    refused = Delivery("github", "unauthorized", "push", ("https://x.test/o/r",), why="no match")
    for _ in range(5):
        deliveries.record(refused)
    assert len(refusals(caplog)) == 1 and "more like it" not in refusals(caplog)[0]
    deliveries.record(Delivery("gitlab", "unauthorized", "Push Hook", (), why="no match"))
    deliveries.record(Delivery("github", "bad_request", "push", why="the body is not JSON"))
    assert len(refusals(caplog)) == 3  # another forge, another outcome: lines of their own
    clock.now += 10.0
    deliveries.record(refused)
    assert refusals(caplog)[-1].endswith("(4 more like it in the last 10 s)")


def test_what_is_logged_for_each_outcome(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    deliveries = DeliveryLog()
    named = ("https://x.test/o/r\nforged line",)
    for outcome in ("accepted", "ignored_event", "no_repository"):
        for _ in range(3):  # a sender that holds a secret is never held back
            deliveries.record(Delivery("gitea", outcome, "push", named))
    levels = [r.levelname for r in caplog.records]
    assert levels == ["INFO"] * 6 + ["WARNING"] * 3
    assert all("\n" not in r.getMessage() for r in caplog.records)
    assert "'https://x.test/o/r\\nforged line'" in caplog.records[-1].getMessage()
