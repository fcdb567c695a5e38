"""AWS Bedrock: `ConverseStream` and `InvokeModelWithResponseStream` (reference §4.7, B1, F10).

On the wire the event name is the `:event-type` header of an AWS event-stream
message and the payload is the event body without a wrapper; SDK logs show
the same events wrapped (`{"contentBlockDelta": {...}}`), and both fold here.
Text and reasoning blocks usually have no `contentBlockStart` (B1), so blocks
are created on their first delta. `messageStop` ends the reply but is not the
last frame: `metadata` with the usage follows it.

`InvokeModelWithResponseStream` wraps the model vendor's own events as base64
in `chunk` events; they are decoded and folded by that vendor's dialect
(Anthropic for Claude), into the same merger.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from .._json import loads
from ..findings import Report, Severity
from ..framing import FrameView
from ..merge import Merger
from ._base import CONTENT_FILTER, ERROR, LENGTH, STOP, TOOL_CALLS, Dialect, compact_json

if TYPE_CHECKING:
    from ..merge import ChoiceField
    from ..result import Choice, Result

__all__ = ["Bedrock"]

_CONVERSE_EVENTS = frozenset({"messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop",
                              "messageStop", "metadata"})


class Bedrock(Dialect):
    name = "bedrock"
    transports = ("aws-eventstream",)
    terminal_hint = "`messageStop`"
    finish_reasons: ClassVar[dict[str, str]] = {
        "end_turn": STOP,
        "stop_sequence": STOP,
        "tool_use": TOOL_CALLS,
        "max_tokens": LENGTH,
        "model_context_window_exceeded": LENGTH,
        "guardrail_intervened": CONTENT_FILTER,
        "content_filtered": CONTENT_FILTER,
        "malformed_model_output": ERROR,
        "malformed_tool_use": ERROR,
    }

    #: The registry's `detect`, which tells the vendor an InvokeModel chunk wraps. The registry
    #: (`streamfold.dialects`) imports this module, so it is the one to set it; while it does not,
    #: `_invoke_chunk` imports it (an import circle).
    detect_inner: ClassVar[Callable[[Any], type[Dialect] | None] | None] = None

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        #: Open content blocks: index -> kind ("text", "reasoning", "tool_call", ...).
        self._blocks: dict[int, str] = {}
        self._block_fields: dict[int, dict[str, Any]] = {}
        #: The wrapped vendor's dialect, for InvokeModelWithResponseStream.
        self._inner: Dialect | None = None

    @classmethod
    def claims(cls, value: Any) -> bool:
        # SDK-shaped events ({"contentBlockDelta": {...}}); raw event-stream
        # frames are Bedrock by their transport.
        return isinstance(value, dict) and len(value) == 1 and next(iter(value)) in _CONVERSE_EVENTS

    def fold(self, value: Any, frame: int) -> None:
        headers = dict(self.frames.headers(frame)) if frame < len(self.frames) else {}
        if headers.get(":message-type") in ("exception", "error"):
            return  # framing reported it as an in-stream error
        event = headers.get(":event-type")
        if event is None and self.claims(value):
            ((event, value),) = value.items()
        if type(value) is not dict:
            self.report.diagnostic("unexpected-payload", frame,
                                   f"expected a JSON object for a Bedrock event, got {type(value).__name__}; ignored")
            return
        if event == "chunk":
            self._invoke_chunk(value, frame)
        elif event in _CONVERSE_EVENTS:
            getattr(self, "_" + event)(value, frame)
        else:
            self.report.diagnostic("unknown-event", frame, f"unknown Bedrock event {event!r}; ignored",
                                   severity=Severity.INFO, once=event, event=event)

    # -- ConverseStream ---------------------------------------------------------

    def _messageStart(self, value: dict[str, Any], frame: int) -> None:  # named after the event
        self.merger.set_once((0, "role"), value.get("role"), frame)

    def _contentBlockStart(self, value: dict[str, Any], frame: int) -> None:
        index = value.get("contentBlockIndex")
        start = value.get("start")
        if type(index) is not int or type(start) is not dict:
            return
        tool = start.get("toolUse")
        if type(tool) is dict:
            self._open(index, "tool_call", frame)
            self.merger.set_once((0, "tool", index, "id"), tool.get("toolUseId"), frame)
            self.merger.set_once((0, "tool", index, "name"), tool.get("name"), frame)
            self.merger.buffer((0, "tool", index, "arguments"))
        else:
            kind = next(iter(start), None)
            if kind is not None:  # an empty `start` says nothing: the block's deltas decide its kind
                self._open(index, kind, frame)
                self._block_fields[index][kind] = start[kind]

    def _contentBlockDelta(self, value: dict[str, Any], frame: int) -> None:
        index = value.get("contentBlockIndex")
        delta = value.get("delta")
        if type(index) is not int or type(delta) is not dict:
            return
        text = delta.get("text")
        if text is not None:
            self._open(index, "text", frame)
            self.merger.append((0, "content"), text, frame)
        tool = delta.get("toolUse")
        if type(tool) is dict:
            self._open(index, "tool_call", frame)
            self.merger.append((0, "tool", index, "arguments"), tool.get("input"), frame)
        reasoning = delta.get("reasoningContent")
        if type(reasoning) is dict:
            self._open(index, "reasoning", frame)
            self.merger.append((0, "reasoning"), reasoning.get("text"), frame)
            fields = self._block_fields[index]
            if reasoning.get("signature"):
                fields["signature"] = reasoning["signature"]  # REPLACE
            if reasoning.get("redactedContent"):
                fields["redactedContent"] = fields.get("redactedContent", "") + reasoning["redactedContent"]
        citation = delta.get("citation")
        if citation is not None:
            self._open(index, "text", frame)
            self._block_fields[index].setdefault("citations", []).append(citation)

    def _contentBlockStop(self, value: dict[str, Any], frame: int) -> None:
        index = value.get("contentBlockIndex")
        if type(index) is not int or index not in self._blocks:
            return
        self._close(index, frame)

    def _messageStop(self, value: dict[str, Any], frame: int) -> None:
        self.merger.replace((0, "finish_reason"), value.get("stopReason"), frame)
        for index in list(self._blocks):
            self._close(index, frame)
        self.finish_reply()

    def _metadata(self, value: dict[str, Any], frame: int) -> None:
        self.merger.replace(("usage",), value.get("usage"), frame)
        self.merger.replace(("dialect", "metrics"), value.get("metrics"), frame)

    def _open(self, index: int, kind: str, frame: int) -> None:
        if index not in self._blocks:
            self._blocks[index] = kind
            # Where this block's text starts in the choice's one content/reasoning buffer.
            field: ChoiceField = "reasoning" if kind == "reasoning" else "content"
            self._block_fields[index] = {"_start": self.merger.buffer((0, field)).length}
            self.merger.replace((0, "block", index), {"type": kind, "index": index}, frame)

    def _close(self, index: int, frame: int) -> None:
        kind = self._blocks.pop(index)
        self.merger.replace((0, "block", index), {"type": kind, "index": index, **self._block_fields[index]}, frame)
        if kind == "tool_call":
            self.merger.parse((0, "tool", index, "arguments"), frame)

    # -- InvokeModelWithResponseStream ------------------------------------------

    def _invoke_chunk(self, value: dict[str, Any], frame: int) -> None:
        encoded = value.get("bytes")
        if not isinstance(encoded, str):
            self.report.diagnostic("unexpected-payload", frame,
                                   "a Bedrock `chunk` event without base64 `bytes`; ignored")
            return
        try:
            inner_value = loads(base64.b64decode(encoded, validate=True).decode("utf-8"))
        except (TypeError, ValueError, binascii.Error, UnicodeDecodeError) as exc:
            self.report.error("invalid-json", frame, f"a Bedrock `chunk` whose `bytes` are not base64 JSON: {exc}",
                              raw=compact_json(value))
            return
        if self._inner is None:
            detect = Bedrock.detect_inner
            found = None if detect is None else detect(inner_value)
            if found is None or found is Bedrock:
                self.report.diagnostic("unknown-dialect", frame,
                                       "a Bedrock `chunk` wraps a payload no dialect recognises; ignored",
                                       once=True, keys=sorted(inner_value) if isinstance(inner_value, dict) else [])
                return
            self._inner = found(self.merger, self.report, self.frames)
        self._inner.fold(inner_value, frame)

    # -- end of stream -------------------------------------------------------------

    def finish(self, last_frame: int) -> None:
        inner = self._inner
        if inner is not None:
            inner.finish(last_frame)
            self.end, self.terminal = inner.end, inner.terminal
            return
        for index, kind in list(self._blocks.items()):
            self.report.diagnostic(
                "block-not-closed", last_frame,
                f"content block {index} ({kind}) never got its contentBlockStop; it was closed at the end of the "
                "stream (maximhq/bifrost#4262: consumers that wait for the stop lose it)",
                severity=Severity.INFO, block=index)
            self._close(index, last_frame)

    def normalise_finish(self, raw: str, has_tool_calls: bool) -> str:
        if self._inner is not None:
            return self._inner.normalise_finish(raw, has_tool_calls)
        return super().normalise_finish(raw, has_tool_calls)

    def normalise_usage(self, raw: Any) -> dict[str, Any] | None:
        if self._inner is not None:
            return self._inner.normalise_usage(raw)
        if type(raw) is not dict:
            return None
        return {
            "input_tokens": raw.get("inputTokens"),
            "output_tokens": raw.get("outputTokens"),
            "reasoning_tokens": None,
            "cache_read_tokens": raw.get("cacheReadInputTokens"),
            "total_tokens": raw.get("totalTokens"),
        }

    def native(self) -> dict[str, Any] | None:
        """InvokeModel: the wrapped vendor's dialect and its own snapshot. ConverseStream: the
        `metadata` metrics, and per content block (by index) where its text starts in the choice's
        content or reasoning (`start`) with its signature, redacted content and citations."""
        inner = self._inner
        if inner is not None:
            return {"inner": inner.name, "native": inner.native()}
        out: dict[str, Any] = {}
        metrics = self.merger.get(("dialect", "metrics"))
        if metrics is not None:
            out["metrics"] = metrics
        blocks: dict[str, Any] = {}
        for path, (fields, _, _) in self.merger.values.items():
            if len(path) == 3 and type(path[0]) is int and path[0] == 0 and path[1] == "block" \
                    and type(fields) is dict:
                exported = _EXPORTED_FIELDS.get(str(fields.get("type")), ())
                kept = {name: fields[name] for name in exported if name in fields}
                if "_start" in kept:
                    kept["start"] = kept.pop("_start")
                if kept:
                    blocks[str(path[2])] = kept
        if blocks:
            out["blocks"] = blocks
        return out or None

    @classmethod
    def export(cls, result: Result) -> dict[str, Any]:
        """The `ConverseResponse` (or, for InvokeModel, the wrapped vendor's own object)."""
        native = result.native if type(result.native) is dict else {}
        inner = native.get("inner")
        if inner is not None:
            # The wrapped vendor's own export, found as `Result.export()` finds every dialect's.
            return dataclasses.replace(result, dialect=inner, native=native.get("native")).export()
        choice = result.choice(0)
        out: dict[str, Any] = {"output": {"message": {"role": "assistant", "content": []}}, "stopReason": None}
        if choice is not None:
            out["output"]["message"] = {"role": choice.role or "assistant",
                                        "content": _exported_content(choice, native.get("blocks", {}))}
            out["stopReason"] = choice.finish_reason_raw
        if result.usage is not None:
            out["usage"] = result.usage.raw
        metrics = native.get("metrics")
        if metrics is not None:
            out["metrics"] = metrics
        return out

    @classmethod
    def summarize(cls, value: Any) -> str:
        if isinstance(value, dict) and "bytes" in value:
            try:
                return "chunk " + compact_json(json.loads(base64.b64decode(value["bytes"])), 150)
            except (TypeError, ValueError, binascii.Error):
                pass
        return compact_json({k: v for k, v in value.items() if k != "p"} if isinstance(value, dict) else value)


#: What the export reads of a content block's fields, by block type.
_EXPORTED_FIELDS = {"text": ("_start", "citations"), "reasoning": ("_start", "signature", "redactedContent")}


def _exported_content(choice: Choice, fields_by_index: dict[str, Any]) -> list[dict[str, Any]]:
    calls = {call.key: call for call in choice.tool_calls}
    blocks = [(block, fields_by_index.get(str(block.index), {})) for block in choice.blocks]
    texts = {"text": choice.content, "reasoning": choice.reasoning or ""}
    content: list[dict[str, Any]] = []
    for position, (block, fields) in enumerate(blocks):
        if block.type in texts:
            # A block's text runs from its start to the next block of the same kind.
            later = [f["start"] for b, f in blocks[position + 1 :] if b.type == block.type]
            text = texts[block.type][fields.get("start", 0) : later[0] if later else None]
        if block.type == "text":
            part: dict[str, Any] = {"text": text}
            if "citations" in fields:
                part["citationsContent"] = fields["citations"]
            content.append(part)
        elif block.type == "reasoning":
            if "redactedContent" in fields:
                content.append({"reasoningContent": {"redactedContent": fields["redactedContent"]}})
            else:
                reasoning: dict[str, Any] = {"text": text}
                if "signature" in fields:
                    reasoning["signature"] = fields["signature"]
                content.append({"reasoningContent": {"reasoningText": reasoning}})
        elif block.type == "tool_call" and block.index in calls:
            call = calls[block.index]
            content.append({"toolUse": {"toolUseId": call.id, "name": call.name,
                                        "input": call.parsed if call.error is None else {}}})
    return content
