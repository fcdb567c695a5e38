"""The Vercel AI SDK data stream protocol (`x-vercel-ai-data-stream: v1`, ai 3.x and 4.x): lines of
`TYPE:JSON`, one part a line. Its framing hint (`LINES`, a `framing.hints.LineFormat`) has such a
capture framed one line a frame and each line decoded as a `Prefixed` value.

Source: ai-sdk.dev/v4/docs/ai-sdk-ui/stream-protocol "Data Stream Protocol". One stream is one
assistant message (choice 0):

- `0:"text"` appends to content, `g:"text"` to reasoning; `i:` (redacted reasoning), `j:`
  (its signature), `h:` sources and `k:` files are kept, not text; the items of `2:` data and
  `8:` annotations (each an array) are kept one list each, as ai 4's useChat gathers them;
- `b:` starts a streamed tool call (`toolCallId`, `toolName`; its order of arrival is the key),
  `c:` APPENDS `argsTextDelta`, `9:` is the whole call, whose `args` win over the streamed text
  (as ai 4's `useChat` keeps them); `a:` is a tool's result;
- `f:` starts a step (its `messageId` is the id), `e:` finishes a step (its finish reason and
  usage, added up), `d:` finishes the message: its finish reason and usage are the reply's, and
  the stream ends there; `3:"message"` is an in-stream error.

An unknown type is reported (ai 4's `parseDataStreamPart` throws on it) and skipped.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from ..._json import loads_noting
from ...findings import Report, Severity
from ...framing import FrameView
from ...framing.hints import LineFormat
from ...merge import Merger
from .._base import CONTENT_FILTER, ERROR, LENGTH, OTHER, STOP, TOOL_CALLS, Dialect, compact_json, dumps_arguments

if TYPE_CHECKING:
    from ...merge import ToolPath

__all__ = ["LINES", "Prefixed", "VercelData"]

#: Part type -> its name in the protocol's documentation.
_PARTS = {"0": "text", "g": "reasoning", "i": "redacted_reasoning", "j": "reasoning_signature", "h": "source",
          "k": "file", "2": "data", "8": "message_annotations", "3": "error", "b": "tool_call_streaming_start",
          "c": "tool_call_delta", "9": "tool_call", "a": "tool_result", "f": "start_step", "e": "finish_step",
          "d": "finish_message"}
_KEPT = frozenset("ijhk")
#: The parts whose value is an array of items, gathered into one list each (the names ai 4's useChat gives them).
_GATHERED = {"2": "data", "8": "annotations"}


class Prefixed(NamedTuple):
    """A `T:JSON` line: its one-character type and its JSON value (JSON-encodable as `[type, value]`)."""

    prefix: str
    value: Any


_TYPE_CHARS = frozenset("0123456789abcdefghijklmnopqrstuvwxyz")


def _is_prefixed(data: str) -> bool:
    """Does `data` start as a `T:JSON` line does? No JSON document has a letter or digit and then a colon."""
    return len(data) > 2 and data[1] == ":" and data[0] in _TYPE_CHARS


def _sniff(text: bytes, final: bool) -> bool | None:
    # No SSE field has a one-character name; until the colon comes, a first letter may begin `data:`.
    if not (text[:1].isdigit() or text[:1].islower()):
        return False
    if text[1:2] == b":":
        return True
    return None if not final and len(text) < 2 else False


#: The framing hint: `T:JSON` lines are framed as lines and decoded into `Prefixed` values.
LINES = LineFormat("vercel-data", "ndjson", _sniff, _is_prefixed,
                   lambda data: Prefixed(data[0], loads_noting(data[2:])[0]))


class VercelData(Dialect):
    name = "vercel-data"
    finish_reasons: ClassVar[dict[str, str]] = {
        "stop": STOP, "length": LENGTH, "content-filter": CONTENT_FILTER, "tool-calls": TOOL_CALLS,
        "error": ERROR, "other": OTHER, "unknown": OTHER}
    terminal_hint = "a `d:` finish message part"

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        #: toolCallId -> its key; the calls whose args streamed; the calls whose result came.
        self._keys: dict[str, int] = {}
        self._streamed: set[str] = set()
        self._results: dict[str, Any] = {}
        #: The other parts that are not text, as [type, value], in order.
        self._kept: list[list[Any]] = []
        #: The items of the `2:` and `8:` parts, a list each: flat, not a [type, value] pair and a list per line
        #: (that object graph cost 31x the input on a stream of small annotations).
        self._gathered: dict[str, list[Any]] = {}
        self._steps = 0
        self._step_usage: dict[str, int] = {}
        self.merger.set_once((0, "role"), "assistant", 0)

    @classmethod
    def claims(cls, value: object) -> bool:
        return type(value) is Prefixed and value.prefix in _PARTS

    # -- the fold loop -------------------------------------------------------

    def fold(self, value: object, frame: int) -> None:
        if type(value) is not Prefixed:
            self.report.diagnostic("unexpected-payload", frame, "a data stream line is `TYPE:JSON`, not the JSON "
                                   f"document {compact_json(value, 60)}; ignored", once=("json",))
            return
        prefix, body = value
        if prefix == "0" or prefix == "g":
            piece = self.string(body, frame, f"a {_PARTS[prefix]} part")
            if piece:
                self.merger.append((0, "content" if prefix == "0" else "reasoning"), piece, frame)
        elif prefix in _GATHERED:
            items = self._gathered.setdefault(_GATHERED[prefix], [])
            if type(body) is list:
                items.extend(body)
            else:
                self.wrong_type(body, frame, f"a {_PARTS[prefix]} part", "an array",
                                "kept as one item (ai 4's parser throws on it)")
                items.append(body)
        elif prefix in _KEPT:
            self._kept.append([prefix, body])
        elif prefix in ("b", "c", "9", "a"):
            self._tool(prefix, body, frame)
        elif prefix == "f":
            self._steps += 1
            if type(body) is dict:
                self.merger.set_once(("id",), body.get("messageId"), frame)
        elif prefix == "e" or prefix == "d":
            self._finish_part(prefix, body, frame)
        elif prefix == "3":
            said = body if type(body) is str else compact_json(body)
            self.in_stream_error(frame, f"the stream sent an error part: {said}",
                                 raw=json.dumps(body, ensure_ascii=False))
        else:
            self.report.diagnostic(
                "unknown-event-type", frame, f"part type {prefix!r} is not in the data stream protocol; skipped "
                "(ai 4's parseDataStreamPart throws on it)", severity=Severity.INFO, once=("part", prefix), type=prefix)

    def _tool(self, prefix: str, body: object, frame: int) -> None:
        call_id = body.get("toolCallId") if type(body) is dict else None
        if type(body) is not dict or type(call_id) is not str:
            self.wrong_type(body, frame, f"a {_PARTS[prefix]} part (with a string `toolCallId`)", "an object")
            return
        if prefix == "a":
            self._results[call_id] = body.get("result")
            return
        key = self._keys.get(call_id)
        if key is None:
            key = self._keys[call_id] = len(self._keys)
            if prefix == "c":
                self.report.diagnostic(
                    "tool-call-missing-index", frame, f"a tool call delta for {call_id!r}, which no `b:` part started; "
                    f"it starts tool call {key} with no name", once=("delta", call_id), choice=0, tool_call=key)
            self.merger.set_once((0, "tool", key, "id"), call_id, frame)
        self.merger.set_once((0, "tool", key, "name"), body.get("toolName"), frame)
        path: ToolPath = (0, "tool", key, "arguments")
        if prefix == "c":
            piece = self.string(body.get("argsTextDelta"), frame, "a tool call delta's `argsTextDelta`")
            if piece:
                self._streamed.add(call_id)
                self.merger.append(path, piece, frame)
        elif prefix == "9" and "args" in body:
            whole = body["args"]
            if call_id in self._streamed:
                streamed = self.merger.parse(path, frame)
                if streamed.error is None and streamed.value == whole:
                    return
                self.report.diagnostic(
                    "final-text-mismatch", frame, f"tool call {key} ({call_id}): the streamed arguments "
                    f"{compact_json(self.merger.text(path), 80)} are not the `args` of its `9:` part "
                    f"{compact_json(whole, 80)}; the whole args are kept, as ai 4's useChat keeps them",
                    choice=0, tool_call=key)
            self.merger.replace_text(path, [(dumps_arguments(whole), frame)])

    def _finish_part(self, prefix: str, body: object, frame: int) -> None:
        if type(body) is not dict:
            self.wrong_type(body, frame, f"a {_PARTS[prefix]} part", "an object")
            return
        reason = body.get("finishReason")
        if type(reason) is str:
            self.merger.replace((0, "finish_reason"), reason, frame)
        usage = body.get("usage")
        if prefix == "e":
            if type(usage) is dict:
                for name in ("promptTokens", "completionTokens"):
                    if type(usage.get(name)) is int:
                        self._step_usage[name] = self._step_usage.get(name, 0) + usage[name]
                self.merger.replace(("usage",), dict(self._step_usage), frame)
            return
        if type(usage) is dict:
            self.merger.replace(("usage",), usage, frame)
        self.terminate(frame)

    # -- end of stream -------------------------------------------------------

    def finish(self, last_frame: int) -> None:
        for key in self._keys.values():
            self.check_arguments(0, key, last_frame)

    def normalise_finish(self, raw: str, has_tool_calls: bool) -> str:
        # `stop` after tool calls whose results all came is a multi-step run's end, not a wait for results.
        if raw == "stop" and has_tool_calls and self._keys.keys() <= self._results.keys():
            return STOP
        return super().normalise_finish(raw, has_tool_calls)

    def normalise_usage(self, raw: object) -> dict[str, Any] | None:
        if type(raw) is not dict:
            return None
        prompt, completion = raw.get("promptTokens"), raw.get("completionTokens")
        total = prompt + completion if type(prompt) is int and type(completion) is int else None
        return {"input_tokens": prompt, "output_tokens": completion, "reasoning_tokens": None,
                "cache_read_tokens": None, "total_tokens": total}

    def native(self) -> dict[str, Any] | None:
        """The other parts that are not text ([type, value] in order), the items of the data and the annotation
        parts, the tools' results by call id, the steps."""
        out: dict[str, Any] = {"steps": self._steps}
        if self._kept:
            out["parts"] = self._kept
        out.update(self._gathered)
        if self._results:
            out["tool_results"] = self._results
        return out

    @classmethod
    def summarize(cls, value: object) -> str:
        if type(value) is not Prefixed:
            return compact_json(value)
        prefix, body = value
        name = _PARTS.get(prefix, f"part {prefix}")
        if type(body) is dict:
            said = body.get("argsTextDelta") or body.get("toolName") or body.get("finishReason")
            call = f" {body['toolCallId']}" if type(body.get("toolCallId")) is str else ""
            return f"{prefix}: {name}{call}" + (f" {compact_json(said, 60)}" if said is not None else "")
        return f"{prefix}: {name} {compact_json(body, 80)}"
