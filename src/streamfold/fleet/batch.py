"""The pure function every engine maps: a batch of captures in, a batch of
folded captures out, an Arrow table.

    folded = fold_batch(pa.Table.from_pylist(records, schema=INPUT_SCHEMA))
    folded = fold_records(records)            # the same rows, from the records as they are

An input row is one of three kinds:

- `file`: the bytes of anything `streamfold show` reads (a raw stream, curl
  output, a log, a HAR, a cassette). A file that holds many exchanges (a HAR,
  a cassette, a trace log) gives one capture per streamed or failed entry,
  with the entry's index in `entry` and `#index` after its capture id.
- `body`: a stream body as a record gave it (a JSONL line, a Parquet row),
  with the arrival times and request metadata the record had.
- `stored`: an exchange of a capture store: its reads, times and headers, folded
  exactly as `streamfold show PATH#ID` folds it.

Each capture is folded as `show` folds it (`services.load.fold_capture`) and made
into the rows of `streamfold.tables`. One that cannot be read or folded is a row
of class `unreadable` with its reason, never an exception: a batch always comes
back whole, so one bad capture costs its row and nothing else.
"""

from __future__ import annotations

import contextlib
import datetime
import gc
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa

from ..services.capture import Capture, InputError
from ..services.inputs import read_capture
from ..services.load import Loaded, fold_capture
from ..store.stored import stored_capture
from ..tables import CaptureInfo, Row, table_rows, unreadable_rows
from .arrow import nest

__all__ = ["INPUT_SCHEMA", "KINDS", "SLICE", "body_capture", "fold_batch", "fold_record", "fold_records"]

KINDS = ("file", "body", "stored")

_HEADERS = pa.list_(pa.struct([pa.field("name", pa.string()), pa.field("value", pa.string())]))

#: The columns of a batch of captures to fold (those a kind does not use are null).
INPUT_SCHEMA = pa.schema([
    pa.field("capture_id", pa.string(), nullable=False),
    pa.field("kind", pa.string(), nullable=False),
    # The bytes: a file's, a body, or a stored exchange's reads joined. Null when the source could not
    # give them; `read_error` then says why.
    pa.field("data", pa.large_binary()),
    pa.field("read_error", pa.string()),
    pa.field("source", pa.string()),
    pa.field("location", pa.string()),
    pa.field("entry", pa.string()),
    pa.field("fingerprint", pa.string()),
    pa.field("input_format", pa.string()),
    pa.field("method", pa.string()),
    pa.field("url", pa.string()),
    pa.field("request_model", pa.string()),
    pa.field("started_at", pa.timestamp("us", tz="UTC")),
    pa.field("status", pa.int64()),
    pa.field("outcome", pa.string()),
    # The recording's reason for a failed exchange.
    pa.field("error", pa.string()),
    pa.field("request_headers", _HEADERS),
    pa.field("response_headers", _HEADERS),
    # Each read's body offset and its arrival, in seconds after the request.
    pa.field("read_offsets", pa.list_(pa.int64())),
    pa.field("read_times", pa.list_(pa.float64())),
])


#: Captures made into Python values at once: a whole batch's rows alive at once are thousands of containers
#: the cyclic garbage collector walks again and again while the fold allocates; a slice's are few, and
#: made into Arrow before the next.
SLICE = 256


def fold_batch(batch: pa.Table | pa.RecordBatch, *, frames: bool = False) -> pa.Table:
    """Fold every capture of `batch` (`INPUT_SCHEMA`) into one folded batch (`arrow.folded_schema`)."""
    return _folded((batch.slice(start, SLICE).to_pylist() for start in range(0, batch.num_rows, SLICE)), frames)


def fold_records(records: Sequence[Mapping[str, Any]], *, frames: bool = False) -> pa.Table:
    """`fold_batch` of the table these rows (dicts of `INPUT_SCHEMA`'s columns) make, without making it: what
    the local engine and Dask fold (a batch sent to a process as Python values is pickled as fast as a
    table; made into one and back, it costs a tenth of the fold)."""
    return _folded((records[start:start + SLICE] for start in range(0, len(records), SLICE)), frames)


#: Set in the processes a fleet owns (the `streamfold fleet fold` command's, its pool's workers): a batch
#: folds there with what was alive before it frozen from the garbage collector. Not in a caller's process (a
#: Python caller's, a Dask or Ray worker), whose garbage it would keep from being collected meanwhile.
freeze_what_lives_on = False


def _folded(slices: Iterable[Sequence[Mapping[str, Any]]], frames: bool) -> pa.Table:
    with _collector_skips_what_lives_on() if freeze_what_lives_on else contextlib.nullcontext():
        parts = [nest([rows for record in part for rows in fold_record(record, frames=frames)], frames=frames)
                 for part in slices]
    return pa.concat_tables(parts) if parts else nest([], frames=frames)


