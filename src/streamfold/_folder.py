"""The pipeline: bytes -> frames -> payloads -> dialect -> merge -> Result.

`Folder` is incremental and sans-I/O: `feed(chunk)` returns what the chunk
completed, `close()` returns the `Result`. `fold(data)` is feed-all plus
close without collecting per-chunk events. However the bytes are chunked,
the result is the same.

Bad input never raises here: it becomes an error or a diagnostic pointing at
its frame. Only misuse raises (feeding after close, a wrong argument type).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import repeat
from typing import Any

from ._decode import DONE_SENTINEL, PayloadKind, decode_data
from ._eventstream import EventStreamParser
from ._events import Event, FinishReason, Finding, TextDelta, ToolCallDelta, ToolCallDone, UsageUpdate
from ._frames import (DATA, DEFAULT_MAX_FRAME_SIZE, INDEX, ISSUES, TERMINATED, FrameRecord, Framer, FramerOutput,
                      FrameRun, FrameSequence, FrameStore, make_frame)
from ._jsonarray import JSONArrayParser
from ._json import loads, loads_utf8
from ._merge import Merger
from ._ndjson import NDJSONParser
from ._report import Diagnostic, Report, StreamError
from ._result import Result, build_result
from ._sniff import TRANSPORTS, sniff
from ._sse import SSEParser
from .dialects import DIALECTS, Dialect, detect
from .dialects.unknown import Unknown

__all__ = ["Folder", "fold"]

_FRAMERS: dict[str, type[Framer]] = {
    "sse": SSEParser, "ndjson": NDJSONParser, "json-array": JSONArrayParser, "aws-eventstream": EventStreamParser}
# A transport only one dialect uses decides the dialect (the payloads alone do not say).
_TRANSPORT_DIALECTS = {"aws-eventstream": "bedrock"}
# Payloads buffered while no dialect has claimed one; past this, "unknown".
_DETECTION_WINDOW = 16
_SNIFF_WINDOW = 64 * 1024
# Frame issues that mean bytes were lost or damaged: errors, not diagnostics.
_FRAMING_ERRORS = frozenset({"frame-too-large", "crc-mismatch", "bad-prelude", "truncated-message", "bad-headers"})
# fold() feeds a whole capture in slices of this size.
_FOLD_SLICE = 1024 * 1024
# A dialect's fold of what its fast decoder returns (see Dialect.fold_fast).
_FoldFast = Callable[[Any, int, "bytes | None"], bool]
# feed() keeps chunks shorter than _DEFER_CHUNK, up to _DEFER_COUNT of them, before framing.
_DEFER_CHUNK = 256
_DEFER_COUNT = 4096

_JSON, _DONE, _COMMENT = PayloadKind.JSON, PayloadKind.DONE, PayloadKind.COMMENT
_TEXT_FIELDS = ("content", "reasoning", "refusal")


class Folder:
    """Fold a stream incrementally.

    >>> folder = Folder()
    >>> for chunk in (b'data: {"object":"chat.completion.chunk","choices":[{"index":0,', b'"delta":{"content":"Hi"}}]}\\n\\n'):
    ...     events = folder.feed(chunk)
    >>> events
    [TextDelta(frame=0, choice=0, field='content', text='Hi')]
    >>> folder.close().choices[0].content
    'Hi'
    """

    def __init__(self, dialect: str | None = None, *, transport: str | None = None,
                 max_frame_size: int = DEFAULT_MAX_FRAME_SIZE, _events: bool = True) -> None:
        if dialect is not None and dialect not in DIALECTS:
            raise ValueError(f"unknown dialect {dialect!r}; known: {', '.join(DIALECTS)}")
        if transport is not None and transport not in TRANSPORTS:
            raise ValueError(f"unknown transport {transport!r}; known: {', '.join(TRANSPORTS)}")
        self.max_frame_size = max_frame_size
        self.transport = transport
        self._framer: Framer | None = None
        self._head = bytearray()
        self._frames = FrameStore()
        self._kinds: list[PayloadKind] = []
        self._merger = Merger(journal=_events)
        self._report = Report(self._frames)
        self._dialect: Dialect | None = (
            DIALECTS[dialect](self._merger, self._report, self._frames) if dialect else None)
        if self._dialect is not None:
            self._dialect.transport = transport
        self._undetected: list[tuple[Any, int]] = []
        self._after_terminal: list[int] = []
        # Errors the transport carried before any dialect was chosen (F5).
        self._pending_errors: list[tuple[int, str, str | None, int, int]] = []
        self._closed = False
        self._deferred: list[bytes] = []
        self._deferrable = False
        # Payloads the dialect's fast decoder refused since frame _fast_since. When too
        # many are, it is not tried again before frame _fast_paused_until (a miss costs
        # an exception), and each pause is twice as long as the last.
        self._fast_misses = self._fast_since = self._fast_paused_until = 0
        self._fast_pause = 256
        self._tool_names: dict[tuple[Any, ...], Any] = {}
        if transport is not None:
            self._start(transport)

    @property
    def frames(self) -> FrameSequence:
        """The frames seen so far."""
        return FrameSequence(self._frames)

    @property
    def dialect(self) -> str | None:
        return None if self._dialect is None else self._dialect.name

    def feed(self, chunk: bytes | str) -> list[Event]:
        """Take the next bytes; return the text, tool-call, finish, usage and finding events they completed."""
        if type(chunk) is bytes and self._deferrable and (
                chunk > b"\r" if len(chunk) == 1 else len(chunk) < _DEFER_CHUNK and 10 not in chunk and 13 not in chunk):
            # Without a line end (LF, CR) nothing can complete in SSE or NDJSON:
            # keep small chunks for later, so byte-at-a-time feeding is cheap.
            # (One byte above CR is neither: one comparison says so.)
            deferred = self._deferred
            deferred.append(chunk)
            if len(deferred) < _DEFER_COUNT:
                return []
            chunk = b""
        self._feed(chunk)
        return self._drain()

    def close(self) -> Result:
        """End the stream and return the folded `Result`."""
        if self._closed:
            raise RuntimeError("close() called twice")
        if self._deferred:
            self._feed(b"")
        self._closed = True
        if self._framer is None:
            head, self._head = bytes(self._head), bytearray()
            self._start(sniff(head, final=True) or "sse", head)
        assert self._framer is not None
        self._deferrable = False
        self._fold(self._framer.close_records())
        dialect = self._dialect
        if dialect is None:
            dialect = self._adopt(Unknown)
        last = self._frames[-1][INDEX] if self._frames else 0
        dialect.finish(last)
        self._stream_findings(dialect)
        assert self.transport is not None
        return build_result(self.transport, dialect, self._merger, self._frames, self._kinds,
                            self._report.errors, self._report.diagnostics)

    # -- bytes to frames ------------------------------------------------------

    def _feed(self, chunk: bytes | str) -> None:
        if isinstance(chunk, str):
            chunk = chunk.encode("utf-8")
        elif not isinstance(chunk, (bytes, bytearray, memoryview)):
            raise TypeError(f"feed() takes bytes or str, got {type(chunk).__name__}")
        if self._closed:
            raise RuntimeError("feed() after close(): the stream has ended")
        if self._deferred:
            chunk = b"".join(self._deferred) + chunk
            self._deferred.clear()
        framer = self._framer
        if framer is None:
            # Until the transport is known, bytes wait in _head; a big first chunk is not copied there.
            head: bytes | bytearray | memoryview = chunk
            if self._head:
                self._head += chunk
                head = self._head
            if 10 not in chunk and len(head) > 16 and len(head) < _SNIFF_WINDOW:
                if head is chunk:
                    self._head += chunk
                return  # nothing new to decide on
            transport = sniff(bytes(head[:_SNIFF_WINDOW]), final=len(head) >= _SNIFF_WINDOW)
            if transport is None:
                if head is chunk:
                    self._head += chunk
                return
            self._head = bytearray()
            self._start(transport, bytes(head))
            return
        self._fold(framer.feed_records(chunk))

    def _start(self, transport: str, head: bytes = b"") -> Framer:
        """Frame with this transport from now on, starting with the bytes that waited for it."""
        self.transport = transport
        if self._dialect is not None:
            self._dialect.transport = transport
        framer = self._framer = _FRAMERS[transport](max_frame_size=self.max_frame_size)
        self._deferrable = transport in ("sse", "ndjson")
        if self._dialect is None and transport in _TRANSPORT_DIALECTS:
            self._adopt(DIALECTS[_TRANSPORT_DIALECTS[transport]])
        if head:
            self._fold(framer.feed_records(head))
        return framer

    # -- frames to the merger (the hot loop: once per frame) -----------------

    def _fold(self, output: Sequence[FramerOutput]) -> None:
        for item in output:
            if type(item) is tuple:
                self._frames.append(item)
                self._fold_record(item)
            else:
                assert isinstance(item, FrameRun)
                self._fold_run(item)

    def _fold_run(self, run: FrameRun) -> None:
        """A run of data frames: each decoded straight from its bytes, no record made.

        The dialect's fast decoder is tried first, then plain JSON. A frame both
        refuse ([DONE], invalid JSON or UTF-8, NaN), or any frame while no
        dialect folds, gets its record and the general path.
        """
        self._frames.add_run(run)
        # Every frame of the run is taken for JSON; the general path corrects its frame's kind.
        self._kinds.extend(repeat(_JSON, run.count))
        index, start = run.first, run.payload_start
        dialect, decode, fold_fast = self._fold_state(index)
        for event, piece in zip(run.event_lines(), run.pieces()):
            if decode is not None:
                try:
                    if fold_fast(decode(piece[start:]), index, event):
                        index += 1
                        continue
                except (ValueError, RecursionError):
                    pass
                if self._fast_missed(index):
                    decode = None
            if dialect is not None:
                try:
                    value = loads_utf8(piece[start:])
                except (ValueError, RecursionError):
                    pass
                else:
                    dialect.fold(value, index)
                    index += 1
                    dialect, decode, fold_fast = self._fold_state(index)
                    continue
            self._fold_record(run.record(index))
            index += 1
            dialect, decode, fold_fast = self._fold_state(index)
        run.release()

    def _fold_state(self, frame: int) -> tuple[Dialect | None, Callable[[bytes], Any] | None, _FoldFast]:
        """The dialect that folds payload `frame` (None before detection and after the terminal
        frame), its fast decoder if it is to be tried now (else None), and its fast fold."""
        dialect = self._dialect
        if dialect is None or dialect.terminal is not None:
            return None, None, _no_fast_fold
        if frame < self._fast_paused_until:
            return dialect, None, _no_fast_fold
        return dialect, dialect.fast_decoder, dialect.fold_fast

    def _fast_missed(self, frame: int) -> bool:
        """A payload the fast decoder refused; True when the decoder is to be paused. When that
        happens to more than one frame in eight, this part of the stream is not the shape it
        expects (Anthropic thinking before the text, a vendor's extra field on every chunk):
        pause trying, for longer each time."""
        self._fast_misses += 1
        if self._fast_misses > 16 and self._fast_misses * 8 > frame - self._fast_since:
            self._fast_paused_until = self._fast_since = frame + self._fast_pause
            self._fast_pause = min(2 * self._fast_pause, 1 << 16)
            self._fast_misses = 0
            return True
        return False

    def _kind(self, frame: int, kind: PayloadKind) -> None:
        kinds = self._kinds
        if frame < len(kinds):
            kinds[frame] = kind  # a run's frame, taken for JSON
        else:
            kinds.append(kind)

    def _fold_record(self, frame: FrameRecord) -> None:
        if frame[ISSUES]:
            self._frame_issues(frame)
        data = frame[DATA]
        if data is None:
            self._kind(frame[INDEX], _COMMENT)
            return
        if data == DONE_SENTINEL:
            self._kind(frame[INDEX], _DONE)
            self._payload(_DONE, None, frame[INDEX])
            return
        try:
            value = loads(data)
        except ValueError:
            self._not_one_document(frame)
            return
        self._kind(frame[INDEX], _JSON)
        dialect = self._dialect
        if dialect is not None and dialect.terminal is None:
            dialect.fold(value, frame[INDEX])
        else:
            self._payload(_JSON, value, frame[INDEX])

    def _payload(self, kind: PayloadKind, value: Any, frame: int) -> None:
        """A payload off the fast path: sentinel, before detection, or after the terminal."""
        dialect = self._dialect
        if dialect is not None and kind is _DONE and (not dialect.done_is_terminal or dialect.terminal is not None):
            return  # a gateway's extra [DONE], or one after the end: a sentinel, not data
        if dialect is not None and dialect.terminal is not None:
            self._after_terminal.append(frame)
            return
        if dialect is None:
            if kind is _JSON:
                claimed = detect(value)
                if claimed is None and len(self._undetected) < _DETECTION_WINDOW:
                    self._undetected.append((value, frame))
                    return
                dialect = self._adopt(claimed or Unknown)
            else:
                self._undetected.append((_DONE, frame))
                return
        if kind is _DONE:
            dialect.done(frame)
        else:
            dialect.fold(value, frame)

    def _adopt(self, dialect_class: type[Dialect]) -> Dialect:
        """Choose the dialect, then fold what waited for it."""
        dialect = self._dialect = dialect_class(self._merger, self._report, self._frames)
        dialect.transport = self.transport
        for frame, message, raw, offset, line in self._pending_errors:
            dialect.in_stream_error(frame, message, raw, offset=offset, line=line)
        self._pending_errors.clear()
        waiting, self._undetected = self._undetected, []
        for value, frame in waiting:
            if value is _DONE and (not dialect.done_is_terminal or dialect.terminal is not None):
                continue
            if dialect.terminal is not None:
                self._after_terminal.append(frame)
            elif value is _DONE:
                dialect.done(frame)
            else:
                dialect.fold(value, frame)
        return dialect

    def _not_one_document(self, record: FrameRecord) -> None:
        frame = make_frame(record)
        assert frame.data is not None
        payload = decode_data(frame.data)
        kind = payload.kind
        self._kind(frame.index, kind)
        report = self._report
        if kind is PayloadKind.GLUED:
            documents = payload.value
            starts = ", ".join(str(start) for _, start in documents)
            report.diagnostic(
                "glued-frames", frame.index,
                f"frame {frame.index} holds {len(documents)} JSON documents (at characters {starts} of its data): "
                "the blank line between frames was lost. Each was folded; a client that parses the frame as "
                "one document fails here",
                documents=[document for document, _ in documents])
            for document, _ in documents:
                self._payload(_JSON, document, frame.index)
        elif kind is PayloadKind.DONE:
            self._payload(_DONE, None, frame.index)
        elif kind is PayloadKind.EMPTY:
            report.diagnostic(
                "empty-data", frame.index,
                f"frame {frame.index} has an empty data field; skipped. Clients that JSON-parse every "
                "data field fail here (F8)", severity="info", once=True)
        else:
            hint = ""
            if "data:" in frame.data:
                hint = " It contains `data:`: a frame was probably cut and the next one glued onto it."
            elif not frame.terminated:
                hint = " The stream ended inside this frame."
            report.error(
                "invalid-json", frame.index,
                f"frame {frame.index} is not valid JSON: {payload.error}: character {payload.position} "
                f"of its data; it is kept aside and the rest of the stream folds.{hint}",
                raw=frame.data)
            if self._dialect is not None and self._dialect.terminal is not None:
                self._after_terminal.append(frame.index)

    def _frame_issues(self, frame: FrameRecord) -> None:
        report, index = self._report, frame[INDEX]
        for issue in frame[ISSUES]:
            if issue.code in _FRAMING_ERRORS:
                report.error(issue.code, index, issue.message, offset=issue.offset, line=issue.line)
            elif issue.code == "eventstream-exception":
                self._stream_error(index, issue.message, issue.text or None, issue.offset, issue.line)
            elif issue.code == "unknown-field" and issue.text.partition(":")[0] == "error":
                # F5: llama.cpp before #16109 sent errors as an `error:` field.
                value = issue.text.partition(":")[2].strip()
                self._stream_error(index, "the server sent an error as a non-standard `error:` field "
                                   f"(SSE clients ignore it): {value}", value, issue.offset, issue.line)
            else:
                severity = "info" if issue.code in ("invalid-retry", "invalid-id") else "warning"
                report.diagnostic(issue.code, index, issue.message, severity=severity,
                                  offset=issue.offset, line=issue.line)

    def _stream_error(self, frame: int, message: str, raw: str | None, offset: int, line: int) -> None:
        """An error the transport carried (not a payload): the dialect ends its choices with it."""
        if self._dialect is None:
            self._pending_errors.append((frame, message, raw, offset, line))
        else:
            self._dialect.in_stream_error(frame, message, raw, offset=offset, line=line)

    # -- end of stream ------------------------------------------------------------

    def _stream_findings(self, dialect: Dialect) -> None:
        report, frames = self._report, self._frames
        if frames and not frames[-1][TERMINATED]:
            last = FrameSequence(frames)[-1]
            if self.transport == "sse":
                message = (f"the stream ended inside frame {last.index} (no blank line after it): a spec-exact "
                           "SSE client (a browser's EventSource, many SDKs) drops it; streamfold folded it")
                severity = "warning"
            else:
                message = f"the last frame ({last.index}) has no terminator: the capture may be cut"
                severity = "info"
            report.diagnostic("unterminated-final-frame", last.index, message, severity=severity)
        if self._after_terminal:
            first = self._after_terminal[0]
            report.diagnostic(
                "frame-after-terminal", first,
                f"{len(self._after_terminal)} data frame(s) came after the terminal frame {dialect.terminal} "
                f"({dialect.terminal_hint}), "
                f"starting with frame {first}; clients stop reading at the terminal frame, so they are listed "
                "but not folded", frames=list(self._after_terminal))
        has_data = any(kind is not _COMMENT for kind in self._kinds)
        if not dialect.ended and has_data and not isinstance(dialect, Unknown) and not dialect.failed:
            last_index = frames[-1][INDEX] if frames else None
            report.diagnostic(
                "missing-terminal", last_index,
                f"the stream ended without saying it was over ({dialect.terminal_hint} for {dialect.name}): "
                "it was probably cut off, so the reply may be truncated", severity="warning")

    def _drain(self) -> list[Event]:
        events: list[Event] = []
        # A tool call's name as the changes so far have set it: an event carries the name known
        # at its frame, not at the end of the chunk, so events do not depend on the chunking.
        names = self._tool_names
        for op, path, value, frame in self._merger.drain():
            # Only canonical paths become events; a dialect's own paths stay private.
            choice_path = type(path[0]) is int
            tool_path = choice_path and len(path) == 4 and path[1] == "tool"
            if op == "append":
                if choice_path and len(path) == 2 and path[1] in _TEXT_FIELDS:
                    events.append(TextDelta(frame, path[0], path[1], value))
                elif tool_path and path[3] == "arguments":
                    events.append(ToolCallDelta(frame, path[0], path[2], names.get(path[:3]), value))
            elif op == "parsed":
                if tool_path:
                    events.append(ToolCallDone(frame, path[0], path[2], names.get(path[:3]), value.value, value.error))
            elif tool_path and path[3] == "name":
                names[path[:3]] = value
            elif path == ("usage",):
                events.append(UsageUpdate(frame, value))
            elif choice_path and len(path) == 2 and path[1] == "finish_reason":
                events.append(FinishReason(frame, path[0], value))
        errors, diagnostics = self._report.drain()
        findings: list[StreamError | Diagnostic] = [*errors, *diagnostics]
        events.extend(Finding(finding.frame, finding) for finding in findings)
        return events


def _no_fast_fold(value: Any, frame: int, event: bytes | None) -> bool:
    return False


def fold(data: bytes | str, *, dialect: str | None = None, transport: str | None = None,
         max_frame_size: int = DEFAULT_MAX_FRAME_SIZE, progress: Callable[[int, int], None] | None = None) -> Result:
    """Fold a whole capture at once: `Folder(...).feed(data)` then `close()`.

    `progress(done, total)` is called after each slice (bytes), for a progress bar.
    """
    if not isinstance(data, (bytes, bytearray, memoryview, str)):
        raise TypeError(f"fold() takes bytes or str, got {type(data).__name__}")
    folder = Folder(dialect, transport=transport, max_frame_size=max_frame_size, _events=False)
    if isinstance(data, str):
        data = data.encode("utf-8")
    # Slices keep the intermediate lists small, so the cost per frame stays
    # flat however large the capture (one giant feed was 2.4x slower per frame at 1M).
    for start in range(0, len(data), _FOLD_SLICE):
        folder._feed(data[start : start + _FOLD_SLICE])
        if progress is not None:
            progress(min(start + _FOLD_SLICE, len(data)), len(data))
    return folder.close()
