"""The Vercel AI SDK UI message stream (`x-vercel-ai-ui-message-stream: v1`, ai 5 and later): SSE
`data:` lines, each a JSON chunk with a `type`, ending with `data: [DONE]`.

Source: ai-sdk.dev "Stream Protocols" and the `ai` package's `uiMessageChunkSchema`. One stream is
one assistant `UIMessage` (choice 0), built of parts:

- `text-start/delta/end` and `reasoning-start/delta/end`, keyed by `id`: the deltas append to
  content or reasoning; each id is one part (its runs in the buffer are kept, for export);
- `tool-input-start` opens a tool call keyed by `toolCallId` (its order of arrival is the key),
  `tool-input-delta` APPENDS `inputTextDelta`, `tool-input-available` carries the whole `input`,
  which wins over the streamed text as it does in the SDK's reader; the `tool-output-*`,
  `tool-input-error` and approval chunks set the part's state and output (kept for export);
- `start-step` is a `step-start` part; `source-*`, `file` and `data-*` parts are kept whole
  (a `data-*` with an id already seen replaces it; a `transient` one is not in the message);
- `finish` (its `finishReason` from ai 6 on) finishes the reply, `[DONE]` ends the stream;
  `error` is an in-stream error, `abort` too (the reply was stopped, it is not complete);
- the protocol has no usage of its own: a `messageMetadata.usage` (or `totalUsage`) in the
  SDK's `LanguageModelUsage` shape is read as the usage.

A delta for a part whose start never came is folded, with `part-missing-start`: the SDK's reader
throws there.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

from ...findings import Report, Severity
from ...framing import FrameView
from ...merge import Merger
from .._base import (
    CONTENT_FILTER,
    ERROR,
    INCOMPLETE,
    LENGTH,
    OTHER,
    STOP,
    TOOL_CALLS,
    compact_json,
    dumps_arguments,
    event_type,
    fast_decoder,
)
from .parts import approval, kept_pieces
from .runs import DeltaRuns
from .shapes import DATA_PREFIX, fits

if TYPE_CHECKING:
    from ...merge import TextBuffer, ToolPath

__all__ = ["VercelUI"]

_USAGE_KEYS = ("inputTokens", "outputTokens", "totalTokens")
_FAST_SHAPES = fast_decoder(f"{__package__}.fast", "decode_part_delta")
#: Where a tool chunk's `providerMetadata` goes on the part, as the SDK's reader puts it: the call's, until the
#: chunk gives the tool an output state (`output-available`, `output-error`), then the result's.
_METADATA_OF = {"tool-input-start": "callProviderMetadata", "tool-input-available": "callProviderMetadata",
                "tool-input-error": "resultProviderMetadata", "tool-output-available": "resultProviderMetadata",
                "tool-output-error": "resultProviderMetadata"}
#: The tool chunks whose update of the part leaves its `inputEncoding` out (only the input's start and deltas
#: carry it), so the reader deletes it.
_ENCODING_DROPPED = frozenset({"tool-input-available", "tool-input-error", "tool-output-available",
                               "tool-output-error"})


class VercelUI(DeltaRuns):
    name = "vercel-ui"
    finish_reasons: ClassVar[dict[str, str]] = {
        "stop": STOP, "length": LENGTH, "content-filter": CONTENT_FILTER, "tool-calls": TOOL_CALLS,
        "error": ERROR, "other": OTHER, "interrupted": INCOMPLETE}
    terminal_hint = "`data: [DONE]` after a `finish` chunk"

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self.fast_decoder = _FAST_SHAPES
        self._hot, self._hot_buffer, self._hot_run = None, None, []  # (see `DeltaRuns`)
        self._content = self.merger.buffer((0, "content"))
        self._reasoning = self.merger.buffer((0, "reasoning"))
        #: The message's parts in order, as JSON values (see `message.export_message`).
        self._parts: list[dict[str, Any]] = []
        #: text/reasoning part id -> its part (runs of [start, end] offsets in its buffer).
        self._open: dict[tuple[str, str], dict[str, Any]] = {}
        #: toolCallId -> its tool part.
        self._tools: dict[str, dict[str, Any]] = {}
        #: (type, id) -> its `data-*` part, which a later chunk of that type and id replaces.
        self._data_parts: dict[tuple[str, Any], dict[str, Any]] = {}
        self._metadata: Any = None
        #: The key the next tool call gets (a reset step takes its calls away: keys are never reused).
        self._next_key = 0
        #: "text" and "reasoning" when a reset step took parts of them back: rebuilt at the end.
        self._stale: set[str] = set()
        self.merger.set_once((0, "role"), "assistant", 0)

    @classmethod
    def claims(cls, value: object) -> bool:
        kind = event_type(value)
        return kind is not None and type(value) is dict and fits(value, kind)

    # -- the fold loop -------------------------------------------------------

    def fold(self, value: object, frame: int) -> None:
        self._hot = None
        kind = event_type(value)
        if kind is None or type(value) is not dict:
            self.report.diagnostic("unexpected-payload", frame,
                                   "a UI message stream chunk is a JSON object with a string `type`; ignored",
                                   severity=Severity.INFO, once=("no-type",))
            return
        if kind in ("text-delta", "reasoning-delta"):
            self._delta(kind[:-6], value, frame)
        elif kind in ("text-start", "reasoning-start"):
            self._part(kind[:-6], value.get("id"), frame)
        elif kind in ("text-end", "reasoning-end"):
            part = self._open.pop((kind[:-4], str(value.get("id"))), None)
            if part is not None:
                part["done"] = True
                if value.get("citations") is not None:
                    part["citations"] = value["citations"]
        elif kind.startswith("tool-"):
            self._tool_chunk(kind, value, frame)
        elif kind.startswith(DATA_PREFIX):
            self._data(kind, value)
        else:
            handler = self._HANDLERS.get(kind)
            if handler is not None:
                handler(self, value, frame)
            elif kind != "finish-step":
                self.report.diagnostic(
                    "unknown-event-type", frame, f"chunk type {kind!r} is not in the UI message stream protocol; "
                    "ignored (the ai SDK's reader rejects it)", severity=Severity.INFO, once=("type", kind), type=kind)

    def _buffer(self, kind: str) -> TextBuffer:
        return self._content if kind == "text" else self._reasoning

    def _part(self, kind: str, part_id: object, frame: int) -> dict[str, Any]:
        part: dict[str, Any] = {"type": kind, "runs": []}
        self._parts.append(part)
        self._open[(kind, str(part_id))] = part
        return part

    def _delta(self, kind: str, value: dict[str, Any], frame: int) -> None:
        piece = self.string(value.get("delta"), frame, f"the `delta` of a {kind}-delta")
        part = self._open.get((kind, str(value.get("id"))))
        if part is None:
            self.report.diagnostic(
                "part-missing-start", frame,
                f"a {kind}-delta for part {value.get('id')!r}, which no {kind}-start opened (or which had ended): "
                "folded, but the ai SDK's reader throws here", once=("part", kind, str(value.get("id"))))
            part = self._part(kind, value.get("id"), frame)
        if piece:
            self._append(kind, part, piece, frame)

    def _append(self, kind: str, part: dict[str, Any], piece: str, frame: int) -> None:
        """A delta's text, to its buffer and to its part's runs."""
        buffer = self._buffer(kind)
        runs = part["runs"]
        start = buffer.length
        buffer.add(piece, frame)
        if runs and runs[-1][1] == start:
            runs[-1][1] = buffer.length
        else:
            runs.append([start, buffer.length])

    # -- tool calls ------------------------------------------------------------

    def _tool(self, value: dict[str, Any], frame: int, opens: bool) -> dict[str, Any] | None:
        call_id = value.get("toolCallId")
        if type(call_id) is not str:
            self.wrong_type(call_id, frame, "a tool chunk's `toolCallId`", "a string")
            return None
        tool = self._tools.get(call_id)
        if tool is None:
            if not opens:
                self.report.diagnostic(
                    "part-missing-start", frame, f"a {value.get('type')} chunk for tool call {call_id!r}, which no "
                    "tool-input-start or tool-input-available opened: the ai SDK's reader throws here; its output "
                    "is kept", once=("tool", call_id))
            tool = self._tools[call_id] = {"type": "tool", "key": self._next_key, "toolCallId": call_id,
                                           "state": "input-streaming", "streamed": False}
            self._next_key += 1
            self._parts.append(tool)
            self.merger.set_once((0, "tool", tool["key"], "id"), call_id, frame)
        name = value.get("toolName")
        if name is not None:
            self.merger.set_once((0, "tool", tool["key"], "name"), name, frame)
        for field in ("dynamic", "providerExecuted", "title", "toolMetadata"):
            if field in value:
                tool[field] = value[field]
        return tool

    def _tool_chunk(self, kind: str, value: dict[str, Any], frame: int) -> None:
        if kind == "tool-approval-response":
            self._approval_response(value, frame)
            return
        opens = kind in ("tool-input-start", "tool-input-available", "tool-input-error")
        tool = self._tool(value, frame, opens)
        if tool is None:
            return
        path: ToolPath = (0, "tool", tool["key"], "arguments")
        if kind == "tool-input-start":  # a `text` input is the text itself, not JSON (ai 7: a custom tool's)
            tool["textInput"] = value.get("inputEncoding") == "text"
            if value.get("inputEncoding") is not None:
                tool["inputEncoding"] = value["inputEncoding"]
            else:
                tool.pop("inputEncoding", None)
        elif kind in _ENCODING_DROPPED:  # the reader updates the part without it, which deletes it
            tool.pop("inputEncoding", None)
        metadata = value.get("providerMetadata")
        if metadata is not None and kind in _METADATA_OF:  # the SDK's reader: a call's, or its result's
            tool[_METADATA_OF[kind]] = metadata
        if kind == "tool-input-delta":
            piece = self.string(value.get("inputTextDelta"), frame, "the `inputTextDelta` of a tool-input-delta")
            if piece:
                tool["streamed"] = True
                self.merger.append(path, piece, frame)
        elif kind in ("tool-input-available", "tool-input-error"):
            tool["state"] = "input-available" if kind == "tool-input-available" else "output-error"
            if "input" in value:
                self._whole_input(tool, value["input"], frame)
            if tool.get("textInput"):
                self.merger.parse(path, frame, as_text=True)
            if kind == "tool-input-error":
                tool["errorText"] = value.get("errorText")
                self._tool_error(tool, "its input was rejected", value.get("errorText"), frame)
            self.merger.parse(path, frame)
        elif kind == "tool-output-available":
            tool["state"], tool["output"] = "output-available", value.get("output")
            if value.get("preliminary"):
                tool["preliminary"] = True
            else:
                tool.pop("preliminary", None)
        elif kind == "tool-output-error":
            tool["state"], tool["errorText"] = "output-error", value.get("errorText")
            self._tool_error(tool, "the tool failed", value.get("errorText"), frame)
        elif kind == "tool-output-denied":
            tool["state"] = "output-denied"
        elif kind == "tool-approval-request":
            tool["state"], tool["approval"] = "approval-requested", approval(value)
        elif kind != "tool-input-start":
            self.report.diagnostic("unknown-event-type", frame, f"chunk type {kind!r} is not in the UI message "
                                   "stream protocol; ignored", severity=Severity.INFO, once=("type", kind), type=kind)

    def _approval_response(self, value: dict[str, Any], frame: int) -> None:
        """ai 7: the user's answer, found by its approval id (the reader throws when no tool asked it)."""
        approval_id = value.get("approvalId")
        tool = next((tool for tool in self._tools.values()
                     if type(tool.get("approval")) is dict and tool["approval"].get("id") == approval_id), None)
        if tool is None:
            self.report.diagnostic(
                "part-missing-start", frame, f"a tool-approval-response for approval {approval_id!r}, which no "
                "tool-approval-request asked: the ai SDK's reader throws here; ignored", once=("approval", approval_id))
            return
        tool["state"] = "approval-responded"
        tool["approval"] = {**tool["approval"], "id": approval_id, "approved": value.get("approved"),
                            **({"reason": value["reason"]} if value.get("reason") is not None else {})}
        if value.get("providerExecuted") is not None:
            tool["providerExecuted"] = value["providerExecuted"]
        if value.get("providerMetadata") is not None:
            tool["callProviderMetadata"] = value["providerMetadata"]

    def _whole_input(self, tool: dict[str, Any], whole: Any, frame: int) -> None:
        """`tool-input-available`'s whole input: the arguments when none streamed; when some did and
        they parse to another value, the whole input wins, as it does in the SDK's reader."""
        path: ToolPath = (0, "tool", tool["key"], "arguments")
        text = tool["textInput"] = bool(tool.get("textInput")) and type(whole) is str
        if tool["streamed"]:
            streamed = self.merger.parse(path, frame) if not text else None
            if (streamed is None and self.merger.text(path) == whole) or (
                    streamed is not None and streamed.error is None and streamed.value == whole):
                return
            self.report.diagnostic(
                "final-text-mismatch", frame,
                f"tool call {tool['key']} ({tool['toolCallId']}): the streamed input "
                f"{compact_json(self.merger.text(path), 80)} is not the `input` of tool-input-available "
                f"{compact_json(whole, 80)}; the whole input is kept, as the ai SDK's reader keeps it",
                choice=0, tool_call=tool["key"])
        self.merger.replace_text(path, [(whole if text else dumps_arguments(whole), frame)])

    def _tool_error(self, tool: dict[str, Any], what: str, text: object, frame: int) -> None:
        self.report.diagnostic(
            "tool-error", frame, f"tool call {tool['key']} ({tool['toolCallId']}): {what}: {text}",
            choice=0, tool_call=tool["key"])

    # -- the other parts and the message ---------------------------------------

    def _data(self, kind: str, value: dict[str, Any]) -> None:
        if value.get("transient"):
            return  # sent to the client's onData, never part of the message
        part = {"type": kind, **({"id": value["id"]} if "id" in value else {}), "data": value.get("data")}
        # The SDK's reconciliation: a part of the same type and id is replaced. The SDK compares ids with
        # `===` and skips a null one, so an id that is null, an array or an object never matches one held.
        part_id = value.get("id")
        key = (kind, part_id) if part_id is not None and type(part_id) not in (list, dict) else None
        if key is not None:
            held = self._data_parts.get(key)
            if held is not None:
                held["data"] = part["data"]
                return
            self._data_parts[key] = part
        self._parts.append({"type": "raw", "part": part})

    def _raw(self, value: dict[str, Any], frame: int) -> None:
        self._parts.append({"type": "raw", "part": dict(value)})

    def _step(self, value: dict[str, Any], frame: int) -> None:
        self._parts.append({"type": "raw", "part": {"type": "step-start"}})

    def _custom(self, value: dict[str, Any], frame: int) -> None:
        self._parts.append({"type": "raw", "part": {"type": "custom", "kind": value.get("kind"), **(
            {"providerMetadata": value["providerMetadata"]} if value.get("providerMetadata") is not None else {})}})

    def _steering(self, value: dict[str, Any], frame: int) -> None:
        self._parts.append({"type": "raw", "part": {"type": "steering-message", "id": value.get("id"),
                                                    "parts": value.get("parts")}})

    def _reset_step(self, value: dict[str, Any], frame: int) -> None:
        """ai 7's `reset-step`: the step so far is taken back (its text, reasoning and tool calls leave the
        message, as the reader splices them out), the step itself goes on."""
        start = next((position + 1 for position in range(len(self._parts) - 1, -1, -1)
                      if self._parts[position].get("part", {}).get("type") == "step-start"), 0)
        dropped, self._parts[start:] = self._parts[start:], []
        self._open.clear()
        for part in dropped:
            if part["type"] == "tool":
                del self._tools[part["toolCallId"]]
                for field in ("id", "name"):
                    self.merger.values.pop((0, "tool", part["key"], field), None)
                self.merger.texts.pop((0, "tool", part["key"], "arguments"), None)
            elif part["type"] == "raw":
                key = (part["part"]["type"], part["part"].get("id"))
                if self._data_parts.get(key) is part["part"]:  # a later chunk of its id starts a new part
                    del self._data_parts[key]
            else:
                self._stale.add(part["type"])

    def _rebuild(self, kind: str) -> None:
        """The content or reasoning of the parts a reset step left: once, at the end (a rebuild at each reset
        would cost a stream of resets its square)."""
        runs = [run for part in self._parts if part["type"] == kind for run in part["runs"]]
        pieces = kept_pieces(self._buffer(kind).fragments(), runs)
        rebuilt = self.merger.replace_text((0, "content" if kind == "text" else "reasoning"), pieces)
        if kind == "text":
            self._content = rebuilt
        else:
            self._reasoning = rebuilt

    def _start(self, value: dict[str, Any], frame: int) -> None:
        self.merger.set_once(("id",), value.get("messageId"), frame)
        self._meta(value, frame)

    def _meta(self, value: dict[str, Any], frame: int) -> None:
        metadata = value.get("messageMetadata")
        if metadata is None:
            return
        if type(metadata) is dict and type(self._metadata) is dict:
            self._metadata = {**self._metadata, **metadata}
        else:
            self._metadata = metadata
        usage = next((metadata.get(key) for key in ("usage", "totalUsage") if type(metadata.get(key)) is dict), None) \
            if type(metadata) is dict else None
        if usage is not None and any(key in usage for key in _USAGE_KEYS):
            self.merger.replace(("usage",), usage, frame)

    def _finish(self, value: dict[str, Any], frame: int) -> None:
        self._meta(value, frame)
        reason = value.get("finishReason")
        if reason is not None:
            self.merger.replace((0, "finish_reason"), reason, frame)
        self.finish_reply()

    def _error(self, value: dict[str, Any], frame: int) -> None:
        self.in_stream_error(frame, f"the stream sent an error chunk: {value.get('errorText')}",
                             raw=json.dumps(value, ensure_ascii=False))

    def _abort(self, value: dict[str, Any], frame: int) -> None:
        reason = value.get("reason")
        self.in_stream_error(frame, "the stream was aborted" + (f": {reason}" if reason else "") +
                             "; the message is what came before", raw=json.dumps(value, ensure_ascii=False))

    _HANDLERS: ClassVar[dict[str, Any]] = {
        "start": _start, "start-step": _step, "finish": _finish, "error": _error, "abort": _abort,
        "message-metadata": _meta, "source-url": _raw, "source-document": _raw, "file": _raw,
        "reasoning-file": _raw, "custom": _custom, "steering-message": _steering, "reset-step": _reset_step}

    # -- end of stream -------------------------------------------------------

    def finish(self, last_frame: int) -> None:
        for kind in sorted(self._stale):
            self._rebuild(kind)
        for tool in self._tools.values():
            if tool.get("textInput"):
                self.merger.parse((0, "tool", tool["key"], "arguments"), last_frame, as_text=True)
            self.check_arguments(0, tool["key"], last_frame)

    def normalise_finish(self, raw: str, has_tool_calls: bool) -> str:
        # A `stop` after tool calls whose outputs all came is the end of a multi-step run (the SDK
        # ran the tools and the last step answered), not a reply that waits for tool results.
        if raw == "stop" and has_tool_calls and all(tool["state"] == "output-available"
                                                    for tool in self._tools.values()):
            return STOP
        return super().normalise_finish(raw, has_tool_calls)

    def normalise_usage(self, raw: object) -> dict[str, Any] | None:
        if type(raw) is not dict:
            return None
        return {"input_tokens": raw.get("inputTokens"), "output_tokens": raw.get("outputTokens"),
                "reasoning_tokens": raw.get("reasoningTokens"), "cache_read_tokens": raw.get("cachedInputTokens"),
                "total_tokens": raw.get("totalTokens")}

    def native(self) -> dict[str, Any] | None:
        """The message's parts in order (text and reasoning as runs of offsets into the choice's
        content and reasoning, tool parts with their state and output, the rest whole) and its metadata."""
        parts = [{key: item for key, item in part.items() if key != "streamed"} for part in self._parts]
        out: dict[str, Any] = {"parts": parts}
        if self._metadata is not None:
            out["metadata"] = self._metadata
        return out


