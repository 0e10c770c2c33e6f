"""`publish_when` per module, per source and per namespace: which one a module gets, and bad
entries refused with the key path and the line."""

from __future__ import annotations

from pathlib import Path

from gitreg.catalog.specs import PublishWhen
from tests.conftest import WriteCatalog
from tests.support.refused_catalogs import assert_refused, refusal


def test_a_module_s_own_then_its_namespace_s(write_catalog: WriteCatalog) -> None:
    catalog = write_catalog(
        """
        publish_when:
          - {namespaces: [infra, "team-*"], min_age: 2d}
        modules:
          - {namespace: infra, name: vpc, system: aws, repo: https://git.example.com/a.git,
             publish_when: {min_age: 0s}}
          - {namespace: Team-A, name: dns, system: aws, repo: https://git.example.com/b.git}
          - {namespace: other, name: dns, system: aws, repo: https://git.example.com/c.git}
          - {namespace: other, name: lb, system: aws, repo: https://git.example.com/d.git,
             publish_when: {min_age: 12h}}
        """
    )
    vpc, dns, other, lb = catalog.modules
    assert vpc.publish_when == PublishWhen(0.0)  # its own 0 turns the namespace's off
    assert dns.publish_when == PublishWhen(2 * 86400.0)
    assert other.publish_when is None
    assert lb.publish_when == PublishWhen(12 * 3600.0)


def test_a_source_s_for_every_module_it_finds(write_catalog: WriteCatalog, tmp_path: Path) -> None:
    (tmp_path / "repos").mkdir()
    catalog = write_catalog(
        """
        sources:
          - folder: {path: repos, namespace: local, publish_when: {min_age: 1h}}
        """
    )
    assert catalog.sources[0].publish_when == PublishWhen(3600.0)


def test_bad_entries_are_refused_with_their_line(tmp_path: Path) -> None:
    error = refusal(
        tmp_path,
        """\
        modules:
          - namespace: infra
            name: vpc
            system: aws
            repo: https://git.example.com/a.git
            publish_when: {min_age: 60}
          - namespace: infra
            name: dns
            system: aws
            repo: https://git.example.com/b.git
            publish_when: {checks: [ci]}
        publish_when:
          - {namespaces: [infra]}
        """,
    )
    assert_refused(error, "modules[0].publish_when.min_age", 7, "60 has no unit")
    assert_refused(error, "modules[1].publish_when.checks", 12, "unknown key")
    assert_refused(error, "publish_when[0]", 14, "give min_age")
