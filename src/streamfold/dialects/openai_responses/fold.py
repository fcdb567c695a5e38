"""OpenAI Responses API (`POST /v1/responses`, `stream: true`): reference §4.2,
traps R1-R4 and U1.

Everything vendor-specific lives here. Output items are keyed by
`output_index`, parts by `content_index` (summary parts by `summary_index`).
All visible text goes to choice 0's content, refusals to its refusal,
reasoning summaries and raw reasoning text to its reasoning (a blank line
between parts), function calls to tool calls keyed by `output_index` with
`call_id` as their id (R2).

The stream states most things twice: deltas, then the `.done` event of the
part, then `response.output_item.done`, then the terminal `response.output`.
Each later statement is the vendor's final word and REPLACEs what the
deltas built when it differs (R4), with a `done-mismatch` diagnostic; an
*empty* final value next to streamed text is what broken gateways send
(agentgateway/agentgateway#2281, #3326), so the deltas are kept then. Where
no delta came, the final value fills the gap and says so
(`done-without-deltas`, `output-from-terminal`).

The stream ends on `response.completed`, `response.incomplete` or
`response.failed`; gateways add `[DONE]` or send `response.done` (R1). A
`[DONE]` after the end event is harmless (the core ignores it); data frames
after the end are listed, not folded.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..framing import FrameView
from ..merge import Merger, TextBuffer
from ..findings import Report, Severity
from ._base import event_type, CONTENT_FILTER, ERROR, INCOMPLETE, LENGTH, STOP, Dialect, compact_json

if TYPE_CHECKING:
    from ..result import Result
    from ._shapes import ResponsesDelta

try:
    from ._shapes import DECODERS as _DECODERS

    _FAST_SHAPES: Callable[[bytes], Any] | None = _DECODERS["openai-responses"]
except ImportError:  # no msgspec: no fast way
    _FAST_SHAPES = None

__all__ = ["OpenAIResponses"]

CHOICE = 0
_LIFECYCLE = ("response.created", "response.in_progress", "response.queued")
_TERMINAL = ("response.completed", "response.incomplete", "response.failed", "response.done")
#: Status-only and tool-progress events (reference §4.2, "Informational"): ignored without a word.
_INFORMATIONAL = (
    "response.web_search_call.", "response.file_search_call.", "response.mcp_call", "response.mcp_list_tools.",
    "response.code_interpreter_call", "response.image_generation_call.", "response.compaction.",
    "response.steer", "response.audio.", "response.custom_tool_call_input.", "response.shell_call",
    "response.output_text.logprobs", "response.reasoning_summary.", "response.content_part.in_progress",
)
#: How many sequence gaps get a diagnostic of their own; the rest are counted.
_SEQUENCE_REPORTS = 10
_PART_KINDS = {"output_text": "content", "refusal": "refusal", "reasoning_text": "reasoning"}


class _Text:
    """One canonical APPEND buffer, shared by the segments that stream into it."""

    __slots__ = ("path", "buffer", "owner", "segments", "sep")

    def __init__(self, path: tuple[Any, ...], buffer: TextBuffer, sep: str) -> None:
        self.path = path
        self.buffer = buffer
        #: The segment that made the buffer's last piece (its run grows in place).
        self.owner: _Segment | None = None
        self.segments: list[_Segment] = []
        #: Put between two segments (a blank line between reasoning parts).
        self.sep = sep


class _Segment:
    """One streamed string (a text or refusal part, a summary part, a call's
    arguments) and where its pieces sit in the shared buffer: `runs` are
    [first, end) ranges of the buffer's pieces, in arrival order."""

    __slots__ = ("text", "runs", "deltas", "kind", "annotations", "final_annotations", "final_part", "label")

    def __init__(self, text: _Text, kind: str, label: str) -> None:
        self.text = text
        self.runs: list[list[int]] = []
        #: Delta events that carried text.
        self.deltas = 0
        #: output_text | refusal | reasoning_text | summary_text | arguments
        self.kind = kind
        #: annotation_index -> annotation, as `annotation.added` placed them.
        self.annotations: dict[int, Any] | None = None
        #: The annotations a final part (content_part.done, output_item.done, response.output) carried.
        self.final_annotations: list[Any] | None = None
        #: The last final part object (content_part.done, a final item's part), the export's base.
        self.final_part: dict[str, Any] | None = None
        #: How a person names it: "output_text 0 of output item 1".
        self.label = label


class _Item:
    """One output item: the skeleton from `.added`, the final item, its parts."""

    __slots__ = ("index", "type", "id", "skeleton", "final", "parts", "summary", "arguments", "done_frame")

    def __init__(self, index: int, kind: str | None, item_id: str | None) -> None:
        self.index = index
        self.type = kind
        self.id = item_id
        self.skeleton: dict[str, Any] | None = None
        #: From `response.output_item.done` or the terminal `response.output` (R3: authoritative).
        self.final: dict[str, Any] | None = None
        #: content_index -> segment (message output_text/refusal, reasoning_text)
        self.parts: dict[int, _Segment] = {}
        #: summary_index -> segment (reasoning summary_text)
        self.summary: dict[int, _Segment] = {}
        self.arguments: _Segment | None = None
        self.done_frame: int | None = None


