"""A fleet directory: the tables as Parquet, the ledger that makes a run resumable,
and the manifest that says what is in it.

    DIR/manifest.json                                what, by which streamfold, from which inputs
    DIR/captures/day=2026-12-07/dialect=anthropic/part-<run>-<batch>.parquet
    DIR/choices/..., tool_calls/, findings/, usage/, frames/ (same partitions)
    DIR/_fleet/ledger.jsonl                          one line per committed batch and finished input

Partitions are Hive-style (`day`, from `started_at` in UTC or `unknown`, and
`dialect`), so a later run adds files beside the earlier ones and a reader
prunes by day or dialect. A batch's files are written under a temporary name,
renamed, and only then recorded in the ledger: a file the ledger does not name
is a crashed batch's, removed when the next run opens the directory, and its
captures are folded again. A capture is done when a committed `captures` file
holds its id with the same fingerprint; an input is done when the ledger says
every capture of it was committed, and is then not even read again.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..tables import SCHEMA, TABLES_SCHEMA_VERSION
from .arrow import split

__all__ = ["MANIFEST", "FleetDir", "FleetError", "partition_of", "refuse_undecodable"]

MANIFEST = "manifest.json"
_STATE = "_fleet"
_LEDGER = "ledger.jsonl"
#: A ledger line's JSON (`json.dumps` with separators makes an encoder a call: a directory of small files
#: writes a line a file). ASCII, so a path's undecodable bytes (lone surrogates) are written as escapes.
_LINE = json.JSONEncoder(separators=(",", ":"))
_PART = re.compile(r"part-[A-Za-z0-9_.-]+\.parquet")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


class FleetError(Exception):
    """The fleet directory cannot be used (another run holds it, it holds another schema); the message says why."""


#: The columns whose Parquet statistics (each row group's least and greatest value) are written: those a
#: query filters or sorts on. Not the long text and JSON columns (the reply, arguments, `native`), whose
#: min and max no query prunes by and which cost more to compute than the rest of the file.
_WITH_STATISTICS = {table.name: [column.name for column in table.columns
                                 if column.type != "json" and column.name not in ("content", "reasoning", "refusal",
                                                                                   "arguments", "message", "raw")]
                    for table in SCHEMA.values()}


def partition_of(day: str, dialect: str) -> str:
    return f"day={day}/dialect={_UNSAFE.sub('_', dialect) or 'unknown'}"


def refuse_undecodable(path: Path) -> None:
    """Raise `FleetError` for a fleet directory whose path is not UTF-8: Arrow and DuckDB take paths as text."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        raise FleetError(f"the fleet directory {str(path).encode('utf-8', 'surrogateescape')!r} has a name that is "
                         "not UTF-8 text, which Parquet and DuckDB cannot open: choose another") from None


