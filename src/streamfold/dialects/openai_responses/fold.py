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
from typing import TYPE_CHECKING, Any, ClassVar

from ...findings import Report, Severity
from ...framing import FrameView
from ...merge import Merger
from .._base import CONTENT_FILTER, ERROR, INCOMPLETE, LENGTH, STOP, event_type, fast_decoder
from .builtin import BuiltinTools
from .items import CHOICE, TERMINAL, Item, Segment
from .native import snapshot

if TYPE_CHECKING:
    from .fast import ResponsesDelta

_FAST_SHAPES = fast_decoder(f"{__package__}.fast", "decode_responses_delta")

__all__ = ["OpenAIResponses"]

_LIFECYCLE = ("response.created", "response.in_progress", "response.queued")
#: Status-only and tool-progress events (reference §4.2, "Informational"): ignored without a word. The built-in
#: tools' streamed fields (custom tool input, MCP arguments, code, diffs, shell commands and output, image
#: partials) are folded by `builtin` before this list is read.
_INFORMATIONAL = (
    "response.web_search_call.", "response.file_search_call.", "response.mcp_call.", "response.mcp_list_tools.",
    "response.code_interpreter_call.", "response.image_generation_call.", "response.compaction.",
    "response.steer", "response.audio.", "response.output_text.logprobs", "response.reasoning_summary.",
    "response.content_part.in_progress",
)
#: How many sequence gaps get a diagnostic of their own; the rest are counted.
_SEQUENCE_REPORTS = 10


