"""Making fleets and reading them back, for the fleet's tests. Not a test module."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from streamfold.fleet.engines import LocalEngine
from streamfold.fleet.query import table_files
from streamfold.fleet.run import FleetRun, fold_fleet
from streamfold.tables import SCHEMA

__all__ = ["ROOT", "fold_here", "in_order", "jsonl", "rows", "sse"]

ROOT = Path(__file__).resolve().parents[1]


def fold_here(sources: list[str | Path], out: Path, **options: Any) -> FleetRun:
    """`fleet fold` in this process (one job), the way the command runs it."""
    return fold_fleet([str(source) for source in sources], str(out), engine=LocalEngine(1), **options)


def rows(out: Path, table: str) -> list[dict[str, Any]]:
    """Every committed row of `table`, as Python values, sorted (ids, then position fields)."""
    files = table_files(out, table)
    if not files:
        return []
    names = list(SCHEMA[table].names)
    return in_order(table, pa.concat_tables([pq.read_table(name, columns=names) for name in files]).to_pylist())


def in_order(table: str, found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of `table` sorted by their ids (the order the files hold them in is the engine's)."""
    order = [name for name in ("capture_id", "choice", "kind", "position", "frame") if name in SCHEMA[table].names]
    return sorted(found, key=lambda row: tuple(str(row[name]) for name in order))


def sse(*payloads: str, done: bool = True) -> bytes:
    body = b"".join(f"data: {payload}\n\n".encode() for payload in payloads)
    return body + (b"data: [DONE]\n\n" if done else b"")


def jsonl(path: Path, records: list[dict[str, Any] | str]) -> Path:
    path.write_text("".join((record if isinstance(record, str) else json.dumps(record)) + "\n"
                            for record in records), encoding="utf-8")
    return path