class FleetDir:
    """An open fleet directory, held by this process alone until `close()`."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        refuse_undecodable(self.path)
        self._state = self.path / _STATE
        try:
            self._state.mkdir(parents=True, exist_ok=True)
            self._lock: TextIO = open(self._state / "lock", "a")  # noqa: SIM115 - held until close()
        except OSError as exc:
            raise FleetError(f"cannot write the fleet directory {str(self.path)!r}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lock.close()
            raise FleetError(f"another `streamfold fleet fold` is writing {str(self.path)!r}: wait for it to end"
                             ) from None
        self._finished: list[dict[str, Any]] = []
        self.manifest = self._read_manifest()
        self.removed = self._remove_orphans()

    def close(self) -> None:
        try:
            self._append([])  # the inputs finished since the last batch
        finally:
            self._lock.close()

    def __enter__(self) -> FleetDir:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- what is done -------------------------------------------------------------------

    def _ledger_lines(self) -> Iterator[dict[str, Any]]:
        with contextlib.suppress(FileNotFoundError), open(self._state / _LEDGER, encoding="utf-8") as ledger:
            for line in ledger:
                with contextlib.suppress(ValueError):  # a line cut by a crash while it was written
                    value = json.loads(line)
                    if isinstance(value, dict):
                        yield value

    def committed_files(self) -> set[str]:
        return {name for line in self._ledger_lines() for name in line.get("files", ())}

    def finished_inputs(self) -> dict[str, str]:
        """Input key -> fingerprint of every input all of whose captures were committed."""
        return {line["input"]: line["fingerprint"] for line in self._ledger_lines() if "input" in line}

    def done_captures(self) -> dict[str, str | None]:
        """Capture id -> fingerprint of every capture a committed `captures` file holds."""
        files = sorted(name for name in self.committed_files() if name.startswith("captures/"))
        done: dict[str, str | None] = {}
        for name in files:
            table = pq.read_table(self.path / name, columns=["capture_id", "fingerprint"])
            done.update(zip(table.column("capture_id").to_pylist(), table.column("fingerprint").to_pylist()))
        return done

    def _remove_orphans(self) -> list[str]:
        committed = self.committed_files()
        removed = []
        for table in SCHEMA:
            for file in sorted((self.path / table).rglob("part-*")):
                relative = file.relative_to(self.path).as_posix()
                if relative not in committed and (file.name.endswith(".tmp") or _PART.fullmatch(file.name)):
                    file.unlink()
                    removed.append(relative)
        return removed

    # -- writing ------------------------------------------------------------------------

    def commit(self, run: str, batch: int, folded: pa.Table) -> dict[str, int]:
        """Write one folded batch as Parquet files, then record it in the ledger. Returns rows per table."""
        days = pc.fill_null(pc.strftime(folded.column("started_at"), format="%Y-%m-%d", locale="C"), "unknown")
        keys = pc.binary_join_element_wise(days, folded.column("dialect"), "\x00")
        # One stable sort, then a slice a partition: filtering the batch once a partition costs more than the
        # fold's tables when they nest lists.
        order = pc.sort_indices(keys)
        folded, keys = folded.take(order), keys.take(order)
        written: list[str] = []
        rows = dict.fromkeys(["captures", *(name for name in SCHEMA if name in folded.column_names)], 0)
        start = 0
        for counted in pc.value_counts(keys).to_pylist():
            day, dialect = counted["values"].split("\x00")
            part, start = folded.slice(start, counted["counts"]), start + counted["counts"]
            for table, values in split(part).items():
                if values.num_rows == 0:
                    continue
                relative = f"{table}/{partition_of(day, dialect)}/part-{run}-{batch:06d}.parquet"
                target = self.path / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                pq.write_table(values, f"{target}.tmp", compression="zstd", write_statistics=_WITH_STATISTICS[table])
                os.replace(f"{target}.tmp", target)
                written.append(relative)
                rows[table] += values.num_rows
        self._append([{"run": run, "batch": batch, "files": written, "rows": rows}])
        return rows

    def finish_input(self, key: str, fingerprint: str, captures: int) -> None:
        """Record an input all of whose captures are committed. The line waits for the ledger's next write (the
        next batch's, or `close`): a directory of small files finishes hundreds of inputs a batch, and a sync
        each cost more than their fold. A line lost to a crash costs only a read: the next run reads that
        input again and skips its captures, which the ledger holds."""
        self._finished.append({"input": key, "fingerprint": fingerprint, "captures": captures})

    def _append(self, lines: list[dict[str, Any]]) -> None:
        lines, self._finished = [*self._finished, *lines], []
        if not lines:
            return
        with open(self._state / _LEDGER, "a", encoding="utf-8") as ledger:
            ledger.write("".join(_LINE.encode(line) + "\n" for line in lines))
            ledger.flush()
            os.fsync(ledger.fileno())

    # -- the manifest -------------------------------------------------------------------

    def _read_manifest(self) -> dict[str, Any]:
        try:
            manifest = json.loads((self.path / MANIFEST).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {"format": "streamfold-fleet", "tables_schema_version": TABLES_SCHEMA_VERSION, "runs": []}
        except (OSError, ValueError) as exc:
            raise FleetError(f"{str(self.path / MANIFEST)!r} cannot be read ({exc}): is this a fleet directory?"
                             ) from None
        version = manifest.get("tables_schema_version") if isinstance(manifest, dict) else None
        if version != TABLES_SCHEMA_VERSION:
            raise FleetError(f"{str(self.path)!r} holds tables of schema version {version}; this streamfold writes "
                             f"version {TABLES_SCHEMA_VERSION}: fold into a new directory")
        return dict(manifest)

    def write_manifest(self) -> None:
        totals = self._totals()
        self.manifest["tables"] = totals
        self.manifest["updated"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        temporary = self.path / f"{MANIFEST}.tmp"
        # A lone surrogate (a SOURCE's bytes that are not UTF-8) written as its JSON escape, which reads back as it.
        temporary.write_text(json.dumps(self.manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8",
                             errors="backslashreplace")
        os.replace(temporary, self.path / MANIFEST)

    def _totals(self) -> dict[str, dict[str, int]]:
        totals = {name: {"rows": 0, "files": 0} for name in SCHEMA}
        for line in self._ledger_lines():
            for name, count in line.get("rows", {}).items():
                if name in totals:
                    totals[name]["rows"] += count
            for file in line.get("files", ()):
                totals[file.split("/", 1)[0]]["files"] += 1
        return {name: counts for name, counts in totals.items() if counts["files"] or name != "frames"}
