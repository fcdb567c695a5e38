"""What `POST /api/fold` returns: the JSON contract plus what the page needs
to show every stage without asking the server again.

    {
      "result":     Result.to_dict(), exactly (schema 1),
      "frames":     one row per frame (see `frame_views`),
      "trailing":   bytes after the last frame, decoded (array brackets, extra blank lines),
      "provenance": [{"choice": 0, "field": "content" | "reasoning" | "refusal" | "tool:K",
                      "runs": [[start, end, frame], ...]}, ...],
      "tool_argument_errors": [{"choice": 0, "tool": K, "position": P}, ...],
      "lost_text":  [{"choice", "offset", "frame", "reason", "partial"}, ...]: each frame that did not
                    decode, where in its choice's reply its text would have gone (`services.lost`),
      "export":     the vendor-native non-streaming object, or null,
      "export_error": why there is none, or null,
      "capture":    {"size": bytes, "input_size": bytes, "source": "raw" | "har" | "curl-trace" | ...},
      "arrivals", "stream_timing": when the input had arrival times (each row then has "time"),
      "file", "har": a log's or curl output's own bytes, a HAR's entries (see `file_view`),
      "entry_timing": a HAR entry's own times ({"total", "first_byte", "receive"} in seconds), when it has them,
      "timing":     {"fold_ms": ..., "views_ms": ...}
    }

With `frames="range"` (what the page asks for: a 100k-frame capture's rows are
56 MB of JSON) "frames" is left out and the view says instead

      "frame_count": the number of frames,
      "frame_kinds": one letter per frame (`KIND_LETTERS`), so the page can mark the
                     invalid ones before their rows come,

and the rows come by range from `GET /api/frames` (`frame_views(result, body, start, stop)`).

The contract sits under "result" because it already has a `frames` key (the
counts). Every character position sent to the page (provenance runs, error
positions) is in UTF-16 code units, the unit JavaScript strings index by;
Python counts code points, and the two differ after any character outside
the Basic Multilingual Plane (most emoji).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from ..decoding import PayloadKind, decode_frame, from_line_format
from ..result import Result
from ..services import InflatedTooLargeError, Loaded, read_capture
from ..services.inputs import Capture
from ..services.load import fold_capture
from ..services.lost import lost_text
from ..services.rows import frame_rows
from ..services.timing import DEFAULT_STALL
from .file_view import SpanMap, file_part, har_part
from .refusal import TooLargeError, inflated_too_large

__all__ = ["KIND_LETTERS", "build_fold_view", "frame_kinds", "frame_views", "loaded_view", "provenance_runs",
           "read_posted", "text_fields", "utf16_position"]

#: A frame's kind in "frame_kinds": one letter each.
KIND_LETTERS = {"json": "j", "comment": "c", "done": "d", "empty": "e", "glued": "g", "invalid": "i"}

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_json_encode = msgspec.json.Encoder().encode


def build_fold_view(data: bytes, *, dialect: str | None = None, transport: str | None = None,
                    entry: str | None = None, max_inflated: int | None = None, frames: str = "all",
                    progress: Callable[[int, int], None] | None = None,
                    keep: Callable[[Result, bytes, Sequence[float], SpanMap], str] | None = None,
                    capture: Capture | None = None, lane: str | None = None) -> dict[str, Any]:
    """Load `data` through the services layer and build everything the page shows.

    `data` may be what a person has at hand (a HAR, curl output, a log), read
    like the CLI reads it (`entry`: a HAR's entry, as `--entry` picks it); the page shows the
    stream body it holds, and a log's or curl output's own lines (`file_view`). Raises
    `InputError` when it cannot be used. `max_inflated`: the page's request limit, which a gzip
    body must not inflate past (`TooLargeError` otherwise: see `read_posted`); `capture`: `data`
    already read so (`read_posted`). `progress`, `lane`: as for `services.load`.
    `frames`: "all" (rows in the view) or "range" (the frame index instead; `keep(result, body)`
    stores the fold (and its arrival times) for the range requests and returns its id, "fold_id" in the view).
    """
    started = time.perf_counter()
    if capture is None:
        capture = read_posted(data, entry=entry, max_size=max_inflated)
    loaded = fold_capture(capture, dialect=dialect, transport=transport, progress=progress, input_size=len(data),
                          started=started, lane=lane)
    return loaded_view(loaded, data, frames=frames, keep=keep)


def read_posted(data: bytes, *, entry: str | None = None, max_size: int | None = None) -> Capture:
    """What the page posted, read as the CLI reads it; a gzip body (sent as it is, or a HAR's) that
    inflates past `max_size` raises `TooLargeError`: the limit holds on the inflated size, as it
    does for a body sent with `Content-Encoding: gzip` (`limits.read_body`)."""
    try:
        return read_capture(data, entry=entry, max_inflated=max_size, refuse_larger=max_size is not None)
    except InflatedTooLargeError as exc:
        raise TooLargeError(inflated_too_large(exc.limit)) from None


def loaded_view(loaded: Loaded, data: bytes | None, *, frames: str = "all",
                keep: Callable[[Result, bytes, Sequence[float], SpanMap], str] | None = None) -> dict[str, Any]:
    """`build_fold_view` for a capture already folded (a stored one: `fold_capture`). `data`: the input's
    own bytes when the capture was read out of them (a log's lines), else None."""
    folded = time.perf_counter()
    result, body = loaded.result, loaded.capture.body
    arrivals = loaded.timing.arrivals if loaded.timing is not None else ()
    spans = SpanMap(loaded.capture.segments)
    if frames == "all":
        rows, trailing = frame_views(result, body, arrivals=arrivals, spans=spans)
    else:
        rows, trailing = [], _trailing(result, body)
    try:
        exported: Any = result.export()
        export_error = None
    except NotImplementedError as exc:
        exported, export_error = None, str(exc)
    view: dict[str, Any] = {"result": result.to_dict()}
    if frames == "all":
        view["frames"] = rows
    else:
        view["frame_count"] = len(result.frames)
        view["frame_kinds"] = frame_kinds(result)
        view["fold_id"] = keep(result, body, arrivals, spans) if keep is not None else None
    view.update({
        "trailing": trailing,
        "provenance": [{"choice": choice, "field": field, "runs": provenance_runs(result, choice, field, text)}
                       for choice, field, text in text_fields(result)],
        "tool_argument_errors": _tool_argument_errors(result),
        "lost_text": _lost_text(result),
        "export": exported,
        "export_error": export_error,
        "capture": {"size": len(body), "input_size": loaded.input_size, "source": loaded.capture.source},
    })
    if loaded.timing is not None:
        # The capture carried arrival times (curl --trace-time, a timestamped log): the
        # timeline runs over time (the stalls are among the findings).
        view["arrivals"] = list(loaded.timing.arrivals)
        # `first_byte` is the TTFB under the name the page has read it by.
        view["stream_timing"] = {**loaded.timing.to_dict(), "stall_threshold": DEFAULT_STALL,
                                 "first_byte": loaded.timing.ttfb}
    file = file_part(data, loaded) if data is not None else None
    if file is not None:
        view["file"] = file
    har = har_part(loaded)
    if har is not None:
        view["har"] = har
    if loaded.capture.entry_timing:
        # A HAR times its entry as a whole (first byte, receiving), not each frame.
        view["entry_timing"] = dict(loaded.capture.entry_timing)
    view["timing"] = {"fold_ms": round(loaded.fold_seconds * 1000),
                      "views_ms": round((time.perf_counter() - folded) * 1000)}
    return view


def encode(value: Any) -> bytes:
    """JSON bytes of a view (msgspec: the fold view of a large capture is tens of MB)."""
    return _json_encode(value)


def frame_kinds(result: Result) -> str:
    """Every frame's kind, one letter each (`KIND_LETTERS`): what the page marks before the rows come."""
    letters = {kind: KIND_LETTERS[kind.value] for kind in set(result.frame_kinds)}
    return "".join(map(letters.__getitem__, result.frame_kinds))


def _trailing(result: Result, data: bytes) -> str:
    """The text after the last frame (frames come in order: the last one ends furthest)."""
    end = result.frames[-1].end if len(result.frames) else 0
    return data[end:].decode("utf-8", "replace") if end < len(data) else ""


def frame_views(result: Result, data: bytes, start: int = 0, stop: int | None = None,
                arrivals: Sequence[float] = (), spans: SpanMap | None = None) -> tuple[list[dict[str, Any]], str]:
    """One row per frame (of frames `start` to `stop`): `frame_rows`' fields plus what the raw
    and JSON stages show, and `time` (seconds) when the capture says when each frame arrived.

    Added keys: `raw` (the frame's bytes, UTF-8 decoded with replacement),
    `size` (their number), and,
    only where they have something to say (a 100k-frame capture makes every
    key count): `gap` (bytes between the previous frame and this one, such as
    extra blank lines or a JSON array's commas), `data_span` ([start, end] of
    a JSON frame's data in `raw`, UTF-16 units: the text the core decoded as one
    document, parsed by the page only when shown), `payload_json` (the same
    text when it is not one slice of `raw`, such as multi-line data; for glued
    frames the documents the core split apart, as JSON text of a list of
    {"offset", "document"}), `error` ({"message", "position"}
    of an invalid frame, position in UTF-16 units of `data`), `data` (for
    invalid and empty frames, the text the error points into), `comments`,
    `id`, `retry`, `headers` and `issue_details` (each issue's code, message,
    offset and line), `file_span` (with `spans`: [start, end] of the input's bytes the frame
    was read out of, see `file_view`).

    Returns the rows and the text after the last frame.
    """
    rows: list[dict[str, Any]] = []
    frames = result.frames
    stop = len(frames) if stop is None else max(0, min(stop, len(frames)))
    start = max(0, min(start, stop))
    previous_end = frames[start - 1].end if start else 0
    # Frames the core took only after replacing NaN or a lone surrogate: the page's JSON.parse
    # would refuse (or keep) what the core replaced, so it gets the value the core folded.
    lenient = {d.frame for d in result.diagnostics if d.code == "non-strict-json"}
    for frame, row, kind in zip(frames[start:stop], frame_rows(result, start, stop), result.frame_kinds[start:stop]):
        raw = row["raw"] = frame.raw.decode("utf-8", "replace")
        row["size"] = len(frame.raw)
        if frame.index < len(arrivals):
            row["time"] = round(arrivals[frame.index], 6)
        if spans:
            row["file_span"] = spans.span(frame.offset, frame.end)
        if frame.offset > previous_end:
            row["gap"] = data[previous_end:frame.offset].decode("utf-8", "replace")
        previous_end = max(previous_end, frame.end)
        if kind is PayloadKind.JSON and (frame.index in lenient or from_line_format(frame.data or "")):
            # A line of a dialect's own format (framing.hints) is no JSON text the page could parse: its value is sent.
            row["payload_json"] = _json_encode(decode_frame(frame).value).decode()
        elif kind is PayloadKind.JSON:
            # The core decoded this data as exactly one JSON document: the page parses the same
            # text. It is nearly always one slice of `raw` (a single data line); then only where.
            document = frame.data or ""
            at = raw.find(document)
            if at >= 0:
                at = utf16_position(raw, at) if not raw.isascii() else at
                row["data_span"] = [at, at + _utf16_length(document)]
            else:
                row["payload_json"] = document
        elif kind is PayloadKind.GLUED:
            documents = decode_frame(frame).value
            row["payload_json"] = _json_encode(
                [{"offset": offset, "document": document} for document, offset in documents]).decode()
        elif kind is PayloadKind.INVALID:
            payload = decode_frame(frame)
            row["data"] = frame.data
            position = None
            if payload.position is not None and frame.data is not None:
                position = utf16_position(frame.data, payload.position)
            row["error"] = {"message": payload.error, "position": position}
        elif kind is PayloadKind.EMPTY:
            row["data"] = frame.data
        if frame.comments:
            row["comments"] = list(frame.comments)
        if frame.id is not None:
            row["id"] = frame.id
        if frame.retry is not None:
            row["retry"] = frame.retry
        if frame.headers:
            row["headers"] = [[name, _plain(value)] for name, value in frame.headers]
        if frame.issues:
            row["issue_details"] = [{"code": issue.code, "message": issue.message, "offset": issue.offset,
                                     "line": issue.line} for issue in frame.issues]
        rows.append(row)
    return rows, _trailing(result, data)


def text_fields(result: Result) -> list[tuple[int, str, str]]:
    """(choice, field, text) of every text with provenance: reply, reasoning, refusal, tool arguments."""
    fields = []
    for choice in result.choices:
        for name, text in (("content", choice.content), ("reasoning", choice.reasoning), ("refusal", choice.refusal)):
            if text:
                fields.append((choice.index, name, text))
        for position, call in enumerate(choice.tool_calls):
            if call.arguments:
                fields.append((choice.index, f"tool:{position}", call.arguments))
    return fields


def provenance_runs(result: Result, choice: int, field: str, text: str) -> list[list[int]]:
    """[start, end, frame] runs covering `text`, in UTF-16 units (what JavaScript strings count)."""
    return _runs_in_utf16(text, result.text_runs(choice=choice, field=field))


def utf16_position(text: str, position: int) -> int:
    """A code-point position in `text` as a UTF-16 position."""
    return position + sum(1 for _ in _ASTRAL.finditer(text, 0, position))


def _utf16_length(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2


def _runs_in_utf16(text: str, runs: list[tuple[int, int, int]]) -> list[list[int]]:
    if text.isascii() or max(text) < "\U00010000":
        return [[start, end, frame] for start, end, frame in runs]
    astral = [match.start() for match in _ASTRAL.finditer(text)]
    # The runs come in text order: one pass counts the astral characters before each position
    # (a bisect per position took most of a 100k-frame page's view).
    out, before, count = [], 0, len(astral)
    for start, end, frame in runs:
        while before < count and astral[before] < start:
            before += 1
        utf16_start = start + before
        while before < count and astral[before] < end:
            before += 1
        out.append([utf16_start, end + before, frame])
    return out


def _tool_argument_errors(result: Result) -> list[dict[str, int]]:
    """Where each tool call's joined arguments stop parsing, from the `tool-args-invalid` diagnostics."""
    out = []
    for diagnostic in result.diagnostics:
        details = diagnostic.details
        if diagnostic.code != "tool-args-invalid" or not isinstance(details.get("position"), int):
            continue
        choice = result.choice(details.get("choice", 0))
        position = details.get("tool_call")
        if choice is None or not isinstance(position, int) or not 0 <= position < len(choice.tool_calls):
            continue
        arguments = choice.tool_calls[position].arguments
        out.append({"choice": choice.index, "tool": position,
                    "position": utf16_position(arguments, min(details["position"], len(arguments)))})
    return out


def _lost_text(result: Result) -> list[dict[str, object]]:
    out = []
    for found in lost_text(result):
        choice = result.choice(found.choice)
        content = choice.content if choice is not None else ""
        out.append({**found.to_dict(), "offset": utf16_position(content, min(found.offset, len(content)))})
    return out


def _plain(value: Any) -> Any:
    """A frame header value the JSON encoder takes (binary headers become hex)."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)

