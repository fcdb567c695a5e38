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
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb

from ..tables import SCHEMA
from .arrow import arrow_schema
from .layout import MANIFEST, FleetError

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
    if not (root / MANIFEST).is_file():
        raise FleetError(f"{str(root)!r} is not a fleet directory (it has no {MANIFEST}): make one with "
                         f"`streamfold fleet fold SOURCE... --out {root}`")
    db = duckdb.connect(":memory:")
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
    db.execute("CREATE VIEW _latest AS SELECT capture_id, max(_part) AS _part FROM _all_captures GROUP BY capture_id")
    db.execute("CREATE VIEW captures AS SELECT * EXCLUDE (_part) FROM _all_captures SEMI JOIN _latest "
               "USING (capture_id, _part)")
    for table in SCHEMA:
        if table != "captures" and (table != "frames" or table_files(root, "frames")):
            db.execute(f"CREATE VIEW {table} AS SELECT * EXCLUDE (_part) FROM _all_{table} SEMI JOIN _latest "
                       "USING (capture_id, _part)")
    return db


def _list(files: list[str]) -> str:
    return "[" + ", ".join("'" + name.replace("'", "''") + "'" for name in files) + "]"


def rows_of(db: duckdb.DuckDBPyConnection, sql: str, parameters: Any = None) -> tuple[list[str], list[tuple[Any, ...]]]:
    """The column names and rows of `sql`."""
    relation = db.execute(sql, parameters) if parameters is not None else db.execute(sql)
    columns = [description[0] for description in relation.description or ()]
    return columns, relation.fetchall()
