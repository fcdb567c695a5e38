"""Cohere v2 chat (`POST /v2/chat`, `stream: true`), reference §4.6 and trap B2.

SSE with `event:` lines equal to `data.type`; dispatch is on `data.type`
(a proxy that strips the `event:` lines changes nothing, and the SDK does the
same). The single message is choice 0:

- `content-delta` appends `text` to content and `thinking` to reasoning,
  keyed by the content `index` (kept for export);
- `tool-plan-delta` appends to reasoning: it is the model's pre-tool plan
  ("I will look up ..."), written before the tool calls, not reply text;
- `tool-call-start/delta/end` carry `delta.message.tool_calls` as ONE object,
  not a list (B2): key = the event `index`, id and name SET-ONCE, arguments
  APPEND, PARSE-AT-END at `tool-call-end`;
- `citation-start` carries ONE citation object, kept WHOLE by index for export;
- `message-end` is terminal: finish reason, usage, and for ERROR/TIMEOUT the
  `error` string as an in-stream error. A `[DONE]` (the SDK also stops there)
  is tolerated, before or after it; `debug` is ignored.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from ...findings import Report, Severity
from ...framing import FrameView
from ...merge import EMPTY_VALUES, Merger
from .._base import ERROR, LENGTH, STOP, TOOL_CALLS, Dialect, compact_json, dumps_arguments, event_type, fast_decoder

if TYPE_CHECKING:
    from ...merge import TextBuffer, ToolCallPath
    from ...result import Result
    from .fast import CohereContentDelta

__all__ = ["Cohere", "cohere_usage"]

_FAST_SHAPES = fast_decoder(f"{__package__}.fast", "decode_cohere_content_delta")


# -- Cohere v2 ---------------------------------------------------------------

EVENT_TYPES = frozenset({
    "message-start", "content-start", "content-delta", "content-end", "tool-plan-delta", "tool-call-start",
    "tool-call-delta", "tool-call-end", "citation-start", "citation-end", "message-end", "debug"})


def _message(value: dict[str, Any]) -> dict[str, Any]:
    """`value.delta.message`, or {} when any level is missing or not an object."""
    delta = value.get("delta")
    if type(delta) is dict:
        message = delta.get("message")
        if type(message) is dict:
            return message
    return {}


def cohere_usage(raw: object) -> dict[str, Any] | None:
    """The usage of a v2 `message-end` or a v1 response's `meta`: `tokens` first, else `billed_units`."""
    # Cohere reports two counts. `tokens` is what the model actually read and wrote (the
    # rendered prompt with its preamble and tool definitions, every generated token); this
    # is what every other vendor calls input/output tokens, so it is used here.
    # `billed_units` is what Cohere charges for (it leaves out the preamble and special
    # tokens, so it is smaller, e.g. 37 vs 1204 input); it is a billing figure and stays
    # in `usage.raw`. Without `tokens`, billed_units is the only count there is.
    if type(raw) is not dict:
        return None
    counts = raw.get("tokens")
    if type(counts) is not dict:
        counts = raw.get("billed_units")
    if type(counts) is not dict:
        counts = {}
    input_tokens = counts.get("input_tokens")
    output_tokens = counts.get("output_tokens")
    total = None
    if isinstance(input_tokens, (int, float)) and isinstance(output_tokens, (int, float)):
        total = input_tokens + output_tokens
    cached = raw.get("cached_tokens")
    return {"input_tokens": input_tokens, "output_tokens": output_tokens, "reasoning_tokens": None,
            "cache_read_tokens": cached, "total_tokens": total}


