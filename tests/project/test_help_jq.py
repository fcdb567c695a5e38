"""Every `jq` in a command's --help quotes its filter: `jq .choices[0].content` is a glob to zsh
("no matches found") and to bash when a file matches, so a copied example fails; `jq
'.choices[0].content'` works in every shell. Each click command's help, subcommands of groups
included, is scanned."""

from __future__ import annotations

import re
from collections.abc import Iterator

import click
from click.testing import CliRunner

from streamfold.launcher import cli

# `| jq` (or a line that starts with jq), its options, then the filter.
_JQ = re.compile(r"(?:\|\s*|^\s*)jq((?:\s+-{1,2}[\w-]+)*)\s+(\S+)", re.MULTILINE)


def commands(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from commands(command, (*path, name))
        else:
            yield (*path, name)


def unquoted_filters(text: str) -> list[str]:
    return [match.group(0).strip() for match in _JQ.finditer(text) if match.group(2)[0] not in "'\""]


def test_every_jq_filter_in_the_help_is_quoted() -> None:
    paths = list(commands(cli))
    assert ("show",) in paths and ("diff",) in paths and ("captures", "export") in paths
    found: dict[str, list[str]] = {}
    seen = 0
    for path in paths:
        result = CliRunner().invoke(cli, [*path, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, path
        seen += len(_JQ.findall(result.stdout))
        if unquoted_filters(result.stdout):
            found[" ".join(path) or "streamfold"] = unquoted_filters(result.stdout)
    assert seen >= 3  # show, export and diff show jq; a scan that finds none would pass on anything
    assert found == {}, f"quote these jq filters: {found}"


def test_the_scan_finds_an_unquoted_filter() -> None:
    assert unquoted_filters("  streamfold show --json x.sse | jq -r .choices[0].content\n") == [
        "| jq -r .choices[0].content"]
    assert unquoted_filters("  x | jq '.a' \n  y | jq -c \".b\"\n  for CI and jq: the two sides") == []
