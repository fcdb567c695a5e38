"""MkDocs hooks (mkdocs.yml `hooks:`): the pages that restate the code are filled from the code at build
time, so they cannot drift from it, and the build fails when the code gains something with no page.

- `<!-- help: streamfold CMD [SUB] -->` becomes that command's `--help`, rendered by click itself;
- `<!-- codes -->` becomes the tables of every finding code (`streamfold._codes.code_tables`);
- `<!-- tables -->` becomes every table and column of the table schema (`streamfold.tables.table_docs`),
  and tables.md must hold it;
- `<!-- fleet-reports -->` becomes each report of `streamfold fleet report` (`streamfold.fleet.report.REPORTS`):
  its name, title, question and SQL; fleet-queries.md must hold it;
- `DIALECT_NAMES` (in the JSON contract) becomes every registered dialect, as `a | b | … | unknown`;
- `<!-- dialects -->` becomes the table of every registered dialect (`streamfold.dialects.registry.dialect_table`:
  each spec's title, request paths, transport and own codes);
- every command of the `streamfold` program must have its help on a page, and every registered dialect
  a heading on dialects.md: the build stops (PluginError) naming what is missing.
"""

from __future__ import annotations

import re
from typing import Any

import click
from mkdocs.exceptions import PluginError

from streamfold._codes import code_tables
from streamfold.dialects import DIALECTS
from streamfold.dialects.registry import dialect_table
from streamfold.fleet.report import REPORTS
from streamfold.launcher import cli
from streamfold.tables import table_docs

HELP_MARKER = re.compile(r"<!-- help: streamfold((?: [a-z-]+)*) -->")
WIDTH = 100
_shown: set[str] = set()


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> dict[str, click.Command]:
    found: dict[str, click.Command] = {}
    for name, command in group.commands.items():
        path = (*prefix, name)
        found[" ".join(path)] = command
        if isinstance(command, click.Group):
            found.update(_commands(command, path))
    return found


def _help(path: str) -> str:
    context = click.Context(cli, info_name="streamfold", terminal_width=WIDTH, max_content_width=WIDTH)
    command: click.Command = cli
    for name in path.split():
        if not isinstance(command, click.Group) or name not in command.commands:
            raise PluginError(f"docs: no command `streamfold {path}` (a help marker names it)")
        command = command.commands[name]
        context = click.Context(command, info_name=name, parent=context, terminal_width=WIDTH,
                                max_content_width=WIDTH)
    return command.get_help(context)


def fleet_reports() -> str:
    return "\n".join(f"### `{report.name}`: {report.title}\n\n{report.question}\n\n```sql\n{report.sql}\n```\n"
                     for report in REPORTS)


def dialect_names() -> str:
    names = sorted(name for name in DIALECTS if name != "unknown")
    return " | ".join([*names, "unknown"])


def on_pre_build(config: Any) -> None:
    _shown.clear()


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    def help_block(match: re.Match[str]) -> str:
        path = match.group(1).strip()
        _shown.add(path)
        return f"```text\n$ streamfold {path} --help\n{_help(path).rstrip()}\n```"

    markdown = HELP_MARKER.sub(help_block, markdown)
    markdown = markdown.replace("<!-- codes -->", code_tables())
    if page.file.src_uri == "tables.md" and "<!-- tables -->" not in markdown:
        raise PluginError("docs/tables.md: the `<!-- tables -->` marker, where the table schema is generated, is gone")
    markdown = markdown.replace("<!-- tables -->", table_docs())
    if page.file.src_uri == "fleet-queries.md" and "<!-- fleet-reports -->" not in markdown:
        raise PluginError("docs/fleet-queries.md: the `<!-- fleet-reports -->` marker, where the reports are "
                          "generated, is gone")
    markdown = markdown.replace("<!-- fleet-reports -->", fleet_reports())
    markdown = markdown.replace("DIALECT_NAMES", dialect_names())
    markdown = markdown.replace("<!-- dialects -->", dialect_table())
    if page.file.src_uri == "dialects.md":
        headings = set(re.findall(r"^#{2,3} `([a-z0-9-]+)`", markdown, re.MULTILINE))
        missing = sorted(set(DIALECTS) - {"unknown"} - headings)
        if missing:
            raise PluginError(f"docs/dialects.md: no section for the registered dialect(s) {', '.join(missing)}")
    return markdown


def on_post_build(config: Any) -> None:
    missing = sorted(set(_commands(cli)) - _shown)
    if missing:
        raise PluginError("docs: commands without their --help on a page (add `<!-- help: streamfold CMD -->`): "
                          + ", ".join(missing))