class OpenAIResponses(Dialect):
    name = "openai-responses"
    terminal_hint = "`response.completed`, `response.incomplete` or `response.failed`"
    # Raw values: the response status, or `incomplete_details.reason` when the status is incomplete.
    finish_reasons = {
        "completed": STOP,
        "max_output_tokens": LENGTH,
        "content_filter": CONTENT_FILTER,
        "max_messages": INCOMPLETE,
        "steered": INCOMPLETE,
        "incomplete": INCOMPLETE,
        "failed": ERROR,
    }

    def __init__(self, merger: Merger | None = None, report: Report | None = None, frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self._items: dict[int, _Item] = {}
        self._by_id: dict[str, _Item] = {}
        self._texts: dict[tuple[Any, ...], _Text] = {}
        # The hot path: the part the last text delta went to.
        self._hot_key: tuple[Any, Any] | None = None
        self._hot: _Segment | None = None
        self._max_seq: int | None = None
        self.fast_decoder = _FAST_SHAPES
        self._seq_reports = 0
        self._seq_unreported: list[int] = []
        #: The last response object a lifecycle or terminal event carried (the export's envelope).
        self._envelope: dict[str, Any] | None = None
        self._status: str | None = None
        self._error: dict[str, Any] | None = None
        self._handlers = {
            "response.output_text.done": self._text_done,
            "response.content_part.added": self._part_added,
            "response.content_part.done": self._part_done,
            "response.output_text.annotation.added": self._annotation,
            "response.refusal.delta": self._refusal_delta,
            "response.refusal.done": self._refusal_done,
            "response.reasoning_summary_part.added": self._summary_part_added,
            "response.reasoning_summary_part.done": self._summary_part_done,
            "response.reasoning_summary_text.delta": self._summary_delta,
            "response.reasoning_summary_text.done": self._summary_done,
            "response.reasoning_text.delta": self._reasoning_delta,
            "response.reasoning_text.done": self._reasoning_done,
            "response.function_call_arguments.delta": self._arguments_delta,
            "response.function_call_arguments.done": self._arguments_done,
            "response.output_item.added": self._item_added,
            "response.output_item.done": self._item_done,
            "error": self._error_event,
        }
        for kind in _LIFECYCLE:
            self._handlers[kind] = self._lifecycle
        for kind in _TERMINAL:
            self._handlers[kind] = self._terminal

    @classmethod
    def claims(cls, value: Any) -> bool:
        kind = event_type(value)
        if kind is None:
            return False
        if kind.startswith("response."):
            return True
        # The Responses `error` event; Anthropic's has an `error` object and no sequence number.
        return kind == "error" and "sequence_number" in value and "error" not in value

    # -- the fold loop (once per frame: keep it lean) -------------------------

    def fold_fast(self, value: ResponsesDelta, frame: int, event: bytes | None) -> bool:
        """A delta event decoded by `_shapes` (text, refusal, reasoning, summary, arguments), next in
        sequence, for a segment that exists (text: the one the last text delta extended), named by
        its own type or by no event line: folded as `fold` folds it. Anything that would create an
        item or a segment, a sequence gap or another event name is left to `fold`."""
        if event is not None and event != value.event:
            return False
        top = self._max_seq
        if top is None or value.sequence_number != top + 1:
            return False
        kind = value.kind
        segment: _Segment | None
        if kind == "output_text":
            segment = self._hot if (value.output_index, value.part) == self._hot_key else None
        else:
            item = self._items.get(value.output_index)
            if item is None or item.type is None:
                return False
            part = value.part  # None for function arguments, which have one segment per item
            segment = item.arguments if part is None else (item.summary if kind == "summary" else item.parts).get(part)
        if segment is None:
            return False
        self._max_seq = value.sequence_number
        if value.delta:
            segment.deltas += 1
            self._add(segment, value.delta, frame)
        return True

    def fold(self, value: Any, frame: int) -> None:
        if type(value) is not dict:
            self.report.diagnostic(
                "unexpected-payload", frame,
                f"expected a JSON object (a Responses stream event), got {type(value).__name__}; ignored")
            return
        kind = value.get("type")
        if type(kind) is not str:
            error = value.get("error")
            if error:
                # A gateway's chat-style error envelope: the openai SDK raises APIError on it.
                self._in_stream_error(error if type(error) is dict else {"message": str(error)}, frame,
                                      "an `error` object (no event `type`)", error)
                return
            self.report.diagnostic(
                "unexpected-payload", frame,
                "a JSON object without a string `type`: not a Responses stream event; ignored",
                once=("no-type",))
            return
        seq = value.get("sequence_number")
        if type(seq) is int:
            top = self._max_seq
            if top is not None and seq != top + 1:
                self._sequence(seq, top, kind, frame)
            if top is None or seq > top:
                self._max_seq = seq
        event = self.event_name(frame)
        if event is not None and event != kind and event != "message":
            self.report.diagnostic(
                "event-name-mismatch", frame,
                f"the SSE event name {event!r} differs from the JSON type {kind!r}; streamfold (like the openai "
                "SDK) dispatches on the JSON type, a client that dispatches on the event name does not",
                severity=Severity.INFO, once=True, event=event, type=kind)
        if kind == "response.output_text.delta":
            delta = value.get("delta")
            if type(delta) is str and delta:
                key = (value.get("output_index"), value.get("content_index"))
                segment = self._hot if key == self._hot_key else self._text_part(value, frame, key)
                if segment is not None:
                    segment.deltas += 1
                    self._add(segment, delta, frame)
            return
        handler = self._handlers.get(kind)
        if handler is not None:
            handler(value, frame)
        elif not kind.startswith(_INFORMATIONAL):
            self.report.diagnostic(
                "unknown-event", frame,
                f"event type {kind!r} is not one streamfold folds; ignored (the Responses API adds event types "
                "over time)", severity=Severity.INFO, once=(kind,), type=kind)

    # -- segments: APPEND with the position of every piece kept -----------------

    def _text(self, path: tuple[Any, ...], sep: str = "") -> _Text:
        text = self._texts.get(path)
        if text is None:
            text = self._texts[path] = _Text(path, self.merger.buffer(path), sep)
        return text

    def _segment(self, path: tuple[Any, ...], kind: str, label: str) -> _Segment:
        text = self._text(path, "\n\n" if path[1] == "reasoning" else "")
        segment = _Segment(text, kind, label)
        text.segments.append(segment)
        return segment

    def _add(self, segment: _Segment, piece: str, frame: int) -> None:
        """APPEND a non-empty piece to the segment's buffer."""
        text = segment.text
        buffer = text.buffer
        if text.owner is segment:
            segment.runs[-1][1] += 1
        else:
            if not segment.runs and text.sep and buffer.length:
                buffer.add(text.sep, frame)
            count = len(buffer.frames)
            segment.runs.append([count, count + 1])
            text.owner = segment
        buffer.add(piece, frame)

    def _value(self, segment: _Segment) -> str:
        """The segment's text as it stands in its buffer."""
        if not segment.runs:
            return ""
        buffer = segment.text.buffer
        joined = buffer.text()
        ends = buffer.ends
        return "".join(joined[ends[a - 1] if a else 0 : ends[b - 1]] for a, b in segment.runs)

    def _replace(self, segment: _Segment, value: str, frame: int) -> None:
        """REPLACE the segment's pieces by `value` (from `frame`), in place in its buffer."""
        text = segment.text
        old = text.buffer
        own = {i for a, b in segment.runs for i in range(a, b)}
        first = segment.runs[0][0]
        pieces: list[tuple[str, int]] = []
        mapping: list[int] = []
        at = 0
        for i, (piece, origin) in enumerate(old.fragments()):
            if i == first:
                at = len(pieces)
                pieces.append((value, frame))
            mapping.append(-1 if i in own else len(pieces))
            if i not in own:
                pieces.append((piece, origin))
        text.buffer = self.merger.replace_text(text.path, pieces)
        for other in text.segments:
            if other is not segment:
                other.runs = [[mapping[a], mapping[b - 1] + 1] for a, b in other.runs]
        segment.runs = [[at, at + 1]]
        text.owner = None

    def _final(self, segment: _Segment, value: Any, frame: int, source: str) -> None:
        """The vendor's final word on a segment (a `.done` event, a final item, the terminal output)."""
        if segment.kind == "arguments" and value is not None and type(value) is not str:
            value = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        if type(value) is not str:
            return
        if not segment.runs:
            if value:
                self._add(segment, value, frame)
                self._filled(segment, frame, source)
            return
        current = self._value(segment)
        if value == current:
            return
        if not value:
            self.report.diagnostic(
                "done-mismatch", frame,
                f"{source} gives an empty {segment.label}, but its deltas streamed {len(current)} characters; "
                "an empty final value next to streamed text is a gateway dropping it (agentgateway/agentgateway#2281), "
                "so the deltas are kept. A client that reads the final value gets nothing",
                once=(id(segment), "empty"), source=source, kept="deltas", streamed=len(current))
            return
        position = next((i for i, (a, b) in enumerate(zip(current, value)) if a != b), min(len(current), len(value)))
        self.report.diagnostic(
            "done-mismatch", frame,
            f"{source} gives the {segment.label} as {len(value)} characters, the join of its "
            f"{segment.deltas} delta(s) is {len(current)} characters; they differ from character {position} "
            f"(deltas {compact_json(current[position:position + 40], 60)}, final "
            f"{compact_json(value[position:position + 40], 60)}). The final value is the vendor's own last word "
            "and is the result (R4: `.done` values REPLACE); a client that only appends deltas shows the other one",
            source=source, kept="done", position=position, streamed=len(current), final=len(value))
        self._replace(segment, value, frame)

    def _filled(self, segment: _Segment, frame: int, source: str) -> None:
        if source in _TERMINAL:
            self.report.diagnostic(
                "output-from-terminal", frame,
                f"the {segment.label} was never streamed (no delta, no `.done` event, no `output_item.done`); "
                f"it is taken from the terminal `{source}` event's `response.output` (R4). A client that builds "
                "the reply from the stream events shows nothing there",
                once=(id(segment),), source=source)
        else:
            self.report.diagnostic(
                "done-without-deltas", frame,
                f"the {segment.label} came only in {source}, with no delta before it (R4: gateways and some models "
                "send only the final value, lidge-jun/opencodex#4652, BerriAI/litellm#27144); streamfold used it. "
                "A client that builds from deltas gets an empty value"
                + (" and runs the tool with `{}`" if segment.kind == "arguments" else ""),
                once=(id(segment),), source=source)

    # -- items and parts --------------------------------------------------------

    def _item(self, value: dict[str, Any], frame: int, kind: str, event: str | None = None) -> _Item | None:
        """The item an event names by `output_index`; created if `.added` never came."""
        index = value.get("output_index")
        if type(index) is not int:
            self.report.diagnostic(
                "unexpected-payload", frame,
                f"a {value.get('type')} event without an integer `output_index`; ignored", once=("output_index",))
            return None
        item = self._items.get(index)
        if item is None:
            item = self._new_item(index, kind, value.get("item_id"), frame)
            if event is not None:
                self.report.diagnostic(
                    "missing-added-event", frame,
                    f"a {event} event for output item {index} came before any `response.output_item.added` for "
                    "it; streamfold created the item (the openai SDK raises 'Received a content event for output "
                    "index ... before receiving its output item')", once=(index,), output_index=index)
        elif item.type is None:
            item.type = kind
        return item

    def _new_item(self, index: int, kind: str | None, item_id: Any, frame: int) -> _Item:
        item = self._items[index] = _Item(index, kind, item_id if type(item_id) is str else None)
        if item.id:
            self._by_id[item.id] = item
        self._block(item, frame)
        return item

    def _block(self, item: _Item, frame: int) -> None:
        kind = item.type
        if kind == "message":
            texts = [s for s in item.parts.values() if s.kind == "output_text"]
            kind = "refusal" if item.parts and not texts else "text"
        elif kind == "function_call":
            kind = "tool_call"
        self.merger.replace((CHOICE, "block", item.index), {"type": kind or "unknown", "index": item.index}, frame)

    def _part(self, item: _Item, index: Any, kind: str, frame: int, event: str | None = None) -> _Segment | None:
        if type(index) is not int:
            self.report.diagnostic(
                "unexpected-payload", frame,
                f"a part of output item {item.index} without an integer `content_index`; ignored",
                once=("content_index",))
            return None
        segment = item.parts.get(index)
        if segment is None:
            path = (CHOICE, _PART_KINDS.get(kind, "content"))
            segment = item.parts[index] = self._segment(path, kind, f"{kind} {index} of output item {item.index}")
            if event is not None and item.skeleton is not None:  # (a missing item was reported already)
                self.report.diagnostic(
                    "missing-added-event", frame,
                    f"a {event} event for content_index {index} of output item {item.index} came before its "
                    "`response.content_part.added`; streamfold created the part (the openai SDK fails on it)",
                    once=(item.index, index), output_index=item.index, content_index=index)
            if kind == "refusal" or kind == "output_text":
                self._block(item, frame)
        return segment

    def _summary(self, item: _Item, index: Any, frame: int) -> _Segment | None:
        if type(index) is not int:
            self.report.diagnostic(
                "unexpected-payload", frame,
                f"a reasoning summary event of output item {item.index} without an integer `summary_index`; "
                "ignored", once=("summary_index",))
            return None
        segment = item.summary.get(index)
        if segment is None:
            segment = item.summary[index] = self._segment(
                (CHOICE, "reasoning"), "summary_text", f"reasoning summary part {index} of output item {item.index}")
        return segment

    def _arguments(self, item: _Item) -> _Segment:
        if item.arguments is None:
            item.arguments = self._segment(
                (CHOICE, "tool", item.index, "arguments"), "arguments",
                f"arguments of the function call in output item {item.index}" + (f" ({item.id})" if item.id else ""))
        return item.arguments

    def _text_part(self, value: dict[str, Any], frame: int, key: tuple[Any, Any]) -> _Segment | None:
        item = self._item(value, frame, "message", "response.output_text.delta")
        if item is None:
            return None
        segment = self._part(item, value.get("content_index"), "output_text", frame, "response.output_text.delta")
        if segment is not None:
            self._hot_key, self._hot = key, segment
        return segment

    # -- event handlers ---------------------------------------------------------

    def _lifecycle(self, value: dict[str, Any], frame: int) -> None:
        response = value.get("response")
        if type(response) is dict:
            self._response(response, frame)
            status = response.get("status")
            if type(status) is str:
                self._status = status

    def _response(self, response: dict[str, Any], frame: int) -> None:
        merger = self.merger
        held = merger.set_once(("id",), response.get("id"), frame)
        new = response.get("id")
        if held is not None and type(new) is str and new and new != held:
            self.report.diagnostic(
                "response-id-changed", frame,
                f"the response id changed from {held!r} to {new!r} mid-stream; the first is kept (the openai SDK "
                "raises 'Lifecycle response identity changed')", once=True, previous=held, id=new)
        merger.set_once(("model",), response.get("model"), frame)
        created = response.get("created_at")
        if type(created) in (int, float):
            merger.set_once(("created",), created, frame)
        usage = response.get("usage")
        if type(usage) is dict:
            merger.replace(("usage",), usage, frame)  # U1: only the terminal object carries it
        self._envelope = response

    def _terminal(self, value: dict[str, Any], frame: int) -> None:
        kind = value["type"]
        response = value.get("response")
        status: Any = None
        if type(response) is dict:
            self._response(response, frame)
            status = response.get("status")
        if type(status) is not str or not status:
            status = {"response.completed": "completed", "response.incomplete": "incomplete",
                      "response.failed": "failed"}.get(kind)
        if status is not None:
            self._status = status
            raw = status
            if status == "incomplete" and type(response) is dict:
                details = response.get("incomplete_details")
                reason = details.get("reason") if type(details) is dict else None
                if type(reason) is str and reason:
                    raw = reason
            self.merger.replace((CHOICE, "finish_reason"), raw, frame)
        if kind == "response.failed" or status == "failed":
            error = response.get("error") if type(response) is dict else None
            if type(error) is dict:
                self._in_stream_error(error, frame, f"`{kind}`", error)
            else:
                generic = {"message": "the response failed and carries no `error` object"}
                self._in_stream_error(generic, frame, f"`{kind}`", response, keep=self._error is not None)
        if type(response) is dict:
            self._terminal_output(response, kind, frame)
        elif self._items and kind in ("response.completed", "response.incomplete"):
            self._empty_output(kind, False, frame)
        if kind == "response.done":
            self.report.diagnostic(
                "nonstandard-terminal", frame,
                "the stream ends on `response.done`, which the Responses API over HTTP does not send (a gateway or "
                "the Codex backend, R1: decolua/9router#2142); it is accepted as the end. The openai SDK does not "
                "know it and raises 'Didn't receive a `response.completed` event'", severity=Severity.INFO)
        self.terminate(frame)
        for item in self._items.values():
            if item.arguments is not None:
                # The reply is over: every call's arguments are a closed block.
                self.merger.parse(item.arguments.text.path, frame)

    def _terminal_output(self, response: dict[str, Any], kind: str, frame: int) -> None:
        output = response.get("output")
        if type(output) is not list or not output:
            if self._items and kind != "response.failed":
                self._empty_output(kind, output == [], frame)
            return
        for position, final in enumerate(output):
            if type(final) is not dict:
                continue
            item = self._match(final, position)
            if item is None:
                index = position if position not in self._items else max(self._items) + 1
                item = self._new_item(index, final.get("type"), final.get("id"), frame)
            self._reconcile(item, final, frame, kind)

    def _match(self, final: dict[str, Any], position: int) -> _Item | None:
        item_id = final.get("id")
        if type(item_id) is str and item_id in self._by_id:
            return self._by_id[item_id]
        call_id = final.get("call_id")
        if call_id:
            for item in self._items.values():
                if item.type == final.get("type") and self.merger.get((CHOICE, "tool", item.index, "id")) == call_id:
                    return item
        same = self._items.get(position)
        if same is not None and same.type == final.get("type") and (same.id is None or item_id is None):
            return same
        return None

    def _empty_output(self, kind: str, empty_list: bool, frame: int) -> None:
        if empty_list:
            what, client = ("has `output: []`", "A client that takes the final `response.output` as the answer (the "
                            "openai SDK's get_final_response()) gets no output (agentgateway/agentgateway#3326)")
        else:
            what, client = ("has no `output`", "Clients that read `response.output` crash on it (TypeError: "
                            "'NoneType' object is not iterable, decolua/9router#705); openai-python 3.57 rebuilds it "
                            "from the `output_item.done` items")
        self.report.diagnostic(
            "empty-terminal-output", frame,
            f"the terminal `{kind}` event {what} although the stream produced {len(self._items)} output item(s); "
            f"streamfold rebuilt the reply from the deltas, `.done` events and `output_item.done` items. {client}",
            output_items=len(self._items))

    def _item_added(self, value: dict[str, Any], frame: int) -> None:
        index = value.get("output_index")
        item_value = value.get("item")
        if type(item_value) is not dict:
            return  # the SDK skips an added event without an item too
        if type(index) is not int:
            self.report.diagnostic("unexpected-payload", frame,
                                   "a `response.output_item.added` without an integer `output_index`; ignored",
                                   once=("output_index",))
            return
        kind = item_value.get("type")
        item = self._items.get(index)
        if item is None:
            item = self._new_item(index, kind if type(kind) is str else None, item_value.get("id"), frame)
        else:
            item.type = kind if type(kind) is str else item.type
            if type(item_value.get("id")) is str and not item.id:
                item.id = item_value["id"]
                self._by_id[item.id] = item
            self._block(item, frame)
        item.skeleton = item_value  # R3: a skeleton; its values are never taken as final
        merger = self.merger
        merger.set_once((CHOICE, "role"), item_value.get("role") or "assistant", frame)
        if kind == "function_call":
            self._call_identity(item, item_value, frame)
            self._arguments(item)

    def _call_identity(self, item: _Item, value: dict[str, Any], frame: int) -> None:
        path = (CHOICE, "tool", item.index)
        for field, label in (("call_id", "id"), ("name", "name")):
            new = value.get(field)
            held = self.merger.set_once((*path, label), new, frame)
            if held is not None and type(new) is str and new and new != held:
                self.report.diagnostic(
                    "tool-call-identity-changed", frame,
                    f"function call {item.index} changed its `{field}` from {held!r} to {new!r}; the first is kept "
                    "(the tool result must reference the first `call_id`)",
                    once=(item.index, field), tool_call=item.index, previous=held, value=new)

    def _part_added(self, value: dict[str, Any], frame: int) -> None:
        part = value.get("part")
        kind = part.get("type") if type(part) is dict else None
        if type(kind) is not str or kind not in _PART_KINDS:
            return
        item = self._item(value, frame, "reasoning" if kind == "reasoning_text" else "message",
                          "response.content_part.added")
        if item is not None:
            self._part(item, value.get("content_index"), kind, frame)

    def _part_done(self, value: dict[str, Any], frame: int) -> None:
        part = value.get("part")
        kind = part.get("type") if type(part) is dict else None
        if type(part) is not dict or type(kind) is not str or kind not in _PART_KINDS:
            return
        item = self._item(value, frame, "reasoning" if kind == "reasoning_text" else "message",
                          "response.content_part.done")
        if item is None:
            return
        segment = self._part(item, value.get("content_index"), kind, frame)
        if segment is not None:
            self._final(segment, part.get("refusal" if kind == "refusal" else "text"), frame,
                        "`response.content_part.done`")
            self._final_annotations(segment, part)

    def _text_done(self, value: dict[str, Any], frame: int) -> None:
        item = self._item(value, frame, "message", "response.output_text.done")
        segment = None if item is None else self._part(item, value.get("content_index"), "output_text", frame)
        if segment is not None:
            self._final(segment, value.get("text"), frame, "`response.output_text.done`")

    def _annotation(self, value: dict[str, Any], frame: int) -> None:
        item = self._item(value, frame, "message", "response.output_text.annotation.added")
        segment = None if item is None else self._part(item, value.get("content_index"), "output_text", frame)
        annotation = value.get("annotation")
        if segment is None or annotation is None:
            return
        placed = segment.annotations
        if placed is None:
            placed = segment.annotations = {}
        index = value.get("annotation_index")
        if type(index) is not int:
            index = max(placed, default=-1) + 1
        later = [i for i in placed if i > index]
        if later:
            self.report.diagnostic(
                "annotation-out-of-order", frame,
                f"annotation_index {index} of {segment.label} arrived after annotation_index {min(later)}; it is "
                "placed at its index. A client that appends annotations in arrival order lists them in the wrong "
                "order (their start_index/end_index no longer follow the text)",
                severity=Severity.INFO, once=(id(segment),), annotation_index=index, after=min(later))
        placed[index] = annotation

    def _refusal_delta(self, value: dict[str, Any], frame: int) -> None:
        delta = value.get("delta")
        if type(delta) is str and delta:
            item = self._item(value, frame, "message", "response.refusal.delta")
            segment = None if item is None else self._part(
                item, value.get("content_index"), "refusal", frame, "response.refusal.delta")
            if segment is not None:
                segment.deltas += 1
                self._add(segment, delta, frame)

    def _refusal_done(self, value: dict[str, Any], frame: int) -> None:
        item = self._item(value, frame, "message", "response.refusal.done")
        segment = None if item is None else self._part(item, value.get("content_index"), "refusal", frame)
        if segment is not None:
            self._final(segment, value.get("refusal"), frame, "`response.refusal.done`")

    def _summary_part_added(self, value: dict[str, Any], frame: int) -> None:
        item = self._item(value, frame, "reasoning", "response.reasoning_summary_part.added")
        if item is not None:
            self._summary(item, value.get("summary_index"), frame)

    def _summary_part_done(self, value: dict[str, Any], frame: int) -> None:
        item = self._item(value, frame, "reasoning", "response.reasoning_summary_part.done")
        segment = None if item is None else self._summary(item, value.get("summary_index"), frame)
        part = value.get("part")
        if segment is not None and type(part) is dict:
            self._final(segment, part.get("text"), frame, "`response.reasoning_summary_part.done`")

    def _summary_delta(self, value: dict[str, Any], frame: int) -> None:
        delta = value.get("delta")
        if type(delta) is str and delta:
            item = self._item(value, frame, "reasoning", "response.reasoning_summary_text.delta")
            segment = None if item is None else self._summary(item, value.get("summary_index"), frame)
            if segment is not None:
                segment.deltas += 1
                self._add(segment, delta, frame)

    def _summary_done(self, value: dict[str, Any], frame: int) -> None:
        item = self._item(value, frame, "reasoning", "response.reasoning_summary_text.done")
        segment = None if item is None else self._summary(item, value.get("summary_index"), frame)
        if segment is not None:
            self._final(segment, value.get("text"), frame, "`response.reasoning_summary_text.done`")

    def _reasoning_delta(self, value: dict[str, Any], frame: int) -> None:
        delta = value.get("delta")
        if type(delta) is str and delta:
            item = self._item(value, frame, "reasoning", "response.reasoning_text.delta")
            segment = None if item is None else self._part(
                item, value.get("content_index"), "reasoning_text", frame)
            if segment is not None:
                segment.deltas += 1
                self._add(segment, delta, frame)

    def _reasoning_done(self, value: dict[str, Any], frame: int) -> None:
        item = self._item(value, frame, "reasoning", "response.reasoning_text.done")
        segment = None if item is None else self._part(item, value.get("content_index"), "reasoning_text", frame)
        if segment is not None:
            self._final(segment, value.get("text"), frame, "`response.reasoning_text.done`")

    def _arguments_delta(self, value: dict[str, Any], frame: int) -> None:
        delta = value.get("delta")
        if type(delta) is str and delta:
            item = self._item(value, frame, "function_call", "response.function_call_arguments.delta")
            if item is not None:
                segment = self._arguments(item)
                segment.deltas += 1
                self._add(segment, delta, frame)

    def _arguments_done(self, value: dict[str, Any], frame: int) -> None:
        item = self._item(value, frame, "function_call", "response.function_call_arguments.done")
        if item is not None:
            self._final(self._arguments(item), value.get("arguments"), frame,
                        "`response.function_call_arguments.done`")

    def _item_done(self, value: dict[str, Any], frame: int) -> None:
        final = value.get("item")
        index = value.get("output_index")
        if type(final) is not dict or type(index) is not int:
            self.report.diagnostic("unexpected-payload", frame,
                                   "a `response.output_item.done` without an `item` object and an integer "
                                   "`output_index`; ignored", once=("item-done",))
            return
        item = self._items.get(index)
        if item is None:
            kind = final.get("type")
            item = self._new_item(index, kind if type(kind) is str else None, final.get("id"), frame)
        self._reconcile(item, final, frame, "`response.output_item.done`")
        item.done_frame = frame
        self._block(item, frame)
        if item.arguments is not None:
            self.merger.parse(item.arguments.text.path, frame)  # the call's block closed

    def _reconcile(self, item: _Item, final: dict[str, Any], frame: int, source: str) -> None:
        """A final item (R3: authoritative) against what the stream built for it."""
        item.final = final
        kind = final.get("type")
        if item.type is None and type(kind) is str:
            item.type = kind
        if item.id is None and type(final.get("id")) is str:
            item.id = final["id"]
            self._by_id[item.id] = item
        if kind == "message":
            self.merger.set_once((CHOICE, "role"), final.get("role") or "assistant", frame)
            content = final.get("content")
            if type(content) is list:
                for index, part in enumerate(content):
                    if type(part) is not dict or part.get("type") not in ("output_text", "refusal"):
                        continue
                    segment = self._part(item, index, part["type"], frame)
                    if segment is not None:
                        self._final(segment, part.get("refusal" if part["type"] == "refusal" else "text"),
                                    frame, source)
                        self._final_annotations(segment, part)
                self._missing_parts(item, item.parts, len(content), "content", frame, source)
        elif kind == "reasoning":
            summary = final.get("summary")
            if type(summary) is list:
                for index, part in enumerate(summary):
                    if type(part) is dict:
                        segment = self._summary(item, index, frame)
                        if segment is not None:
                            self._final(segment, part.get("text"), frame, source)
                self._missing_parts(item, item.summary, len(summary), "summary", frame, source)
            content = final.get("content")
            if type(content) is list:
                for index, part in enumerate(content):
                    if type(part) is dict and part.get("type") == "reasoning_text":
                        segment = self._part(item, index, "reasoning_text", frame)
                        if segment is not None:
                            self._final(segment, part.get("text"), frame, source)
        elif kind == "function_call":
            self._call_identity(item, final, frame)
            self._final(self._arguments(item), final.get("arguments"), frame, source)

    def _missing_parts(self, item: _Item, parts: dict[int, _Segment], count: int, field: str, frame: int,
                       source: str) -> None:
        lost = [index for index, segment in parts.items() if index >= count and segment.runs]
        if lost:
            self.report.diagnostic(
                "done-mismatch", frame,
                f"{source} gives output item {item.index} with {count} `{field}` part(s), but the stream built "
                f"part(s) {lost} with text; an empty or short final item is a gateway dropping them "
                "(agentgateway/agentgateway#2281), so the streamed parts are kept",
                once=(item.index, field, source), source=source, kept="deltas", parts=lost)

    def _final_annotations(self, segment: _Segment, part: dict[str, Any]) -> None:
        segment.final_part = part
        annotations = part.get("annotations")
        if type(annotations) is list and annotations:
            segment.final_annotations = annotations

    def _error_event(self, value: dict[str, Any], frame: int) -> None:
        self._in_stream_error(value, frame, "an `error` event", value)

    def _in_stream_error(self, error: dict[str, Any], frame: int, where: str, raw: Any, keep: bool = False) -> None:
        """Report an error the server sent; `keep`: an earlier, more specific error stays the choice's error."""
        message = error.get("message") or error.get("code") or json.dumps(error, ensure_ascii=False)
        code = error.get("code")
        detail = f" ({code})" if code not in (None, "") else ""
        self.report.error(
            "in-stream-error", frame,
            f"the server sent {where} inside the HTTP 200 stream{detail}: {message}",
            raw=json.dumps(raw, ensure_ascii=False))
        if not keep:
            self._error = {"code": code, "message": str(message)}
            self.merger.replace((CHOICE, "error"), str(message), frame)

    def _sequence(self, seq: int, top: int, kind: Any, frame: int) -> None:
        self._seq_reports += 1
        if self._seq_reports > _SEQUENCE_REPORTS:
            self._seq_unreported.append(frame)
            return
        expected = top + 1
        if seq > expected:
            missing = seq - expected
            what = (f"sequence_number jumps from {top} to {seq} at this {kind} event: {missing} event(s) "
                    f"({expected}{'' if missing == 1 else f'..{seq - 1}'}) are missing from the capture (a proxy "
                    "dropped them, or the capture is incomplete); text they carried is lost to a client that "
                    "appends deltas")
        else:
            what = (f"sequence_number {seq} ({kind}) arrives after {top}: the events were reordered or repeated; "
                    "streamfold folds in arrival order, as clients do")
        self.report.diagnostic("sequence-gap", frame, what, expected=expected, seen=seq)

    # -- end of stream ------------------------------------------------------

    def done(self, frame: int) -> None:
        # R1: gateways send `[DONE]` instead of the end event (after it, the core ignores it).
        if not self.failed:
            self.report.diagnostic(
                "no-final-response", frame,
                "the stream ends with `[DONE]` but no `response.completed`, `response.incomplete` or "
                "`response.failed` came (a gateway, R1): there is no final status, usage or `response.output`. "
                "The end is accepted; the openai SDK raises 'Didn't receive a `response.completed` event'")
        self.terminate(frame)

    def finish(self, last_frame: int) -> None:
        if self._seq_unreported:
            self.report.diagnostic(
                "sequence-gap", self._seq_unreported[0],
                f"{len(self._seq_unreported)} more sequence_number gap(s) or reordering(s) after the first "
                f"{_SEQUENCE_REPORTS}, starting at frame {self._seq_unreported[0]}",
                frames=list(self._seq_unreported))
        for item in self._items.values():
            if item.done_frame is None:
                self._close_block(item)
            if item.arguments is not None:
                self._check_arguments(item, last_frame)

    def _close_block(self, item: _Item) -> None:
        """An item the stream never finished: its block spans to its last piece."""
        segments = [*item.parts.values(), *item.summary.values()]
        if item.arguments is not None:
            segments.append(item.arguments)
        last = max((s.text.buffer.frames[s.runs[-1][1] - 1] for s in segments if s.runs), default=None)
        span = self.merger.frames_of((CHOICE, "block", item.index))
        if last is not None and span is not None and last > span[1]:
            self._block(item, last)

    def _check_arguments(self, item: _Item, last_frame: int) -> None:
        path = item.arguments.text.path if item.arguments is not None else ()
        parsed = self.merger.parse(path, last_frame)
        buffer = self.merger.texts[path]
        name = self.merger.get((CHOICE, "tool", item.index, "name"))
        label = f"function call {item.index} ({name})" if name else f"function call {item.index}"
        if parsed.error is not None:
            position = parsed.position if parsed.position is not None else buffer.length
            culprit = buffer.frame_at(min(position, buffer.length - 1)) if buffer.length else last_frame
            hint = ""
            if self.merger.get((CHOICE, "finish_reason")) == "max_output_tokens":
                hint = (" The reply was cut by the token limit (incomplete: max_output_tokens), so the arguments "
                        "are incomplete (B8).")
            self.report.diagnostic(
                "tool-args-invalid", culprit,
                f"{label}: the joined arguments do not parse ({parsed.error}: character {position}); that "
                f"character came from frame {culprit}. The raw join is kept in `arguments`.{hint}",
                severity=Severity.ERROR, choice=CHOICE, tool_call=item.index, position=position)
        elif parsed.recovery is not None:
            self.report.diagnostic(
                "cumulative-resend", buffer.last_frame,
                f"{label}: the joined arguments hold {parsed.copies} JSON documents ({parsed.recovery}); "
                f"`parsed` holds the recovered value, `arguments` the raw join",
                choice=CHOICE, tool_call=item.index, recovery=parsed.recovery, copies=parsed.copies)

    def normalise_finish(self, raw: str, has_tool_calls: bool) -> str:
        if raw not in self.finish_reasons and self._status == "incomplete":
            return INCOMPLETE  # an incomplete_details.reason this version does not know
        return super().normalise_finish(raw, has_tool_calls)

    def normalise_usage(self, raw: Any) -> dict[str, Any] | None:
        if type(raw) is not dict:
            return None
        input_details = raw.get("input_tokens_details")
        output_details = raw.get("output_tokens_details")
        input_tokens = raw.get("input_tokens", raw.get("prompt_tokens"))
        output_tokens = raw.get("output_tokens", raw.get("completion_tokens"))
        total = raw.get("total_tokens")
        if total is None and type(input_tokens) is int and type(output_tokens) is int:
            total = input_tokens + output_tokens
        return {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "reasoning_tokens": output_details.get("reasoning_tokens") if type(output_details) is dict else None,
            "cache_read_tokens": input_details.get("cached_tokens") if type(input_details) is dict else None,
            "total_tokens": total,
        }

    # -- export -------------------------------------------------------------

    def export(self, result: Result) -> dict[str, Any]:
        """The `Response` a non-streaming request would have returned.

        The envelope is the last response object the stream carried (the
        terminal one when it came). Its `output` is kept when it is non-empty
        (the vendor's final word, already reconciled with the stream);
        otherwise the items are rebuilt from the stream: the final items of
        `output_item.done` with the folded text, summaries, arguments and the
        annotations placed at their `annotation_index`. Fields the Response
        type requires and the stream never carried get neutral values
        (`created_at` 0, `tools` [], `tool_choice` "auto", token details 0).
        """
        out: dict[str, Any] = dict(self._envelope or {})
        output = out.get("output")
        if type(output) is not list or not output:
            out["output"] = [self._export_item(item, result) for _, item in sorted(self._items.items())]
        out.setdefault("id", result.id or "")
        out["object"] = "response"
        if out.get("created_at") is None:
            out["created_at"] = self.merger.get(("created",)) or 0
        if out.get("model") is None:
            out["model"] = result.model or ""
        for key, default in (("parallel_tool_calls", True), ("tool_choice", "auto"), ("tools", [])):
            if out.get(key) is None:
                out[key] = default
        if self._status is not None:
            out["status"] = self._status
        if self._error is not None and out.get("error") is None:
            out["error"] = self._error
        usage = self.merger.get(("usage",))
        if type(usage) is dict:
            out["usage"] = _full_usage(usage)
        return out

    def _export_item(self, item: _Item, result: Result) -> dict[str, Any]:
        out = dict(item.final or item.skeleton or {})
        kind = item.type or out.get("type") or "message"
        out["type"] = kind
        if item.id is not None:
            out.setdefault("id", item.id)
        # An item the stream never finished: what a non-streaming reply would say of it.
        status = "completed" if result.complete else "incomplete"
        if item.final is None and kind in ("message", "function_call", "reasoning"):
            out["status"] = status
        if kind == "message":
            out.setdefault("id", "")
            out["role"] = "assistant"
            out.setdefault("status", status)
            content: list[dict[str, Any]] = []
            for _, segment in sorted(item.parts.items()):
                part = dict(segment.final_part or {})
                if segment.kind == "refusal":
                    part.update(type="refusal", refusal=self._value(segment))
                else:
                    annotations = segment.final_annotations
                    if annotations is None:
                        annotations = [a for _, a in sorted((segment.annotations or {}).items())]
                    part.update(type="output_text", text=self._value(segment), annotations=annotations)
                content.append(part)
            out["content"] = content
        elif kind == "reasoning":
            out.setdefault("id", "")
            out["summary"] = [{"type": "summary_text", "text": self._value(segment)}
                              for _, segment in sorted(item.summary.items())]
            texts = [{"type": "reasoning_text", "text": self._value(segment)}
                     for _, segment in sorted(item.parts.items()) if segment.kind == "reasoning_text"]
            if texts:
                out["content"] = texts
        elif kind == "function_call":
            call = next((c for c in result.choices[0].tool_calls if c.key == item.index), None) \
                if result.choices else None
            out["call_id"] = (call.id if call else None) or out.get("call_id") or ""
            out["name"] = (call.name if call else None) or out.get("name") or ""
            out["arguments"] = call.arguments if call else (out.get("arguments") or "")
            out.setdefault("status", status)
        return out

    @classmethod
    def read_response(cls, value: Any) -> dict[str, Any] | None:
        """An OpenAI Responses `Response`: output_text of message items, function_call items."""
        if not (isinstance(value, dict) and isinstance(value.get("output"), list) and value.get("object") == "response"):
            return None
        items = [item for item in value["output"] if isinstance(item, dict)]
        summary = [part.get("text", "") for item in items if item.get("type") == "reasoning"
                   for part in item.get("summary", []) if isinstance(part, dict)]
        details = value.get("incomplete_details")
        return {
            "content": "".join(part.get("text", "") for item in items if item.get("type") == "message"
                               for part in item.get("content", []) if isinstance(part, dict)
                               and part.get("type") == "output_text"),
            "reasoning": "\n\n".join(summary) or None,
            "tool_calls": [(item.get("name"), item.get("arguments", "")) for item in items
                           if item.get("type") == "function_call"],
            "finish_reason": details.get("reason") if isinstance(details, dict) else value.get("status"),
            "usage": value.get("usage"),
        }

    @classmethod
    def summarize(cls, value: Any) -> str:
        if type(value) is not dict:
            return compact_json(value)
        kind = value.get("type")
        if type(kind) is not str:
            return compact_json(value)
        where = ""
        if "output_index" in value:
            where = f" [{value.get('output_index')}"
            for key in ("content_index", "summary_index"):
                if key in value:
                    where += f":{value.get(key)}"
            where += "]"
        head = f"{kind.removeprefix('response.')}{where}"
        for key in ("delta", "text", "arguments", "refusal"):
            if type(value.get(key)) is str:
                return f"{head} {compact_json(value[key], 80)}"
        item = value.get("item")
        if type(item) is dict:
            bits = [str(item.get(k)) for k in ("type", "name", "call_id", "id") if item.get(k)]
            return f"{head} {' '.join(bits)}"
        if kind == "error":
            return f"error {value.get('code') or ''}: {compact_json(value.get('message'), 100)}".replace(" : ", ": ")
        response = value.get("response")
        if type(response) is dict:
            bits = [str(response.get("status") or "")]
            details = response.get("incomplete_details")
            if type(details) is dict and details.get("reason"):
                bits.append(str(details["reason"]))
            error = response.get("error")
            if type(error) is dict:
                bits.append(f"error {error.get('code') or ''}: {compact_json(error.get('message'), 80)}")
            if response.get("usage"):
                bits.append("usage")
            return f"{head} {' '.join(b for b in bits if b)}".rstrip()
        annotation = value.get("annotation")
        if type(annotation) is dict:
            return f"{head} annotation {value.get('annotation_index')} {annotation.get('type')}"
        return head


def _full_usage(usage: dict[str, Any]) -> dict[str, Any]:
    """The usage object with the detail fields ResponseUsage requires (0 when the stream had none)."""
    out = dict(usage)
    for key in ("input_tokens", "output_tokens"):
        if type(out.get(key)) is not int:
            out[key] = 0
    if type(out.get("total_tokens")) is not int:
        out["total_tokens"] = out["input_tokens"] + out["output_tokens"]
    input_details = dict(out.get("input_tokens_details") or {})
    input_details.setdefault("cached_tokens", 0)
    input_details.setdefault("cache_write_tokens", 0)
    out["input_tokens_details"] = input_details
    output_details = dict(out.get("output_tokens_details") or {})
    output_details.setdefault("reasoning_tokens", 0)
    out["output_tokens_details"] = output_details
    return out
