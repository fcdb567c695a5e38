"""`streamfold fleet`: fold many captures into Parquet tables, and ask them questions.

The `streamfold` program (`streamfold.launcher`) adds this group to the command
line's; pyarrow and DuckDB (the `fleet` extra) are imported only when a fleet
command runs, so the rest of the command line starts without them.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from collections.abc import Iterator
from typing import IO, Any, NoReturn

import click

from ..fronts.extras import require
from .output import FORMATS

__all__ = ["fleet"]

EXIT_FAILED_INPUTS = 1
EXIT_USAGE = 2


@click.group()
def fleet() -> None:
    """Fold many stored streams into tables, and ask them questions in SQL.

    \b
    Examples:
      streamfold fleet fold captures/ proxy.sqlite --out fleet/
      streamfold fleet report fleet/
      streamfold fleet query fleet/ "SELECT outcome_class, count(*) FROM captures GROUP BY ALL"
    """


@fleet.command("fold")
@click.argument("sources", nargs=-1, required=True, metavar="SOURCE...")
@click.option("--out", "out", required=True, metavar="DIR",
              help="The fleet directory: Parquet tables and a manifest. A later run over it adds what is new and "
                   "skips what it holds already.")
@click.option("--engine", type=click.Choice(["local", "dask", "ray"]), default="local", show_default=True,
              help="local: a process pool on this machine; dask: a distributed scheduler (--scheduler, or a local "
                   "cluster); ray: Ray Data (--ray-address, or a local runtime).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="local: processes to fold in (default: one per CPU; 1 folds in this process).")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="dask: the scheduler to use (tcp://host:8786); without it a local cluster is started.")
@click.option("--ray-address", default=None, metavar="ADDRESS", help="ray: the cluster to join (default: a local one).")
@click.option("--frames", is_flag=True, help="Write the frames table too (a row per frame: the largest table).")
@click.option("--strict", is_flag=True,
              help="Stop at the first input that fails or capture that cannot be read (what was written stays).")
@click.option("--batch-size", type=click.IntRange(min=1), default=None, metavar="N",
              help="Captures per batch (default 5000): what one worker holds at once.")
def fold(sources: tuple[str, ...], out: str, engine: str, jobs: int | None, scheduler: str | None,
         ray_address: str | None, frames: bool, strict: bool, batch_size: int | None) -> None:
    """Fold every capture under SOURCE... into Parquet tables in DIR.

    SOURCE is a file, a directory (every file under it), a glob, a capture store
    (.sqlite), JSONL of capture records, a Parquet file with a `body` column, or a
    URL (s3://, gs://, ...: the `remote` extra). Each HAR or cassette entry is a
    capture of its own. An input that cannot be read is said on one line and the
    run goes on; the exit status is then 1.

    \b
    Examples:
      streamfold fleet fold ~/captures/ --out fleet/
      streamfold fleet fold 'logs/**/*.har' proxy.sqlite --out fleet/ --jobs 8
      streamfold fleet fold s3://bucket/streams/ --out fleet/ --engine dask --scheduler tcp://10.0.0.5:8786
    """
    require("fleet", "streamfold fleet")
    from . import batch
    from .engines import EngineError
    from .layout import FleetError
    from .run import BATCH_SIZE, fold_fleet

    batch.freeze_what_lives_on = True  # this process is the command's: with one job, it folds the batches
    try:
        chosen = _engine(engine, jobs, scheduler, ray_address)
    except EngineError as exc:
        raise click.ClickException(str(exc)) from None
    with _Progress() as progress:
        try:
            run = fold_fleet(list(sources), out, engine=chosen, frames=frames, strict=strict,
                             batch_size=batch_size or BATCH_SIZE, progress=progress.update,
                             failed=lambda failure: progress.say(f"streamfold: {failure}"))
        except FleetError as exc:
            raise click.ClickException(str(exc)) from None
        except EngineError as exc:
            raise click.ClickException(f"{exc}; the batches written before stay in {out}, and a run again "
                                       "goes on from them") from None
        finally:
            chosen.close()
    click.echo(run.summary())
    if run.failures or run.stopped:
        sys.exit(EXIT_FAILED_INPUTS)


def _engine(engine: str, jobs: int | None, scheduler: str | None, ray_address: str | None) -> Any:
    if engine == "dask":
        require("dask", "streamfold fleet fold --engine dask")
        from .dask_engine import DaskEngine

        return DaskEngine(scheduler)
    if engine == "ray":
        require("ray", "streamfold fleet fold --engine ray")
        from .ray_engine import RayEngine

        return RayEngine(ray_address)
    from .engines import LocalEngine

    return LocalEngine(jobs)


class _Progress:
    """A progress bar on stderr when it is a terminal (captures/s and the time left, by bytes read); nothing
    otherwise, so a log or a pipe gets the failures and the last line only."""

    def __init__(self) -> None:
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> _Progress:
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

            self._bar = Progress(TextColumn("folding"), BarColumn(), TextColumn("{task.fields[captures]:,} captures"),
                                 TextColumn("{task.fields[rate]}"), TimeRemainingColumn(),
                                 console=Console(stderr=True), transient=True)
            self._bar.start()
            self._task = self._bar.add_task("fold", total=None, captures=0, rate="")
        return self

    def update(self, done: int, total: int, captures: int) -> None:
        if self._bar is not None:
            elapsed = self._bar.tasks[0].elapsed or 0.0
            rate = f"{captures / elapsed:,.0f}/s" if elapsed > 0 else ""
            self._bar.update(self._task, completed=done, total=total or None, captures=captures, rate=rate)

    def say(self, line: str) -> None:
        if self._bar is not None:
            self._bar.console.print(line, markup=False, highlight=False)
        else:
            click.echo(line, err=True)

    def __exit__(self, *_: object) -> None:
        if self._bar is not None:
            self._bar.stop()


_FORMAT_HELP = ("table: aligned columns, long cells cut (the default on a terminal); csv: a header line, then a row a "
                "line (the default off one: a pipe, a file); json: one array of objects; jsonl: an object a line; "
                "parquet: the answer as a Parquet file (needs --output).")


@fleet.command("query")
@click.argument("directory", metavar="DIR")
@click.argument("sql")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None, help=_FORMAT_HELP)
@click.option("--output", "-o", "output", default=None, metavar="FILE",
              help="Write the answer to FILE instead of stdout (csv unless --format says otherwise).")
def query(directory: str, sql: str, fmt: str | None, output: str | None) -> None:
    """Answer SQL over the fleet in DIR: its tables are views named `captures`, `choices`, `tool_calls`,
    `findings`, `usage` (and `frames` when it was folded with --frames), DuckDB's dialect of SQL.

    The fleet is opened read-only in memory: nothing is written unless the SQL says so (a COPY, a
    file it names). A SQL error is said on one line, exit status 2.

    \b
    Examples:
      streamfold fleet query fleet/ "SELECT outcome_class, count(*) FROM captures GROUP BY ALL"
      streamfold fleet query fleet/ "SELECT * FROM tool_calls WHERE error IS NOT NULL" --format jsonl | jq '.name'
      streamfold fleet query fleet/ "SELECT * FROM captures WHERE host = 'api.openai.com'" -o openai.parquet \\
          --format parquet
    """
    require("fleet", "streamfold fleet query")
    import duckdb

    from ..fronts.terminal import on_terminal

    if fmt == "parquet" and output is None:
        _fail("--format parquet writes a file: give it with --output FILE")
    terminal = output is None and on_terminal()
    chosen = fmt or ("table" if terminal else "csv")
    db = _open(directory)
    try:
        if chosen == "parquet":
            assert output is not None
            _write_parquet(db.sql(sql), output)
            return
        relation = db.execute(sql)
        columns = [description[0] for description in relation.description or ()]
        types = [str(description[1]) for description in relation.description or ()]
        if chosen == "table":
            # A terminal gets a screenful or so: an answer of millions of rows is for a pipe or a file.
            shown = relation.fetchmany(_TERMINAL_ROWS + 1) if terminal else relation.fetchall()
            _print_table(output, columns, types, shown[:_TERMINAL_ROWS] if terminal else shown,
                         more=terminal and len(shown) > _TERMINAL_ROWS)
        elif columns:
            _write_text(output, chosen, columns, types, _batches(relation))
    except duckdb.Error as exc:
        _fail(f"the query failed: {_first_line(exc)}")
    except OSError as exc:
        _fail(f"cannot write {output}: {exc.strerror or exc}")


#: The most rows the table on a terminal shows.
_TERMINAL_ROWS = 1000


def _batches(relation: Any) -> Iterator[tuple[Any, ...]]:
    while batch := relation.fetchmany(10_000):
        yield from batch


def _write_parquet(relation: Any, output: str) -> None:
    """The answer to `output` a batch at a time (an answer larger than memory still fits)."""
    import pyarrow.parquet as pq

    if relation is None:
        _fail("the SQL gives no rows to write (it is no query)")
    # DuckDB 1.4 named it to_arrow_reader, and 2.0 deprecates the older name.
    batches = (getattr(relation, "to_arrow_reader", None) or relation.fetch_arrow_reader)()
    with pq.ParquetWriter(output, batches.schema) as writer:
        for batch in batches:
            writer.write_batch(batch)


def _write_text(output: str | None, fmt: str, columns: list[str], types: list[str],
                rows: Iterator[tuple[Any, ...]]) -> None:
    from .output import write_rows

    if output is None:
        write_rows(sys.stdout, fmt, columns, types, rows)
        return
    with open(output, "w", encoding="utf-8", newline="") as out:
        write_rows(out, fmt, columns, types, rows)


def _print_table(output: str | None, columns: list[str], types: list[str], rows: list[tuple[Any, ...]],
                 more: bool) -> None:
    with (open(output, "w", encoding="utf-8") if output is not None else contextlib.nullcontext(sys.stdout)) as out, \
            _printing(out) as (console, terminal):
        _show(console, terminal, columns, types, rows)
        if more:
            console.print("More rows follow: --format csv or --output FILE gives them all.", markup=False)


@fleet.command("report")
@click.argument("directory", metavar="DIR")
@click.option("--only", "only", default=None, metavar="NAME",
              help="One report: outcomes, tool-arguments, truncation, latency, opaque-state, findings.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="table: each report's title, question, SQL and answer; json: all of them, with their SQL, "
                   "in one array.")
def report(directory: str, only: str | None, fmt: str) -> None:
    """The questions users ask of a fleet, each answered by a query whose SQL is shown: how streams
    ended, tool-argument failures, truncation and missing usage, time to first byte and token, opaque
    state, the top finding codes. Run a report's SQL with `fleet query` to change it.

    \b
    Examples:
      streamfold fleet report fleet/
      streamfold fleet report fleet/ --only truncation
      streamfold fleet report fleet/ --format json | jq '.[] | select(.name == "latency") | .rows'
    """
    require("fleet", "streamfold fleet report")
    from .output import json_value
    from .report import REPORTS, report_named, run_report

    try:
        chosen = REPORTS if only is None else (report_named(only),)
    except KeyError:
        _fail(f"no report is named {only!r}: one of {', '.join(item.name for item in REPORTS)}")
    import duckdb

    db = _open(directory)
    try:
        answers = [(item, *run_report(db, item)) for item in chosen]
    except duckdb.Error as exc:  # a part file gone or damaged since the fleet was written
        _fail(f"the report failed: {_first_line(exc)}")
    if fmt == "json":
        from .._json import dumps_strict

        click.echo(dumps_strict([{
            "name": item.name, "title": item.title, "question": item.question, "sql": item.sql, "columns": columns,
            "rows": [{name: json_value(value) for name, value in zip(columns, row, strict=True)} for row in rows]}
            for item, columns, rows in answers], indent=2))
        return
    from rich.syntax import Syntax
    from rich.text import Text

    with _printing(sys.stdout) as (console, terminal):
        for position, (item, columns, rows) in enumerate(answers):
            if position:
                console.print()
            console.print(Text(item.title, style="bold"))
            console.print(Text(item.question))
            console.print(Syntax(item.sql, "sql", theme="ansi_dark", background_color="default", word_wrap=True)
                          if terminal else Text(item.sql))
            if rows:
                _show(console, terminal, columns, [], rows)
            else:
                console.print(Text(item.when_empty, style="italic"))


def _open(directory: str) -> Any:
    from .layout import FleetError
    from .query import open_fleet

    try:
        return open_fleet(directory)
    except FleetError as exc:
        _fail(str(exc))
    except Exception as exc:  # a ledger naming a file that is gone, a Parquet file that is not one
        _fail(f"{directory!r} could not be opened as a fleet: {_first_line(exc)}")


def _fail(message: str) -> NoReturn:
    click.echo(f"streamfold: {message}", err=True)
    sys.exit(EXIT_USAGE)


def _first_line(exc: BaseException) -> str:
    return next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)


#: On a terminal, the widest a text cell is before it is cut with "…", and the narrowest a column is squeezed to.
_CELL_WIDTH = 40
_SQUEEZED_WIDTH = 4
#: Between two columns: a cell's padding on each side and the box's separator.
_COLUMN_GAP = 3
#: Off a terminal, a width no line reaches: nothing is wrapped or cut.
_WHOLE = 1_000_000
_LINE_END_BLANKS = re.compile(r"[ \t]+$", re.MULTILINE)
_NUMERIC = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT",
            "UHUGEINT", "FLOAT", "DOUBLE", "DECIMAL")


@contextlib.contextmanager
def _printing(out: IO[str]) -> Iterator[tuple[Any, bool]]:
    """A rich console writing to `out`, and whether `out` is a terminal: on one, coloured as the program's
    --color says; off one (a pipe, a file), uncoloured, nothing wrapped or cut, no blanks ending a line."""
    from rich.console import Console

    from ..fronts.terminal import on_terminal

    if out is sys.stdout and on_terminal():
        color = _color()
        yield Console(file=out, highlight=False, soft_wrap=False, no_color=color == "never" or None,
                      color_system=None if color == "never" else "auto"), True
        return
    buffer = io.StringIO()
    yield Console(file=buffer, highlight=False, soft_wrap=False, width=_WHOLE, color_system=None), False
    out.write(_LINE_END_BLANKS.sub("", buffer.getvalue()))


def _color() -> str:
    """The program's --color: the command line's settings hold it, and the fleet does not import the command
    line, so it is read from the root context's object by name."""
    context = click.get_current_context(silent=True)
    return str(getattr(context.find_root().obj if context is not None else None, "color", "auto"))


def _show(console: Any, terminal: bool, columns: list[str], types: list[str], rows: list[tuple[Any, ...]]) -> None:
    """The table of `rows`, then how many there are."""
    console.print(_rich_table(columns, types, rows, console.width if terminal else None))
    console.print(f"{len(rows):,} rows" if len(rows) != 1 else "1 row", style="dim", markup=False)


def _rich_table(columns: list[str], types: list[str], rows: list[tuple[Any, ...]], room: int | None) -> Any:
    """The rows as a rich table, a line each: every cell text with its control characters escaped (a
    stream's bytes are not the terminal's to obey), null dim, numbers to the right. `room`: the terminal's
    width, which long text cells are cut to fit (with "…"); None: nothing is cut."""
    from rich import box
    from rich.cells import cell_len
    from rich.table import Table
    from rich.text import Text

    from ..fronts.terminal import fit_width, plain
    from .output import cell_text

    cells = [[None if value is None else plain(cell_text(value)) for value in row] for row in rows]
    numeric = [kind.startswith(_NUMERIC) for kind in types] or [
        all(isinstance(row[index], (int, float)) and not isinstance(row[index], bool)
            for row in rows if row[index] is not None) for index in range(len(columns))]
    names = [plain(name) for name in columns]
    values = [max([0, *(cell_len(row[index] or "NULL") for row in cells)]) for index in range(len(columns))]
    widths = _fitted([max(cell_len(name), width) for name, width in zip(names, values, strict=True)],
                     [value if right else 0 for value, right in zip(values, numeric, strict=True)], room)

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for name, right, width in zip(names, numeric, widths, strict=True):
        table.add_column(fit_width(name, width), justify="right" if right else "left", no_wrap=True, width=width)
    for row in cells:
        table.add_row(*(Text("NULL", style="dim") if value is None else Text(fit_width(value, width))
                        for value, width in zip(row, widths, strict=True)))
    return table


def _fitted(longest: list[int], numbers: list[int], room: int | None) -> list[int]:
    """Each column's width: its longest cell (header included), a text column at most `_CELL_WIDTH`, then
    the widest columns narrowed one cell at a time until the table fits in `room`. `numbers`: for a column
    of numbers, its longest number, which is never cut (its header may be)."""
    if room is None:
        return longest
    widths = [width if number else min(width, _CELL_WIDTH) for width, number in zip(longest, numbers, strict=True)]
    floors = [max(number, min(width, _SQUEEZED_WIDTH)) for width, number in zip(widths, numbers, strict=True)]
    space = room - _COLUMN_GAP * (len(widths) - 1)
    while sum(widths) > space:
        narrowable = [index for index, width in enumerate(widths) if width > floors[index]]
        if not narrowable:
            break  # the terminal crops what still does not fit
        widest = max(narrowable, key=lambda index: widths[index])
        widths[widest] -= 1
    return widths
