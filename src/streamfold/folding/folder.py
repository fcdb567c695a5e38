"""The pipeline: bytes -> frames -> payloads -> dialect -> merge -> Result.

`Folder` is incremental and sans-I/O: `feed(chunk)` returns what the chunk
completed, `finish()` what the end of the stream completed, `close()` the
`Result`. `fold(data)` is feed-all plus close without collecting events.
However the bytes are chunked, the result is the same.

Strategy. A Folder is in one `Phase` at a time, and what a payload does is
looked up by phase (`_ON_PAYLOAD`): while no dialect has claimed a payload,
payloads wait (DETECT); then the dialect folds them (FOLD); after its terminal
frame they are only listed (AFTER_TERMINAL). Framing, decoding, the findings
of framing and the building of the Result each live in their own module;
the speed tricks (runs, fast decoders, deferral) in `_runs`.

Bad input never raises here: it becomes an error or a diagnostic pointing at
its frame. Only misuse raises (feeding after close, a wrong argument type).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from .._codes import CODES
from ..decoding import Payload, PayloadKind, decode_text
from ..dialects import DIALECTS, Dialect, detect, for_transport
from ..dialects.unknown import Unknown
from ..findings import DEFAULT_MAX_FINDINGS_PER_CODE, Report, StreamError
from ..framing import DEFAULT_MAX_FRAME_SIZE, TRANSPORTS, Framer, sniff
from ..framing._fold_framers import FOLD_FRAMERS
from ..framing._records import FrameRecord, FramerOutput, FrameRun, FrameSequence, FrameStore, fold_fields
from ..framing._runs import REBUILD
from ..framing.websocket import WebSocketParser
from ..merge import DEFAULT_MAX_CHOICES, DEFAULT_MAX_TOOL_CALLS, Merger
from ..result import Result
from ..trace import KIND_CODES, FrameKinds
from ._build import build_result
from ._issues import report_frame_issues, report_glued, report_invalid_json, report_lenient, report_stream_end
from ._journal import NO_EVENTS, Events, JournalReader
from ._lanes import checked_lane, lanes_of, report_missing_lane
from ._limits import check_limits
from ._request import Headers, header_map
from ._runs import DEFER_CHUNK, DEFER_COUNT, RunFolding

__all__ = ["Folder", "Phase"]

# Payloads buffered while no dialect has claimed one; past this, "unknown".
_DETECTION_WINDOW = 16
_SNIFF_WINDOW = 64 * 1024
_JSON, _DONE, _COMMENT, _INVALID = PayloadKind.JSON, PayloadKind.DONE, PayloadKind.COMMENT, PayloadKind.INVALID


class Phase(enum.Enum):
    """Where a `Folder` is in its stream."""

    # Members are singletons, so they hash by identity, in C (`Enum.__hash__` is Python code,
    # and the table `_ON_PAYLOAD` is read once a frame).
    __hash__ = object.__hash__

    #: Bytes wait until the first ones say the transport (SSE, NDJSON, JSON array, event-stream).
    SNIFF = "sniff"
    #: Framing; no dialect has claimed a payload yet, so payloads wait (up to a window).
    DETECT = "detect"
    #: The dialect folds every payload.
    FOLD = "fold"
    #: The dialect's terminal frame came: later data frames are listed, not folded.
    AFTER_TERMINAL = "after-terminal"
    #: The stream has ended (`finish()` or `close()`): nothing more can be fed.
    CLOSED = "closed"


class Folder(RunFolding):
    """Fold a stream incrementally.

    Examples:
        >>> folder = Folder()
        >>> head = b'data: {"object":"chat.completion.chunk","choices":[{"index":0,'
        >>> tail = b'"delta":{"content":"Hi"}}]}\\n\\n'
        >>> events = folder.feed(head) + folder.feed(tail)
        >>> events
        [streamfold.TextDelta(frame=0, choice=0, field='content', text='Hi')]
        >>> folder.close().choices[0].content
        'Hi'

    `events=False` makes `feed()` and `finish()` return nothing and journals no change (a one-shot fold).
    `trace=False` builds no `Trace` (`result.trace` is None), and the Folder lets go of its frames
    and text buffers when the stream ends: for fleets, which keep only the Result.
    Limits, each said by a finding when hit: `max_frame_size`, `max_findings_per_code`, `max_choices`, `max_tool_calls`.
    `lane`: the lane to fold, of a capture that interleaves replies (`Result.lanes` lists them: a Responses
    WebSocket `stream_id`, a Realtime response, an agent); None folds the dialect's default one.
    `request_headers`: the request's, when known (a HAR's, a stored capture's): the protocol version an MCP
    client asked for, ... (pairs or a mapping; names are case-insensitive).
    """

    def __init__(self, dialect: str | None = None, *, transport: str | None = None,
                 max_frame_size: int = DEFAULT_MAX_FRAME_SIZE, events: bool = True, trace: bool = True,
                 max_findings_per_code: int = DEFAULT_MAX_FINDINGS_PER_CODE, max_choices: int = DEFAULT_MAX_CHOICES,
                 max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS, lane: str | None = None,
                 request_headers: Headers | None = None) -> None:
        if dialect is not None and dialect not in DIALECTS:
            raise ValueError(f"unknown dialect {dialect!r}; known: {', '.join(DIALECTS)}")
        if transport is not None and transport not in TRANSPORTS:
            raise ValueError(f"unknown transport {transport!r}; known: {', '.join(TRANSPORTS)}")
        self.max_frame_size = max_frame_size
        self.transport = transport
        self._lane = checked_lane(lane)
        self._request_headers = header_map(request_headers)
        self._trace = trace
        self.phase = Phase.SNIFF
        self._framer: Framer | None = None
        self._held: int | None = None  # the index of a frame folded before its framer gave it (`_frame`)
        self._head = bytearray()
        self._frames = FrameStore()
        self._kinds = bytearray()  # each frame's `KIND_CODES`
        self._comments = self._invalid = 0  # counted as kinds are set (counting them at the end cost 3%)
        if (max_findings_per_code is not DEFAULT_MAX_FINDINGS_PER_CODE or max_choices is not DEFAULT_MAX_CHOICES
                or max_tool_calls is not DEFAULT_MAX_TOOL_CALLS):
            check_limits(max_findings_per_code=max_findings_per_code, max_choices=max_choices,
                         max_tool_calls=max_tool_calls)
        self._merger = Merger(journal=events, max_choices=max_choices, max_tool_calls=max_tool_calls,
                              on_cap=lambda code, frame, message: self._report.diagnostic(code, frame, message))
        self._report = Report(self._frames, journal=self._merger.journal, max_per_code=max_findings_per_code)
        self._dialect: Dialect | None = None
        if dialect is not None:
            self._dialect = DIALECTS[dialect](self._merger, self._report, self._frames)
            self._configure(self._dialect)
        self._undetected: list[tuple[Any, int]] = []
        self._after_terminal: list[int] = []
        # Errors the transport carried before any dialect was chosen.
        self._pending_errors: list[tuple[int, str, str | None, int, int]] = []
        self._deferred: list[bytes] = []
        self._deferrable = False
        self._journal = JournalReader()
        self._result: Result | None = None
        self._returned = False
        if transport is not None:
            self._start(transport)

    @property
    def frames(self) -> FrameSequence:
        """The frames seen so far."""
        return FrameSequence(self._frames)

    def settled(self) -> tuple[int, Sequence[PayloadKind], Sequence[StreamError]]:
        """For a front that lists frames as they fold: how many are final (record and kind: a frame
        held for its CR's LF is not), every frame's kind, and the errors so far."""
        return len(self._frames) - (self._held is not None), FrameKinds(self._kinds), self._report.errors

    @property
    def dialect(self) -> str | None:
        return None if self._dialect is None else self._dialect.reported.name

    def feed(self, chunk: bytes | str) -> Events:
        """Take the next bytes; return the text, tool-call, finish, usage and finding events they completed
        (an `Events`, whose values are made when it is first read: unread, they cost nothing)."""
        # Deferral (folding/_runs.py): a chunk with no line end, LF or CR, can wait; one byte
        # above CR is neither. Inline, as it runs once per byte when bytes come one at a time.
        if type(chunk) is bytes and self._deferrable and (
                chunk > b"\r" if len(chunk) == 1 else len(chunk) < DEFER_CHUNK and 10 not in chunk and 13 not in chunk):
            deferred = self._deferred
            deferred.append(chunk)
            if len(deferred) < DEFER_COUNT:
                return NO_EVENTS
            chunk = b""
        self._feed(chunk)
        return self._drain()

    def finish(self) -> Events:
        """End the stream; return the events its end completed (tool calls parsed at the end,
        end-of-stream findings). The Result is then `close()`'s."""
        if self.phase is Phase.CLOSED:
            raise RuntimeError("the stream has already ended (finish() or close() was called)")
        if self._deferred:
            self._feed(b"")
        if self._framer is None:
            head, self._head = bytes(self._head), bytearray()
            self._start(sniff(head, final=True) or "sse", head)
        assert self._framer is not None
        self._deferrable = False
        output = self._framer.close_records()
        self._lane_taken_by_framer()
        self._fold(output)
        for issue in self._framer.stream_issues:  # in no frame (SSE: a last line without line end, discarded)
            self._report.diagnostic(CODES[issue.code].code, None, issue.message, offset=issue.offset, line=issue.line)
        dialect = self._dialect
        if dialect is None:
            dialect = self._adopt(Unknown)
        dialect.finish(max(len(self._frames) - 1, 0))
        self._merger.flush_caps(max(len(self._frames) - 1, 0))
        report_stream_end(self._report, self._frames, self.transport, dialect, self._after_terminal,
                          has_data=self._comments < len(self._kinds))
        lanes = lanes_of(dialect.reported, self._framer)
        if self._lane is not None:
            report_missing_lane(self._report, self._lane, lanes)
        self._report.collapse()
        self.phase = Phase.CLOSED
        assert self.transport is not None
        self._result = build_result(self.transport, dialect, self._merger, self._frames,
                                    (self._kinds, self._comments, self._invalid),
                                    self._report.errors, self._report.diagnostics,
                                    lanes if len(lanes) > 1 else (), trace=self._trace)
        events = self._drain()
        if not self._trace:
            self._frames.clear()  # nothing reads them now: the Result is all that is kept
            self._merger.texts.clear()
        return events

    def close(self) -> Result:
        """End the stream (if `finish()` did not) and return the folded `Result`."""
        if self._result is None:
            self.finish()
        elif self._returned:
            raise RuntimeError("close() called twice")
        self._returned = True
        assert self._result is not None
        return self._result

    # -- bytes to frames ------------------------------------------------------

    def _feed(self, chunk: bytes | str) -> None:
        if isinstance(chunk, str):
            chunk = chunk.encode("utf-8", "surrogatepass")  # see fold()
        elif not isinstance(chunk, (bytes, bytearray, memoryview)):
            raise TypeError(f"feed() takes bytes or str, got {type(chunk).__name__}")
        if self.phase is Phase.CLOSED:
            raise RuntimeError("feed() after close(): the stream has ended")
        if self._deferred:
            chunk = b"".join(self._deferred) + chunk
            self._deferred.clear()
        if self._framer is None:
            self._sniff(chunk)
            return
        self._frame(self._framer, chunk)

    def _sniff(self, chunk: bytes | bytearray | memoryview) -> None:
        """Phase.SNIFF: bytes wait in _head until they say the transport (a big first chunk is not copied)."""
        head: bytes | bytearray | memoryview = chunk
        if self._head:
            self._head += chunk
            head = self._head
        if 10 not in chunk and 13 not in chunk and len(head) > 16 and len(head) < _SNIFF_WINDOW:
            if head is chunk:
                self._head += chunk
            return  # no new line end (CR or LF): nothing new to decide on
        transport = sniff(bytes(head[:_SNIFF_WINDOW]), final=len(head) >= _SNIFF_WINDOW)
        if transport is None:
            if head is chunk:
                self._head += chunk
            return
        self._head = bytearray()
        self._start(transport, bytes(head))

    def _start(self, transport: str, head: bytes = b"") -> None:
        """Frame with this transport from now on, starting with the bytes that waited for it."""
        self.transport = transport
        self._framer = FOLD_FRAMERS[transport](max_frame_size=self.max_frame_size)
        if isinstance(self._framer, WebSocketParser):
            self._framer.lane = self._lane
        self._frames.rebuild = REBUILD.get(transport)
        self._deferrable = transport in ("sse", "ndjson")
        if self._dialect is not None:
            owner = for_transport(transport)
            if owner is not None and type(self._dialect) is not owner:
                # A vendor's dialect forced on a carrier's transport (`anthropic` on Bedrock bytes).
                carrier = owner(self._merger, self._report, self._frames)
                self._configure(carrier)
                if carrier.carry(self._dialect):
                    self._dialect = carrier
            self._dialect.transport = transport
            self.phase = Phase.FOLD
        else:
            self.phase = Phase.DETECT
            owner = for_transport(transport)
            if owner is not None:
                self._adopt(owner)
        if head:
            self._frame(self._framer, head)

    # -- frames to the dialect ------------------------------------------------------

    def _frame(self, framer: Framer, chunk: bytes) -> None:
        """Fold what a chunk completed, and a frame the CR at its end completed (SSE: a CR ends a blank line
        whatever follows; only its raw waits for an LF). The framer's own record of it replaces it later."""
        output = framer.feed_records(chunk)
        if self._lane is not None:
            self._lane_taken_by_framer()
        self._fold(output)
        if framer._held_cr and self._held is None:
            held = framer.held_frame()
            if held is not None:
                self._fold([held])
                self._held = held[0]

    def _fold(self, output: Sequence[FramerOutput]) -> None:
        if self._held is not None and output:
            first = output[0]  # the framer's own record of the frame folded early: its raw complete
            assert type(first) is tuple and first[0] == self._held
            self._frames.replace_last(first)
            self._held = None
            output = output[1:]
        for item in output:
            if type(item) is tuple:
                self._frames.append(item)
                self._fold_record(item)
            else:
                assert isinstance(item, FrameRun)
                self._fold_run(item)

    def _folding_dialect(self) -> Dialect | None:
        """The dialect while it folds (Phase.FOLD); None otherwise. Notices its terminal frame."""
        if self.phase is not Phase.FOLD:
            return None
        dialect = self._dialect
        assert dialect is not None
        if dialect.terminal is not None:
            self.phase = Phase.AFTER_TERMINAL
            return None
        return dialect

    def _kind(self, frame: int, kind: PayloadKind) -> None:
        kinds = self._kinds
        code = 0 if kind is _JSON else KIND_CODES[kind]  # (most are JSON: an Enum hashes in Python code)
        if frame < len(kinds):
            kinds[frame] = code  # a run's frame, taken for JSON (its kind is set here once)
        else:
            kinds.append(code)
        if kind is _COMMENT:
            self._comments += 1
        elif kind is _INVALID:
            self._invalid += 1

    def _fold_record(self, record: FrameRecord) -> None:
        """The plain path of one frame: its findings, the decoding step, the payload by phase."""
        index, data, issues = fold_fields(record)
        if issues:
            report_frame_issues(index, issues, self._report, self._stream_error)
        if data is None:
            self._kind(index, _COMMENT)
            return
        kind, value = decode_text(data)
        self._kind(index, kind)
        if kind is _JSON and type(value) is Payload:
            report_lenient(index, value, self._report)  # NaN or a lone surrogate, replaced
            value = value.value
        if kind is _JSON or kind is _DONE:
            dialect = self._folding_dialect() if kind is _JSON else None
            if dialect is not None:
                dialect.fold(value, index)
            else:
                self._payload(kind, value, index)
        else:
            self._not_one_document(record, value)

    def _payload(self, kind: PayloadKind, value: Any, frame: int) -> None:
        """A JSON payload or `[DONE]`, done as the phase says."""
        if self.phase is Phase.FOLD:
            self._folding_dialect()  # the phase may have moved on
        self._ON_PAYLOAD[self.phase](self, kind, value, frame)

    def _detect_payload(self, kind: PayloadKind, value: Any, frame: int) -> None:
        """Phase.DETECT: the first payload a dialect claims chooses it; until then payloads wait."""
        if kind is not _JSON:
            self._undetected.append((_DONE, frame))
            return
        claimed = detect(value)
        if claimed is None and len(self._undetected) < _DETECTION_WINDOW:
            self._undetected.append((value, frame))
            return
        self._adopt(claimed or Unknown)
        self._payload(kind, value, frame)

    def _fold_payload(self, kind: PayloadKind, value: Any, frame: int) -> None:
        """Phase.FOLD: the dialect folds it; `[DONE]` ends the stream where the dialect says it does."""
        dialect = self._dialect
        assert dialect is not None
        if kind is _DONE:
            if dialect.done_is_terminal:
                dialect.done(frame)
        else:
            dialect.fold(value, frame)

    def _listed_payload(self, kind: PayloadKind, value: Any, frame: int) -> None:
        """Phase.AFTER_TERMINAL: data frames are listed; a gateway's extra `[DONE]` is a sentinel, not data."""
        if kind is not _DONE:
            self._after_terminal.append(frame)

    _ON_PAYLOAD: ClassVar[dict[Phase, Callable[[Folder, PayloadKind, Any, int], None]]] = {
        Phase.DETECT: _detect_payload, Phase.FOLD: _fold_payload, Phase.AFTER_TERMINAL: _listed_payload}

    def _adopt(self, dialect_class: type[Dialect]) -> Dialect:
        """Choose the dialect, then fold what waited for it."""
        dialect = self._dialect = dialect_class(self._merger, self._report, self._frames)
        self._configure(dialect)
        self.phase = Phase.FOLD
        for frame, message, raw, offset, line in self._pending_errors:
            dialect.in_stream_error(frame, message, raw, offset=offset, line=line)
        self._pending_errors.clear()
        waiting, self._undetected = self._undetected, []
        for value, frame in waiting:
            self._payload(_DONE if value is _DONE else _JSON, None if value is _DONE else value, frame)
        return dialect

    def _configure(self, dialect: Dialect) -> None:
        """What a dialect is told before its first payload: the transport, the lane asked for, the request."""
        dialect.transport, dialect.lane, dialect.request_headers = self.transport, self._lane, self._request_headers
        self._lane_taken_by_framer()

    def _lane_taken_by_framer(self) -> None:
        """A lane asked for that is the framer's (a WebSocket `stream_id`) is not the dialect's to look for:
        it folds that lane's replies as it folds a capture's (its default lane of agents, say)."""
        framer, dialect = self._framer, self._dialect
        if isinstance(framer, WebSocketParser) and framer.followed_lane is not None and \
                framer.followed_lane == self._lane and dialect is not None:
            dialect.lane = dialect.reported.lane = None

    def _not_one_document(self, record: FrameRecord, payload: Payload) -> None:
        """A frame whose data is not one JSON document: glued documents, empty, or invalid."""
        # Read from the record, not a Frame: making one would split a block's million comments.
        index, data, _ = fold_fields(record)
        assert data is not None
        kind, report = payload.kind, self._report
        if kind is PayloadKind.GLUED:
            documents = payload.value  # decoded as read (`GluedDocuments`): one at a time
            report_glued(report, index, documents)
            for document, _ in documents:
                self._payload(_JSON, document, index)
        elif kind is PayloadKind.EMPTY:
            report.diagnostic(
                "empty-data", index,
                f"frame {index} has an empty data field; skipped. Clients that JSON-parse every "
                "data field fail here", once=True)
        else:
            report_invalid_json(report, index, data, payload, self._frames.terminated(index))
            if self._folding_dialect() is None and self.phase is Phase.AFTER_TERMINAL:
                self._after_terminal.append(index)

    def _stream_error(self, frame: int, message: str, raw: str | None, offset: int, line: int) -> None:
        """An error the transport carried (not a payload): the dialect ends its choices with it."""
        if self._dialect is None:
            self._pending_errors.append((frame, message, raw, offset, line))
        else:
            self._dialect.in_stream_error(frame, message, raw, offset=offset, line=line)

    def _drain(self) -> Events:
        return self._journal.read(self._merger)

