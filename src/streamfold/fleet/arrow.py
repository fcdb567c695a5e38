"""The table schema (`streamfold.tables`) in Arrow, and the one batch shape a
fleet's engines pass around.

A batch of folded captures is one Arrow table, `folded_schema()`: a row per
capture with the `captures` columns, and each other table as a list of
structs in its capture's row (its columns less `capture_id`). One table in,
one table out is what every engine maps (a process pool, Dask, Ray Data,
Spark's `mapInArrow`); `split` turns it into the flat tables the fleet
writes, with Arrow's own kernels, no row loop.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ..tables import SCHEMA, Row
from .text import row_text

__all__ = ["CHILD_TABLES", "arrow_schema", "folded_schema", "nest", "split"]

#: The tables nested in a folded batch, in `SCHEMA`'s order (`frames` only when asked for).
CHILD_TABLES = tuple(name for name in SCHEMA if name != "captures")

_JSON = pa.json_(pa.string())


def _arrow_type(type_: str, *, storage: bool) -> pa.DataType:
    if type_.startswith("list<"):
        return pa.list_(_arrow_type(type_[5:-1], storage=storage))
    return {
        "bool": pa.bool_(), "int64": pa.int64(), "float64": pa.float64(), "string": pa.string(),
        "json": pa.string() if storage else _JSON, "timestamp[us, UTC]": pa.timestamp("us", tz="UTC"),
    }[type_]


def _fields(table: str, *, storage: bool, without_id: bool = False) -> list[pa.Field]:
    return [pa.field(column.name, _arrow_type(column.type, storage=storage), nullable=column.nullable)
            for column in SCHEMA[table].columns if not (without_id and column.name == "capture_id")]


# Schemas are values, made once: building one costs more than nesting a capture's rows.
@functools.cache
def arrow_schema(table: str, *, storage: bool = False) -> pa.Schema:
    """The Arrow schema of one table of `SCHEMA`. `storage`: JSON columns as plain strings (for an engine that
    does not know Arrow's JSON extension type, such as Spark's `mapInArrow`)."""
    return pa.schema(_fields(table, storage=storage))


@functools.cache
def folded_schema(*, frames: bool = False, storage: bool = False) -> pa.Schema:
    """The schema of a folded batch: the `captures` columns, then one list-of-structs column per other table."""
    nested = [pa.field(name, pa.list_(pa.struct(_fields(name, storage=storage, without_id=True))), nullable=False)
              for name in CHILD_TABLES if frames or name != "frames"]
    return pa.schema([*_fields("captures", storage=storage), *nested])


def nest(captures: Iterable[Mapping[str, Sequence[Row]]], *, frames: bool = False) -> pa.Table:
    """Folded captures (each the rows `tables.table_rows()` made for one) as one folded batch, built a column
    at a time from the rows' tuples."""
    captures = list(captures)
    # Arrays are made in their real types, JSON columns too: casting the table after costs a fifth of the nesting.
    schema = folded_schema(frames=frames)
    ids = SCHEMA["captures"].names
    own = _columns([one["captures"][0] for one in captures], len(ids))
    arrays = [_array(values, schema.field(name).type) for name, values in zip(ids, own)]
    for name in CHILD_TABLES:
        if not frames and name == "frames":
            continue
        offsets, rows = [0], list[Row]()
        for one in captures:
            rows.extend(one.get(name, ()))
            offsets.append(len(rows))
        item = schema.field(name).type.value_type
        values = _columns(rows, len(SCHEMA[name].columns))[1:]  # less `capture_id`: the row it nests in
        struct = pa.StructArray.from_arrays([_array(column, field.type) for column, field in zip(values, item)],
                                            fields=list(item))
        arrays.append(pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), struct))
    return pa.Table.from_arrays(arrays, schema=schema)


def _array(values: Sequence[Any], type_: pa.DataType) -> pa.Array:
    try:
        return pa.array(values, type=type_)
    except UnicodeEncodeError:  # a lone surrogate: Arrow holds only UTF-8 (see `row_text`)
        return pa.array([_valid(value) for value in values], type=type_)


def _valid(value: Any) -> Any:
    if isinstance(value, str):
        return row_text(value)
    return [_valid(item) for item in value] if isinstance(value, list) else value


def _columns(rows: Sequence[Row], width: int) -> list[Sequence[Any]]:
    """Rows of `width` values as `width` columns."""
    return list(zip(*rows)) if rows else [()] * width


def split(folded: pa.Table) -> dict[str, pa.Table]:
    """A folded batch as the flat tables (`captures`, then each nested table present), with `SCHEMA`'s columns."""
    children = [name for name in CHILD_TABLES if name in folded.column_names]
    out = {"captures": folded.select(list(SCHEMA["captures"].names))}
    ids = folded.column("capture_id")
    for name in children:
        lists = folded.column(name).combine_chunks()
        items = pc.list_flatten(lists)
        parents = pc.list_parent_indices(lists)
        columns: dict[str, pa.Array] = {"capture_id": pc.take(ids, parents)}
        # flatten(), not field(i): it honours the offset a sliced struct array starts at.
        columns.update(zip([field.name for field in items.type], items.flatten()))
        out[name] = pa.table(columns, schema=arrow_schema(name))
    return out
