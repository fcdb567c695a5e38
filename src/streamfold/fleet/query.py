"""SQL over a fleet directory: an in-memory DuckDB whose views are named after
the tables (`captures`, `choices`, `tool_calls`, `findings`, `usage`, and
`frames` when a run wrote it), over the Parquet files the ledger committed.

    with open_fleet("fleet/") as db:
        db.sql("SELECT outcome_class, count(*) FROM captures GROUP BY ALL").fetchall()

A capture folded again (its input changed between runs) is in two part files;
the views show only its newest rows: part files are named
`part-<run number>-<run time>-<batch>`, so the newest is the greatest name, and a
child table's rows count when they come from the part file its capture's
row came from. A table no run wrote rows to is an empty view of its schema.

The connection writes nothing where the user did not ask: what a large query
spills goes to a directory of this process under the system's temporary one
(DuckDB's default is `.tmp` in the working directory), and timestamps are
shown in UTC, as the tables hold them, whatever the machine's time zone.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import duckdb

from ..tables import SCHEMA
from .arrow import arrow_schema
from .layout import MANIFEST, FleetError, refuse_undecodable

__all__ = ["open_fleet", "rows_of", "table_files"]


def table_files(root: Path, table: str) -> list[str]:
    """The committed Parquet files of `table`, as paths."""
    ledger = root / "_fleet" / "ledger.jsonl"
    files: list[str] = []
    if ledger.exists():
        for line in ledger.read_text(encoding="utf-8").splitlines():
            try:
                value = json.loads(line)
            except ValueError:
                continue
            files.extend(str(root / name) for name in value.get("files", ()) if name.startswith(f"{table}/"))
    return files


def open_fleet(path: str | Path) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection (in memory; nothing is written to the fleet) with a view per table."""
    root = Path(path)
    refuse_undecodable(root)
    if not (root / MANIFEST).is_file():
        raise FleetError(f"{str(root)!r} is not a fleet directory (it has no {MANIFEST}): make one with "
                         f"`streamfold fleet fold SOURCE... --out {root}`")
    db = duckdb.connect(":memory:")
    spill = Path(tempfile.gettempdir()) / f"streamfold-fleet-{os.getpid()}"
    db.execute(f"SET temp_directory = {_literal(str(spill))}")
    db.execute("SET TimeZone = 'UTC'")
    for table in SCHEMA:
        files = table_files(root, table)
        if files:
            db.execute(f"CREATE VIEW _all_{table} AS SELECT * EXCLUDE (filename), "
                       f"regexp_extract(filename, '[^/]*$') AS _part FROM read_parquet({_list(files)}, "
                       "hive_partitioning = true, union_by_name = true, filename = true, "
                       "hive_types = {'day': VARCHAR, 'dialect': VARCHAR})")
        elif table != "frames":
            empty = arrow_schema(table).empty_table()
            db.register(f"_empty_{table}", empty)
            partitions = "NULL::VARCHAR AS day" + (", NULL::VARCHAR AS dialect" if table != "captures" else "")
            db.execute(f"CREATE VIEW _all_{table} AS SELECT *, {partitions}, '' AS _part FROM _empty_{table}")
    # The rows a newer part file replaced, found once (the connection's files are fixed when it opens): most
    # fleets have none, so every view is its files' rows, not a join against every capture's newest part.
    db.execute("CREATE TEMP TABLE _superseded AS SELECT capture_id, _part FROM _all_captures "
               "QUALIFY _part < max(_part) OVER (PARTITION BY capture_id)")
    for table in SCHEMA:
        if table != "frames" or table_files(root, "frames"):
            db.execute(f"CREATE VIEW {table} AS SELECT * EXCLUDE (_part) FROM _all_{table} ANTI JOIN _superseded "
                       "USING (capture_id, _part)")
    return db


def _list(files: list[str]) -> str:
    return "[" + ", ".join(_literal(name) for name in files) + "]"


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def rows_of(db: duckdb.DuckDBPyConnection, sql: str, parameters: Any = None) -> tuple[list[str], list[tuple[Any, ...]]]:
    """The column names and rows of `sql`."""
    relation = db.execute(sql, parameters) if parameters is not None else db.execute(sql)
    columns = [description[0] for description in relation.description or ()]
    return columns, relation.fetchall()
