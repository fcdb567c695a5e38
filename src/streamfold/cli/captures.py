"""`streamfold captures`: the exchanges in the capture store, newest first, and
`streamfold captures export REF` to write one out as its raw body, a HAR file
or a `curl --trace --trace-time` dump."""

from __future__ import annotations

import sys
from typing import Any

import click

from ..services import InputError
from ..store import default_db, get_exchange, list_exchanges, parse_ref
from ..store.export import FORMATS, export
from .common import EXIT_USAGE, write_json

__all__ = ["captures"]


def _fail(exc: Exception) -> None:
    click.echo(f"streamfold: {exc}", err=True)
    sys.exit(EXIT_USAGE)


_DB_HELP = "The capture store (default: $STREAMFOLD_DB, else ./streamfold.sqlite)."


@click.group(invoke_without_command=True)
@click.option("--db", default=None, metavar="PATH", help=_DB_HELP)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per capture, in a list.")
@click.option("--limit", type=click.IntRange(min=1), default=None, metavar="N", help="Only the newest N.")
@click.pass_context
def captures(ctx: click.Context, db: str | None, as_json: bool, limit: int | None) -> None:
    """List the stored captures, newest first: id, time (UTC), status, dialect, the
    model the reply reports, how the stream ended (its outcome class: complete,
    client-cut, upstream-cut, errored, damaged, arguments-invalid, short, ...),
    TTFT, duration, bytes, frames, finding codes and the request. A capture is
    read by every command as PATH.sqlite#ID (PATH.sqlite alone: the latest).

    \b
    Examples:
      streamfold captures --db streamfold.sqlite
      streamfold show streamfold.sqlite#3
      streamfold captures export streamfold.sqlite#3 --format trace > 3.trace
    """
    ctx.ensure_object(dict)
    ctx.meta["streamfold.db"] = db
    if ctx.invoked_subcommand is not None:
        return
    path = db or default_db()
    try:
        rows = list_exchanges(path, limit=limit)
    except InputError as exc:
        _fail(exc)
    if as_json:
        write_json(rows)
        return
    if not rows:
        click.echo(f"no captures in {path} yet")
        return
    cells = [_HEADER, *(_cells(row) for row in rows)]
    widths = [max(len(line[column]) for line in cells) for column in range(len(_HEADER) - 1)]
    for line in cells:
        padded = [cell.rjust(width) if column in _RIGHT else cell.ljust(width)
                  for column, (cell, width) in enumerate(zip(line, widths, strict=False))]
        click.echo("  ".join([*padded, line[-1]]).rstrip())


_HEADER = ["id", "time (UTC)", "status", "dialect", "model", "outcome", "ttft", "duration", "bytes", "frames",
           "findings", "request"]
_RIGHT = {0, 2, 6, 7, 8, 9}
#: A model name is cut to this many characters in the table (`--json` has it whole).
_MODEL_WIDTH = 24


def _seconds(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def _cells(row: dict[str, Any]) -> list[str]:
    # The outcome class is the fold's: none while in flight, nor in a store of schema 1 (shown as it is).
    ended = "in flight" if row["in_flight"] else row["outcome_class"] or "-"
    model = row["model"] or "-"
    if len(model) > _MODEL_WIDTH:
        model = model[: _MODEL_WIDTH - 1] + "…"
    return [str(row["id"]), row["started"][:19].replace("T", " "),
            "-" if row["status"] is None else str(row["status"]), row["dialect"] or "-", model, ended,
            _seconds(row["ttft"]),
            _seconds(row["duration"]), str(row["bytes"]), "-" if row["frames"] is None else str(row["frames"]),
            ",".join(row["findings"]) or "-", f"{row['method']} {row['url']}"]


@captures.command("export")
@click.argument("ref", metavar="REF")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="raw", show_default=True,
              help="raw: the body as received; har: a HAR file of one entry; trace: a curl --trace --trace-time "
                   "dump (hex, every byte, with each read's time).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write to this file instead of standard output.")
@click.pass_context
def export_command(ctx: click.Context, ref: str, fmt: str, output: str | None) -> None:
    """Write a stored capture out. REF is PATH.sqlite#ID, PATH.sqlite (the latest),
    or an ID (#ID) in the --db store.

    \b
    Examples:
      streamfold captures export streamfold.sqlite#3 --format har > 3.har
      streamfold captures --db x.sqlite export 3 --format trace | streamfold show -
    """
    db = ctx.parent.meta.get("streamfold.db") if ctx.parent is not None else None
    try:
        bare = ref.lstrip("#")
        parsed = (db or default_db(), int(bare)) if bare.isascii() and bare.isdigit() else parse_ref(ref)
        if parsed is None:
            raise InputError(f"{ref!r} is not a stored capture: give PATH.sqlite#ID, PATH.sqlite or an id")
        data = export(get_exchange(*parsed), fmt)
    except InputError as exc:
        _fail(exc)
    if output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        with open(output, "wb") as handle:
            handle.write(data)