class Cohere(Dialect):
    name = "cohere"
    finish_reasons: ClassVar[dict[str, str]] = {
        "COMPLETE": STOP,
        "STOP_SEQUENCE": STOP,
        "MAX_TOKENS": LENGTH,
        "TOOL_CALL": TOOL_CALLS,
        "ERROR": ERROR,
        "TIMEOUT": ERROR,
    }
    terminal_hint = "`message-end`"

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self._content = self.merger.buffer((0, "content"))
        self._reasoning = self.merger.buffer((0, "reasoning"))
        #: content index -> [kind ("text" | "thinking"), start, end or None]: offsets in the
        #: content or reasoning buffer, so export can list the message's content items.
        self._items: dict[int, list[Any]] = {}
        self.fast_decoder = _FAST_SHAPES
        self._tool_keys: list[int] = []
        #: The same keys, for membership in O(1) (a stream may open any number of calls).
        self._tool_key_set: set[int] = set()
        self._citations: dict[int, Any] = {}
        #: The tool plan's runs in the reasoning buffer, as [start, end] offsets.
        self._plan: list[list[int]] = []
        self._handlers = {
            "message-start": self._message_start,
            "content-start": self._content_start,
            "content-end": self._content_end,
            "tool-plan-delta": self._tool_plan,
            "tool-call-start": self._tool_call,
            "tool-call-delta": self._tool_call,
            "tool-call-end": self._tool_call_end,
            "citation-start": self._citation,
            "message-end": self._message_end,
        }

    @classmethod
    def claims(cls, value: object) -> bool:
        return event_type(value) in EVENT_TYPES

    # -- the fold loop -------------------------------------------------------

    def fold(self, value: object, frame: int) -> None:
        if type(value) is not dict:
            self._unexpected(f"expected a JSON object, got {type(value).__name__}", frame, None)
            return
        kind = value.get("type")
        if kind is None:
            # Dispatch is on data.type; a payload without one falls back to the SSE event name.
            kind = self.event_name(frame)
        if kind == "content-delta":
            self._content_delta(value, frame)
            return
        handler = self._handlers.get(kind) if type(kind) is str else None
        if handler is not None:
            handler(value, frame)
        elif kind not in ("citation-end", "debug"):
            # citation-end closes nothing we keep; debug carries the raw prompt: both ignorable.
            self._unexpected(f"unknown event type {kind!r}; ignored", frame, kind)

    def fold_fast_run(self, pieces: Sequence[bytes], position: int, start: int, frame: int,
                      events: Sequence[bytes | None] | None) -> int:
        """`content-delta`s decoded by the Structs below, each for a content item already open (or
        without an index): its text or thinking appended as `fold` appends it, in one loop, a stretch
        of text (or of thinking) in one `extend`. It stops at a delta that would open an item, which
        is `fold`'s."""
        decode, items, at, first = self.fast_decoder, self._items, position, frame - position
        assert decode is not None
        waiting: TextBuffer | None = None  # the buffer the waiting pieces are for
        texts: list[str] = []
        frames: list[int] = []
        try:
            for at in range(position, len(pieces)):
                value: CohereContentDelta = decode(pieces[at][start:])
                index, content = value.index, value.delta.message.content
                piece, buffer = ((content.text, self._content) if content.text is not None
                                 else (content.thinking, self._reasoning))
                if not piece:
                    continue
                if index is not None and index not in items:
                    return at - position
                if buffer is not waiting:
                    if waiting is not None:
                        waiting.extend(texts, frames)
                    waiting, texts, frames = buffer, [], []
                texts.append(piece)
                frames.append(first + at)
        except (ValueError, RecursionError):
            return at - position
        finally:
            if waiting is not None:
                waiting.extend(texts, frames)
        return len(pieces) - position

    def _content_delta(self, value: dict[str, Any], frame: int) -> None:
        content = _message(value).get("content")
        if type(content) is not dict:
            return
        text = content.get("text")
        if type(text) is str:
            if text:
                self._item(value.get("index"), "text")
                self._content.add(text, frame)
            return
        thinking = content.get("thinking")
        if type(thinking) is str and thinking:
            self._item(value.get("index"), "thinking")
            self._reasoning.add(thinking, frame)

    def _item(self, index: object, kind: str) -> None:
        """Open content item `index` lazily (a delta without its content-start)."""
        if type(index) is int and index not in self._items:
            buffer = self._content if kind == "text" else self._reasoning
            self._items[index] = [kind, buffer.length, None]

    def _message_start(self, value: dict[str, Any], frame: int) -> None:
        self.merger.set_once(("id",), value.get("id"), frame)
        self.merger.set_once((0, "role"), _message(value).get("role") or "assistant", frame)

    def _content_start(self, value: dict[str, Any], frame: int) -> None:
        content = _message(value).get("content")
        kind = content.get("type") if type(content) is dict else None
        self._item(value.get("index"), "thinking" if kind == "thinking" else "text")
        if type(content) is dict:
            # The start event's text is usually "", but fold it if not.
            self._content_delta(value, frame)

    def _content_end(self, value: dict[str, Any], frame: int) -> None:
        index = value.get("index")
        item = self._items.get(index) if type(index) is int else None
        if item is not None:
            item[2] = (self._content if item[0] == "text" else self._reasoning).length

    def _tool_plan(self, value: dict[str, Any], frame: int) -> None:
        plan = _message(value).get("tool_plan")
        if type(plan) is str and plan:
            # The pre-tool plan: reasoning, not reply text. Its place in the reasoning is kept, for export.
            reasoning = self._reasoning
            start = reasoning.length
            reasoning.add(plan, frame)
            if self._plan and self._plan[-1][1] == start:
                self._plan[-1][1] = reasoning.length
            else:
                self._plan.append([start, reasoning.length])

    def _tool_call(self, value: dict[str, Any], frame: int) -> None:
        calls = _message(value).get("tool_calls")
        index = value.get("index")
        if type(calls) is list:
            # B2: Cohere sends one object; a list means a translating proxy. Fold it anyway.
            self._unexpected("`delta.message.tool_calls` is a list; Cohere sends a single object. "
                             "Each element was folded as the call at the event index onwards", frame, "list")
            for offset, call in enumerate(calls):
                self._one_tool_call(index + offset if type(index) is int else None, call, frame)
        elif type(calls) is dict:
            self._one_tool_call(index, calls, frame)

    def _one_tool_call(self, index: object, call: Any, frame: int) -> None:
        if type(call) is not dict:
            return
        if type(index) is not int:
            index = self._tool_keys[-1] if self._tool_keys else 0
            self.report.diagnostic(
                "tool-call-missing-index", frame,
                f"a Cohere tool-call event has no integer `index`; it was attributed to tool call {index}",
                once=("cohere", index), choice=0, tool_call=index)
        if index not in self._tool_key_set:
            self._tool_keys.append(index)
            self._tool_key_set.add(index)
        merger = self.merger
        path: ToolCallPath = (0, "tool", index)
        call_id = call.get("id")
        if call_id not in EMPTY_VALUES:
            merger.set_once((*path, "id"), call_id, frame)
        function = call.get("function")
        if type(function) is not dict:
            return
        name = function.get("name")
        if name not in EMPTY_VALUES:
            held = merger.set_once((*path, "name"), name, frame)
            if held != name:
                self.report.diagnostic(
                    "tool-call-identity-changed", frame,
                    f"tool call {index} changed its name from {held!r} to {name!r}; the first name is kept",
                    once=("cohere", index, "name"), choice=0, tool_call=index)
        arguments = function.get("arguments")
        if type(arguments) is str:
            merger.append((*path, "arguments"), arguments, frame)
        elif arguments is not None:
            merger.append((*path, "arguments"), dumps_arguments(arguments), frame)

    def _tool_call_end(self, value: dict[str, Any], frame: int) -> None:
        index = value.get("index")
        if type(index) is int and index in self._tool_key_set:
            self.merger.parse((0, "tool", index, "arguments"), frame)

    def _citation(self, value: dict[str, Any], frame: int) -> None:
        citations = _message(value).get("citations")
        index = value.get("index")
        if type(citations) is dict:
            key = index if type(index) is int else len(self._citations)
            self._citations[key] = citations  # WHOLE: a repeat of the same index replaces it
        elif type(citations) is list:
            self._unexpected("`delta.message.citations` is a list; Cohere sends a single object",
                             frame, "citations-list")
            for citation in citations:
                self._citations[len(self._citations)] = citation

    def _message_end(self, value: dict[str, Any], frame: int) -> None:
        delta = value.get("delta")
        if type(delta) is not dict:
            delta = {}
        merger = self.merger
        finish = delta.get("finish_reason")
        if type(finish) is str and finish:
            merger.replace((0, "finish_reason"), finish, frame)
        usage = delta.get("usage")
        if usage:
            merger.replace(("usage",), usage, frame)
        error = delta.get("error")
        if error or finish in ("ERROR", "TIMEOUT"):
            detail = error if type(error) is str and error else (
                compact_json(error) if error else "no error message was given")
            self.in_stream_error(
                frame, f"Cohere ended the generation with finish_reason {finish!r}: {detail}",
                raw=json.dumps(delta, ensure_ascii=False))
        for key in self._tool_keys:
            merger.parse((0, "tool", key, "arguments"), frame)
        self.terminate(frame)

    def _unexpected(self, message: str, frame: int, once: object) -> None:
        self.report.diagnostic("unexpected-payload", frame, message, severity=Severity.INFO,
                               once=("cohere", once) if once is not None else None)

    # -- end of stream -------------------------------------------------------

    def finish(self, last_frame: int) -> None:
        super().finish(last_frame)
        for key in self._tool_keys:
            self.check_arguments(0, key, last_frame)

    def normalise_usage(self, raw: object) -> dict[str, Any] | None:
        return cohere_usage(raw)

    def native(self) -> dict[str, Any] | None:
        """The content items as `[kind, start, end]` offsets into the choice's content (text) or
        reasoning (thinking) in index order, the tool plan's `[start, end]` runs in the
        reasoning, the citations in index order; None when there are none."""
        out: dict[str, Any] = {}
        if self._items:
            out["items"] = [list(item) for _, item in sorted(self._items.items())]
        if self._plan:
            out["tool_plan"] = [list(run) for run in self._plan]
        if self._citations:
            out["citations"] = [citation for _, citation in sorted(self._citations.items())]
        return out or None

    @classmethod
    def export(cls, result: Result) -> dict[str, Any]:
        """The non-streaming v2 `ChatResponse`: id, finish_reason, message, usage."""
        native = result.native if type(result.native) is dict else {}
        choice = result.choice(0)
        content_text = choice.content if choice is not None else ""
        reasoning_text = (choice.reasoning if choice is not None else None) or ""
        items: list[dict[str, Any]] = []
        for kind, start, end in native.get("items", ()):
            if kind == "text":
                items.append({"type": "text", "text": content_text[start:end]})
            else:
                items.append({"type": "thinking", "thinking": reasoning_text[start:end]})
        if not any(item["type"] == "text" for item in items) and content_text:
            items.append({"type": "text", "text": content_text})
        message: dict[str, Any] = {"role": "assistant", "content": items}
        plan = "".join(reasoning_text[start:end] for start, end in native.get("tool_plan", ()))
        if plan:
            message["tool_plan"] = plan
        if choice is not None and choice.tool_calls:
            message["tool_calls"] = [
                {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
                for call in choice.tool_calls]
        if native.get("citations"):
            message["citations"] = list(native["citations"])
        out: dict[str, Any] = {"id": result.id, "finish_reason": choice.finish_reason_raw if choice else None,
                               "message": message}
        if result.usage is not None:
            out["usage"] = result.usage.raw
        return out

    @classmethod
    def read_response(cls, value: object) -> dict[str, Any] | None:
        """The non-streaming v2 `ChatResponse`: `{id, finish_reason, message: {content, tool_calls}, usage}`."""
        message = value.get("message") if isinstance(value, dict) else None
        if not (isinstance(value, dict) and "finish_reason" in value and isinstance(message, dict)
                and isinstance(message.get("content", []), list) and "choices" not in value):
            return None
        items = [item for item in message.get("content") or [] if isinstance(item, dict)]
        listed = [call for call in message.get("tool_calls") or [] if isinstance(call, dict)]
        calls = [call.get("function", {}) for call in listed]
        return {"content": "".join(str(i.get("text") or "") for i in items if i.get("type") == "text"),
                "reasoning": "".join(str(i.get("thinking") or "") for i in items if i.get("type") == "thinking")
                or message.get("tool_plan") or None,
                "tool_calls": [(call.get("name"), call.get("arguments") or "") for call in calls],
                "tool_call_ids": [call.get("id") for call in listed],
                "finish_reason": value.get("finish_reason"), "usage": value.get("usage")}

    @classmethod
    def summarize(cls, value: object) -> str:
        if type(value) is not dict:
            return compact_json(value)
        kind = value.get("type")
        message = _message(value)
        index = value.get("index")
        at = f"[{index}] " if type(index) is int else ""
        if kind == "content-delta" or kind == "content-start":
            content = message.get("content")
            if type(content) is dict:
                for name in ("text", "thinking"):
                    if type(content.get(name)) is str:
                        return f"{kind} {at}{name} {compact_json(content[name], 80)}"
        elif kind == "tool-plan-delta":
            return f"tool-plan-delta {compact_json(message.get('tool_plan'), 80)}"
        elif kind in ("tool-call-start", "tool-call-delta"):
            call = message.get("tool_calls")
            function = call.get("function") if type(call) is dict else None
            if type(function) is dict:
                name = f" {function['name']}" if function.get("name") else ""
                arguments = function.get("arguments")
                return f"{kind} {at}{name.strip()}".rstrip() + (
                    f" args {compact_json(arguments, 60)}" if arguments else "")
        elif kind == "message-end":
            delta = value.get("delta")
            if type(delta) is dict:
                parts = [f"finish {delta.get('finish_reason')}"]
                if delta.get("usage"):
                    parts.append("usage")
                if delta.get("error"):
                    parts.append(f"error {compact_json(delta['error'], 80)}")
                return "message-end " + ", ".join(parts)
        elif kind == "citation-start":
            citation = message.get("citations")
            if type(citation) is dict:
                return f"citation-start {at}{compact_json(citation.get('text'), 80)}"
        elif kind == "message-start":
            return f"message-start {value.get('id')}"
        return f"{kind} {at}".rstrip() if kind else compact_json(value)
