"""`streamfold fleet`: fold many captures into Parquet tables, and ask them questions.

The `streamfold` program (`streamfold.launcher`) adds this group to the command
line's; pyarrow and DuckDB (the `fleet` extra) are imported only when a fleet
command runs, so the rest of the command line starts without them.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from ..fronts.extras import require

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
              help="Captures per batch (default 1000): what one worker holds at once.")
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
    from .engines import EngineError
    from .layout import FleetError
    from .run import BATCH_SIZE, fold_fleet

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
