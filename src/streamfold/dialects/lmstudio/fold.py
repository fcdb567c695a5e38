"""LM Studio native `POST /api/v1/chat` (`stream: true`), reference §4.8 and trap B5.

SSE with `event:` lines equal to `data.type` (lmstudio-ai/docs
`1_developer/_2_rest/streaming-events.md`); dispatch is on `data.type`. The
single reply is choice 0:

- `chat.start {model_instance_id}` opens the stream;
- `message.delta {content}` appends to content, `reasoning.delta {content}`
  to reasoning;
- `tool_call.start {tool}` opens a tool call (LM Studio runs it itself, via a
  plugin or an MCP server; calls have no id, so the key is their order),
  `tool_call.arguments {tool, arguments}` gives its arguments WHOLE, as an
  object, `tool_call.result {output}` closes it;
- `error {error {type, message, code?, param?}}` is an in-stream error but
  NOT terminal (B5): the stream goes on and `chat.end` follows with whatever
  was generated;
- `chat.end {result}` is terminal and authoritative: `result` is the
  non-streaming response (`output` items, `stats`, `response_id`); where its
  text or tool calls differ from the streamed ones, the result wins and the
  difference is reported. Usage is `result.stats`.

LM Studio sends no finish reason, so `finish_reason` stays null unless an
error ended the reply. Progress and start/end markers carry no reply data.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ...findings import Severity
from .._base import Dialect, compact_json, dumps_arguments, event_type

if TYPE_CHECKING:
    from ...findings import Report
    from ...framing import FrameView
    from ...merge import ChoiceField, Merger, TextBuffer, ToolPath
    from ...result import Result

__all__ = ["LMStudio"]

# `error` is left out on purpose: `{"type": "error", "error": {...}}` is also Anthropic's shape.
EVENT_TYPES = frozenset({
    "chat.start", "chat.end", "model_load.start", "model_load.progress", "model_load.end",
    "prompt_processing.start", "prompt_processing.progress", "prompt_processing.end",
    "reasoning.start", "reasoning.delta", "reasoning.end", "tool_call.start", "tool_call.arguments",
    "tool_call.result", "message.start", "message.delta", "message.end"})
_MARKERS = frozenset({
    "model_load.start", "model_load.progress", "model_load.end", "prompt_processing.start",
    "prompt_processing.progress", "prompt_processing.end", "reasoning.start", "reasoning.end",
    "message.start", "message.end"})


class LMStudio(Dialect):
    name = "lmstudio"
    terminal_hint = "`chat.end`"

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self._content = self.merger.buffer((0, "content"))
        self._reasoning = self.merger.buffer((0, "reasoning"))
        self._tool_keys: list[int] = []
        self._open_tool: int | None = None
        #: key -> {"provider_info": ..., "output": ...}, for export.
        self._tool_extras: dict[int, dict[str, Any]] = {}
        self._result: dict[str, Any] | None = None

    @classmethod
    def claims(cls, value: object) -> bool:
        return event_type(value) in EVENT_TYPES

    def fold(self, value: object, frame: int) -> None:
        if type(value) is not dict:
            self._unexpected(f"expected a JSON object, got {type(value).__name__}; ignored", frame, None)
            return
        kind = value.get("type")
        if kind == "message.delta":
            text = value.get("content")
            if type(text) is str:
                self._content.add(text, frame)
        elif kind == "reasoning.delta":
            text = value.get("content")
            if type(text) is str:
                self._reasoning.add(text, frame)
        elif kind == "tool_call.start":
            self._tool_start(value, frame)
        elif kind == "tool_call.arguments":
            self._tool_arguments(value, frame)
        elif kind == "tool_call.result":
            self._tool_result(value, frame)
        elif kind == "error":
            self._error(value, frame)
        elif kind == "chat.start":
            self.merger.set_once(("model",), value.get("model_instance_id"), frame)
            self.merger.set_once((0, "role"), "assistant", frame)
        elif kind == "chat.end":
            self._chat_end(value, frame)
        elif type(kind) is not str or kind not in _MARKERS:
            self._unexpected(f"unknown event type {kind!r}; ignored", frame, kind if type(kind) is str else None)

    # -- tool calls ---------------------------------------------------------------

    def _new_tool(self, value: dict[str, Any], frame: int) -> int:
        key = len(self._tool_keys)
        self._tool_keys.append(key)
        self._tool_extras[key] = {}
        self._open_tool = key
        return key

    def _tool_start(self, value: dict[str, Any], frame: int) -> None:
        key = self._new_tool(value, frame)
        self._identify(key, value, frame)

    def _identify(self, key: int, value: dict[str, Any], frame: int) -> None:
        name = value.get("tool")
        if type(name) is str and name:
            held = self.merger.set_once((0, "tool", key, "name"), name, frame)
            if held != name:
                self.report.diagnostic(
                    "tool-call-identity-changed", frame,
                    f"tool call {key} changed its tool from {held!r} to {name!r}; the first name is kept",
                    once=("lmstudio", key), choice=0, tool_call=key)
        info = value.get("provider_info")
        if info is not None:
            self._tool_extras[key]["provider_info"] = info

    def _tool_arguments(self, value: dict[str, Any], frame: int) -> None:
        key = self._open_tool if self._open_tool is not None else self._new_tool(value, frame)
        self._identify(key, value, frame)
        arguments = value.get("arguments")
        if arguments is not None:
            self._set_arguments(key, arguments, frame)

    def _set_arguments(self, key: int, arguments: object, frame: int) -> None:
        """WHOLE: the arguments arrive complete; a second copy replaces the first."""
        text = arguments if type(arguments) is str else dumps_arguments(arguments)
        path: ToolPath = (0, "tool", key, "arguments")
        buffer = self.merger.texts.get(path)
        if buffer is None or not buffer.length:
            self.merger.append(path, text, frame)
        elif buffer.text() != text:
            self.merger.replace_text(path, [(text, frame)])

    def _tool_result(self, value: dict[str, Any], frame: int) -> None:
        key = self._open_tool if self._open_tool is not None else self._new_tool(value, frame)
        self._identify(key, value, frame)
        path: ToolPath = (0, "tool", key, "arguments")
        buffer = self.merger.texts.get(path)
        arguments = value.get("arguments")
        if arguments is not None and (buffer is None or not buffer.length):
            self._set_arguments(key, arguments, frame)
        if "output" in value:
            self._tool_extras[key]["output"] = value["output"]
        self.merger.parse(path, frame)
        self._open_tool = None

    # -- errors and the end --------------------------------------------------------

    def _error(self, value: dict[str, Any], frame: int) -> None:
        error = value.get("error")
        if type(error) is dict:
            message = error.get("message") or compact_json(error)
            kinds = [str(error[name]) for name in ("type", "code") if error.get(name)]
        else:
            message, kinds = (error if type(error) is str else compact_json(error)), []
        detail = f" ({', '.join(kinds)})" if kinds else ""
        # B5: not terminal. The stream goes on and chat.end carries the partial result.
        self.in_stream_error(
            frame, f"LM Studio sent an error event{detail}: {message}. The stream is not over: `chat.end` "
            "follows with whatever was generated", raw=json.dumps(value, ensure_ascii=False))

    def _chat_end(self, value: dict[str, Any], frame: int) -> None:
        result = value.get("result")
        if type(result) is dict:
            self._result = result
            merger = self.merger
            stats = result.get("stats")
            if stats:
                merger.replace(("usage",), stats, frame)
            merger.set_once(("id",), result.get("response_id"), frame)
            merger.set_once(("model",), result.get("model_instance_id"), frame)
            output = result.get("output")
            if type(output) is list:
                self._authoritative(output, frame)
        for key in self._tool_keys:
            self.merger.parse((0, "tool", key, "arguments"), frame)
        self.terminate(frame)

    def _authoritative(self, output: list[Any], frame: int) -> None:
        """`chat.end.result.output` is what LM Studio would have returned: it wins where it differs."""
        texts = {"message": [], "reasoning": []}  # type: dict[str, list[str]]
        tools: list[dict[str, Any]] = []
        for item in output:
            if type(item) is not dict:
                continue
            kind = item.get("type")
            if type(kind) is str and kind in texts and type(item.get("content")) is str:
                texts[kind].append(item["content"])
            elif kind == "tool_call":
                tools.append(item)
        texts_of: tuple[tuple[str, ChoiceField, TextBuffer], ...] = (
            ("message", "content", self._content), ("reasoning", "reasoning", self._reasoning))
        for kind, field, buffer in texts_of:
            final, joined = "".join(texts[kind]), buffer.text()
            if final != joined:
                self.merger.replace_text((0, field), [(final, frame)] if final else [])
                self._mismatch(frame, field, f"`chat.end` has {len(final)} characters of {kind} text, the "
                               f"streamed `{kind}.delta` events {len(joined)}")
        for position, item in enumerate(tools):
            if position >= len(self._tool_keys):
                key = self._new_tool(item, frame)
                self._identify(key, item, frame)
                self._set_arguments(key, item.get("arguments", {}), frame)
                self._mismatch(frame, "tool_calls", f"tool call {key} ({item.get('tool')!r}) is in `chat.end` "
                               "but was never streamed")
            else:
                key = self._tool_keys[position]
                self._identify(key, item, frame)
                arguments = item.get("arguments")
                if arguments is not None:
                    text = arguments if type(arguments) is str else dumps_arguments(arguments)
                    held = self.merger.text((0, "tool", key, "arguments"))
                    if held != text:
                        self._set_arguments(key, arguments, frame)
                        self._mismatch(frame, "tool_calls", f"tool call {key}'s arguments in `chat.end` differ "
                                       "from the streamed `tool_call.arguments`")
            if "output" in item:
                self._tool_extras[key]["output"] = item["output"]

    def _mismatch(self, frame: int, field: str, what: str) -> None:
        self.report.diagnostic(
            "final-text-mismatch", frame,
            f"{what}. The `chat.end` result is kept, because LM Studio makes it the aggregated, authoritative "
            "reply; a client that only joins the deltas shows the other version", field=field)

    def _unexpected(self, message: str, frame: int, once: object) -> None:
        self.report.diagnostic("unexpected-payload", frame, message, severity=Severity.INFO,
                               once=("lmstudio", once) if once is not None else None)

    def normalise_usage(self, raw: object) -> dict[str, Any] | None:
        if type(raw) is not dict:
            return None
        input_tokens = raw.get("input_tokens")
        output_tokens = raw.get("total_output_tokens")
        total = None
        if isinstance(input_tokens, int) and isinstance(output_tokens, int):
            total = input_tokens + output_tokens  # total_output_tokens includes the reasoning tokens
        return {"input_tokens": input_tokens, "output_tokens": output_tokens,
                "reasoning_tokens": raw.get("reasoning_output_tokens"), "cache_read_tokens": None,
                "total_tokens": total}

    def native(self) -> dict[str, Any] | None:
        """`chat.end.result` (the non-streaming response) when it came, its message and reasoning
        texts left empty and listed in `spans` as (output position, start, end) in the reply's
        content or reasoning, which they make up; else each tool call's provider info and output."""
        result = self._result
        if result is None:
            extras = [self._tool_extras.get(key, {}) for key in self._tool_keys]
            return {"tool_extras": extras} if any(extras) else None
        output = result.get("output")
        if type(output) is not list:
            return {"result": result}
        ends = {"message": 0, "reasoning": 0}
        items: list[Any] = []
        spans: list[list[int]] = []
        for position, item in enumerate(output):
            if type(item) is dict:
                kind = item.get("type")
                if type(kind) is str and kind in ends and type(item.get("content")) is str:
                    start = ends[kind]
                    ends[kind] += len(item["content"])
                    spans.append([position, start, ends[kind]])
                    item = {**item, "content": ""}
            items.append(item)
        return {"result": {**result, "output": items}, "spans": spans}

    @classmethod
    def export(cls, result: Result) -> dict[str, Any]:
        """The non-streaming `/api/v1/chat` response: `chat.end.result` when it came, else rebuilt."""
        native = result.native if isinstance(result.native, dict) else {}
        choice = result.choice(0)
        if "result" in native:
            out = dict(native["result"])
            spans = native.get("spans", [])
            if spans:
                texts = {"message": choice.content if choice is not None else "",
                         "reasoning": (choice.reasoning if choice is not None else None) or ""}
                listed = list(out["output"])
                for position, start, end in spans:
                    entry = listed[position]
                    listed[position] = {**entry, "content": texts[entry["type"]][start:end]}
                out["output"] = listed
            return out
        extras = native.get("tool_extras", [])
        output: list[dict[str, Any]] = []
        if choice is not None:
            if choice.reasoning:
                output.append({"type": "reasoning", "content": choice.reasoning})
            for call in choice.tool_calls:
                # Unparseable arguments keep their text (never a null in their place).
                item: dict[str, Any] = {"type": "tool_call", "tool": call.name,
                                        "arguments": call.parsed if call.error is None else call.arguments}
                item.update(extras[call.key] if 0 <= call.key < len(extras) else {})
                output.append(item)
            if choice.content:
                output.append({"type": "message", "content": choice.content})
        out = {"model_instance_id": result.model, "output": output,
               "stats": result.usage.raw if result.usage is not None else {}}
        if result.id is not None:
            out["response_id"] = result.id
        return out

    @classmethod
    def read_response(cls, value: object) -> dict[str, Any] | None:
        """The non-streaming `/api/v1/chat` response: `{output: [message | reasoning | tool_call], stats}`."""
        if not (isinstance(value, dict) and isinstance(value.get("output"), list) and "object" not in value
                and ("stats" in value or "model_instance_id" in value)):
            return None
        items = [item for item in value["output"] if isinstance(item, dict)]
        texts = {kind: "".join(str(item.get("content") or "") for item in items if item.get("type") == kind)
                 for kind in ("message", "reasoning")}
        calls = [(item.get("tool"), item["arguments"] if isinstance(item.get("arguments"), str) else
                  json.dumps(item.get("arguments", {}), separators=(",", ":"), ensure_ascii=False))
                 for item in items if item.get("type") == "tool_call"]
        return {"content": texts["message"], "reasoning": texts["reasoning"] or None, "tool_calls": calls,
                "finish_reason": None, "usage": value.get("stats") or None}

    @classmethod
    def summarize(cls, value: object) -> str:
        if type(value) is not dict:
            return compact_json(value)
        kind = value.get("type")
        if kind in ("message.delta", "reasoning.delta"):
            return f"{kind} {compact_json(value.get('content'), 80)}"
        if kind in ("tool_call.start", "tool_call.arguments", "tool_call.result"):
            extra = f" {compact_json(value.get('arguments'), 60)}" if value.get("arguments") is not None else ""
            return f"{kind} {value.get('tool')}{extra}"
        if kind == "error":
            return f"error {compact_json(value.get('error'), 120)}"
        if kind == "chat.end":
            return "chat.end (result)"
        if kind in ("model_load.progress", "prompt_processing.progress"):
            return f"{kind} {value.get('progress')}"
        return str(kind) if kind is not None else compact_json(value)
