"""docs/reference/commands.md has a section for every command the real command line parses, and
in it every option and argument that command takes; and no option a command does not take."""

from __future__ import annotations

import argparse
import re

from gitreg.commands.cli import _parser
from tests.docs_site.site_pages import first_cells, page, sections

PAGE = page("reference/commands.md")


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = _parser()
    found = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert len(found) == 1, "gitreg has one level of commands"
    return dict(found[0].choices)


def _taken(command: argparse.ArgumentParser) -> tuple[set[str], str]:
    """What a command's table must name (each option string, each positional argument as
    `DEST`), and the words a positional argument with choices adds to its heading (`sync`)."""
    names: set[str] = set()
    words = ""
    for action in command._actions:
        if action.option_strings:
            names.update(action.option_strings)
        elif action.choices:
            words += " " + " ".join(action.choices)
        else:
            names.add(action.dest.upper())
    return names, words


def _options_on(section: str) -> set[str]:
    """The option table's first column: `--config FILE` names `--config`."""
    return {span.split()[0] for span in first_cells(section, "option")}


def test_every_command_has_its_section() -> None:
    headings = sections(PAGE)
    for name, command in _commands().items():
        _, words = _taken(command)
        assert f"gitreg {name}{words}" in headings, f"no '## gitreg {name}{words}' section"


def test_every_option_of_every_command_is_in_its_section() -> None:
    headings = sections(PAGE)
    for name, command in _commands().items():
        names, words = _taken(command)
        names.discard("-h")  # every command's --help: the page says so once, at the top
        names.discard("--help")
        on_page = _options_on(headings[f"gitreg {name}{words}"])
        missing = sorted(names - on_page)
        assert not missing, f"gitreg {name}: options not in its table: {missing}"
        unknown = sorted(on_page - names)
        assert not unknown, f"gitreg {name}: options in its table it does not take: {unknown}"


def test_the_options_every_command_takes_are_at_the_top() -> None:
    parser = _parser()
    top = sections(PAGE)["Every command"]
    on_page = _options_on(top)
    assert {s for a in parser._actions for s in a.option_strings} <= on_page
    shared = set.intersection(
        *(_taken(c)[0] for n, c in _commands().items() if n not in ("cert", "token"))
    )
    assert shared - {"-h", "--help"} <= on_page, "--config and --log-level, said once for all"


def test_every_default_on_the_page_is_the_parsers() -> None:
    """Where a command's table gives a default as a value (`registry.yaml`, `1`), the parser's
    default is that value."""
    headings = sections(PAGE)
    checked = []
    for name, command in _commands().items():
        _, words = _taken(command)
        rows = first_cells(headings[f"gitreg {name}{words}"], "option")
        for action in command._actions:
            for span, row in rows.items():
                if span.split()[0] not in action.option_strings:
                    continue
                default = row.strip().strip("|").split("|")[1].strip()
                value = re.fullmatch(r"`([^`]+)`", default)
                if value is not None:  # not words: "`listen` in the catalog"
                    assert value[1] == str(action.default), f"gitreg {name} {span}: {default}"
                    checked.append(f"{name} {span}")
    assert len(checked) >= 10, f"defaults checked: {checked}"