class OpenAIResponses(BuiltinTools):
    name = "openai-responses"
    text_keys = ("delta", "text")
    terminal_hint = "`response.completed`, `response.incomplete` or `response.failed`"
    # Raw values: the response status, or `incomplete_details.reason` when the status is incomplete.
    finish_reasons: ClassVar[dict[str, str]] = {
        "completed": STOP,
        "max_output_tokens": LENGTH,
        "content_filter": CONTENT_FILTER,
        "max_messages": INCOMPLETE,
        "steered": INCOMPLETE,
        "incomplete": INCOMPLETE,
        "failed": ERROR,
    }

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
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
            "response.inject.created": self._agents.injected, "response.inject.failed": self._inject_failed,
        }
        self._handlers.update(self.builtin_handlers())
        for kind in _LIFECYCLE:
            self._handlers[kind] = self._lifecycle
        for kind in TERMINAL:
            self._handlers[kind] = self._terminal

    @classmethod
    def claims(cls, value: object) -> bool:
        kind = event_type(value)
        if kind is None:
            return False
        if kind.startswith("response."):
            # A Realtime session's events have the same names, and an `event_id` Responses events never have.
            return not (isinstance(value, dict) and type(value.get("event_id")) is str)
        # The Responses `error` event; Anthropic's has an `error` object and no sequence number.
        return kind == "error" and isinstance(value, dict) and "sequence_number" in value and "error" not in value

    # -- the fold loop (once per frame: keep it lean) -------------------------

    def fold_fast_run(self, pieces: Sequence[bytes], position: int, start: int, frame: int,
                      events: Sequence[bytes | None] | None) -> int:
        """Delta events decoded by `fast` (text, refusal, reasoning, summary, arguments), each next
        in sequence, for a segment that exists (text: the one the last text delta extended), named by
        its own type or by no event line: folded as `fold` folds them, in one loop, the deltas that
        extend the segment the last one did in one `extend`. It stops at anything that would create an
        item or a segment, a sequence gap or another event name, which is `fold`'s."""
        decode, at, first = self.fast_decoder, position, frame - position
        assert decode is not None
        seq = self._max_seq  # the last sequence number, in a local until the loop ends
        if seq is None:
            return 0
        extended: Segment | None = None  # the segment the last delta went to: its next ones wait in `texts`
        kind = index = part = None  # what named it: a delta that names it again goes there without a lookup
        texts: list[str] = []
        frames: list[int] = []
        try:
            for at in range(position, len(pieces)):
                value: ResponsesDelta = decode(pieces[at][start:])
                if events is not None and events[at] != value.event:
                    return at - position
                if value.sequence_number != seq + 1:
                    return at - position
                if value.output_index == index and value.part == part and value.kind == kind and extended is not None:
                    segment = extended
                else:
                    found = self._fast_segment(value)
                    if found is None:
                        return at - position
                    segment = found
                seq = value.sequence_number
                if not value.delta:
                    continue
                segment.deltas += 1
                if segment is extended:
                    texts.append(value.delta)
                    frames.append(first + at)
                    continue
                _extend(extended, texts, frames)
                texts, frames = [], []
                self._add(segment, value.delta, first + at)
                extended, kind, index, part = segment, value.kind, value.output_index, value.part
        except (ValueError, RecursionError):
            return at - position
        finally:
            _extend(extended, texts, frames)
            self._max_seq = seq
        return len(pieces) - position

    def _fast_segment(self, value: ResponsesDelta) -> Segment | None:
        """The segment a fast delta extends, if it exists (text: the one the last text delta extended)."""
        if value.kind == "output_text":
            return self._hot if (value.output_index, value.part) == self._hot_key else None
        item = self._items.get(value.output_index)
        if item is None or item.type is None:
            return None
        part = value.part  # None for function arguments, which have one segment per item
        return item.arguments if part is None else (item.summary if value.kind == "summary" else item.parts).get(part)

    def fold(self, value: object, frame: int) -> None:
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
        agents = self._agents
        if (agents.active or self.lane is not None or "agent" in value) and \
                not agents.follows(value, kind, self.lane, frame):
            return
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
                "the Codex backend: decolua/9router#2142); it is accepted as the end. The openai SDK does not "
                "know it and raises 'Didn't receive a `response.completed` event'", severity=Severity.INFO)
        self.terminate(frame)
        for item in self._items.values():
            if item.arguments is not None:
                # The reply is over: every call's arguments are a closed block.
                self._settle(item.arguments.text)
                self.merger.parse(item.arguments.text.path, frame)

    def _inject_failed(self, value: dict[str, Any], frame: int) -> None:
        self._agents.inject_failed(value, frame, self.report)

    def _error_event(self, value: dict[str, Any], frame: int) -> None:
        self._in_stream_error(value, frame, "an `error` event", value)

    def _in_stream_error(self, error: dict[str, Any], frame: int, where: str, raw: object, keep: bool = False) -> None:
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

    def _sequence(self, seq: int, top: int, kind: object, frame: int) -> None:
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
                "`response.failed` came (a gateway): there is no final status, usage or `response.output`. "
                "The end is accepted; the openai SDK raises 'Didn't receive a `response.completed` event'")
        self.terminate(frame)

    def finish(self, last_frame: int) -> None:
        if self._seq_unreported:
            self.report.diagnostic(
                "sequence-gap", self._seq_unreported[0],
                f"{len(self._seq_unreported)} more sequence_number gap(s) or reordering(s) after the first "
                f"{_SEQUENCE_REPORTS}, starting at frame {self._seq_unreported[0]}",
                frames=list(self._seq_unreported))
        self._settle_all()
        for agent, first in self._agents.seen.items():
            self.saw_lane(agent, "agent", first)
        self.followed_lane = self._agents.followed
        self._agents.report_others(self.report, self.lane)
        for item in self._items.values():
            if item.done_frame is None:
                self._close_block(item)
            if item.arguments is not None:
                self.check_arguments(CHOICE, item.index, last_frame)

    def _close_block(self, item: Item) -> None:
        """An item the stream never finished: its block spans to its last piece."""
        segments = [*item.parts.values(), *item.summary.values()]
        if item.arguments is not None:
            segments.append(item.arguments)
        last = max((s.text.buffer.frames[s.runs[-1][1] - 1] for s in segments if s.runs), default=None)
        streamed = self.builtin_last_frame(item)
        if streamed is not None and (last is None or streamed > last):
            last = streamed
        span = self.merger.frames_of((CHOICE, "block", item.index))
        if last is not None and span is not None and last > span[1]:
            self._block(item, last)

    def normalise_finish(self, raw: str, has_tool_calls: bool) -> str:
        if raw not in self.finish_reasons and self._status == "incomplete":
            return INCOMPLETE  # an incomplete_details.reason this version does not know
        return super().normalise_finish(raw, has_tool_calls)

    def normalise_usage(self, raw: object) -> dict[str, Any] | None:
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

    # -- export ---------------------------------------------------------------

    def native(self) -> dict[str, Any]:
        out = snapshot(self._envelope, self.merger.get(("created",)), self._status, self._error, self._items)
        agents = self._agents.snapshot(self.lane)
        if agents is not None:
            out["agents"] = agents
        return out


def _extend(segment: Segment | None, texts: list[str], frames: list[int]) -> None:
    """The deltas that waited for `segment` (the owner of its text's last run), appended as `_add` of each would."""
    if texts:
        assert segment is not None
        segment.runs[-1][1] += len(texts)
        segment.text.buffer.extend(texts, frames)