@contextlib.contextmanager
def _collector_skips_what_lives_on() -> Iterator[None]:
    """The cyclic garbage collector left to what a batch's fold makes: everything alive before it (the batch's
    records, every module Arrow brought) frozen meanwhile. Walked again at each collection, they cost a
    fleet twice the collector's time of a bare loop of the fold. A process that froze objects of its own
    (`gc.freeze`) is left as it is, since unfreezing would undo that."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def fold_record(record: Mapping[str, Any], *, frames: bool = False) -> Iterator[dict[str, list[Row]]]:
    """The rows of `streamfold.tables` for each capture one input row holds."""
    try:
        if record["read_error"] is not None or record["data"] is None:
            raise InputError(record["read_error"] or "the source gave no bytes for it")
        if record["kind"] == "file":
            yield from _file_captures(record, frames)
            return
        capture = _stored(record) if record["kind"] == "stored" else body_capture(record)
        yield _fold(capture, record["capture_id"], record, None, frames)
    except InputError as exc:
        yield unreadable_rows(record["capture_id"], str(exc), capture=_info(record), frames=frames)
    except RecursionError:
        yield unreadable_rows(record["capture_id"], "the capture is nested too deeply to read",
                              capture=_info(record), frames=frames)
    except Exception as exc:  # a bug in streamfold: it costs this capture's row, not the fleet's run
        yield unreadable_rows(record["capture_id"], f"streamfold failed on it ({type(exc).__name__}: {exc}); "
                              "this is a bug in streamfold, please report it", capture=_info(record), frames=frames)


def _file_captures(record: Mapping[str, Any], frames: bool) -> Iterator[dict[str, list[Row]]]:
    data, input_format = record["data"], record["input_format"] or "auto"
    first = read_capture(data, input_format=input_format)
    wanted = [entry.index for entry in first.entries if entry.streamed or entry.failed]
    if first.entry is None or len(wanted) <= 1:
        yield _fold(first, _entry_id(record, first.entry), record, first.entry, frames)
        return
    for index in wanted:
        capture_id = _entry_id(record, index)
        try:
            capture = first if index == first.entry else read_capture(data, input_format=input_format,
                                                                      entry=str(index))
        except InputError as exc:
            yield unreadable_rows(capture_id, str(exc), capture=_info(record, index), frames=frames)
            continue
        yield _fold(capture, capture_id, record, index, frames)


def _fold(capture: Capture, capture_id: str, record: Mapping[str, Any], entry: int | None,
          frames: bool) -> dict[str, list[Row]]:
    loaded = fold_capture(capture)
    return table_rows(loaded.result, capture_id, capture=_info(record, entry, loaded), frames=frames)


def body_capture(record: Mapping[str, Any]) -> Capture:
    """The `Capture` of a `body` row (a JSONL line's, a Parquet row's): its body, reads and metadata."""
    reads = _reads(record)
    return Capture(bytes(record["data"]), record["source"] or "body", reads, record["status"],
                   _pairs(record["response_headers"]), _pairs(record["request_headers"]), record["url"],
                   started=0.0 if reads else None)


def _stored(record: Mapping[str, Any]) -> Capture:
    data, reads = record["data"], _reads(record) or ()
    ends = [offset for offset, _ in reads[1:]] + [len(data)]
    chunks = [data[offset:end] for (offset, _), end in zip(reads, ends)]
    entry = record["entry"] or "0"
    return stored_capture(int(entry) if entry.isdigit() else 0, chunks, reads, status=record["status"],
                          response_headers=_pairs(record["response_headers"]),
                          request_headers=_pairs(record["request_headers"]), url=record["url"] or "",
                          method=record["method"] or "", outcome=record["outcome"], error=record["error"])


def _reads(record: Mapping[str, Any]) -> tuple[tuple[int, float], ...] | None:
    offsets, times = record["read_offsets"], record["read_times"]
    if not offsets or times is None or len(offsets) != len(times):
        return None
    return tuple(zip(offsets, times))


def _pairs(headers: list[dict[str, str]] | None) -> tuple[tuple[str, str], ...]:
    return tuple([(pair["name"], pair["value"]) for pair in headers]) if headers else ()


def _info(record: Mapping[str, Any], entry: int | None = None, loaded: Loaded | None = None) -> CaptureInfo:
    """What is known of a capture: its record's metadata, the entry of a file that holds many, and (when it
    was folded) what its reading and folding told: the body's source, URL, status and timing."""
    started, status, url, data = record["started_at"], record["status"], record["url"], record["data"]
    capture = timing = None
    if loaded is not None:
        capture, timing = loaded.capture, loaded.timing
        url, status, data = url or capture.url, capture.status if status is None else status, capture.body
    return CaptureInfo(
        source=record["source"] if capture is None else capture.source, location=record["location"],
        entry=record["entry"] if entry is None else str(entry), method=record["method"], url=url,
        request_model=record["request_model"], started_at=started if isinstance(started, datetime.datetime) else None,
        status=status, outcome=record["outcome"], ttfb=None if timing is None else timing.ttfb,
        ttft=None if timing is None else timing.ttft, duration=None if timing is None else timing.duration,
        body_bytes=None if data is None else len(data),
        read_count=len(capture.reads) if capture is not None and capture.reads else None,
        fingerprint=record["fingerprint"])


def _entry_id(record: Mapping[str, Any], entry: int | None) -> str:
    return record["capture_id"] if entry is None else f"{record['capture_id']}#{entry}"
