"""AWS Bedrock: `ConverseStream` and `InvokeModelWithResponseStream` (reference §4.7, B1, F10).

On the wire the event name is the `:event-type` header of an AWS event-stream
message and the payload is the event body without a wrapper; SDK logs show
the same events wrapped (`{"contentBlockDelta": {...}}`), and both fold here.
Text and reasoning blocks usually have no `contentBlockStart` (B1), so blocks
are created on their first delta. `messageStop` ends the reply but is not the
last frame: `metadata` with the usage follows it. A `toolUse` of type
`server_tool_use` (Nova's code interpreter) is run by Bedrock, not by the
client: like Anthropic's server tools it is a block with its input (in
`blocks` and the export), not a tool call.

`InvokeModelWithResponseStream` wraps the model's own events as base64 JSON in
`chunk` events. Amazon Nova's are ConverseStream events (`{"messageStart":
...}`, with `amazon-bedrock-*` keys beside them) and fold here. Another
vendor's (Anthropic's for Claude) are folded by that vendor's dialect, into
the same merger, and the Result names that dialect: Bedrock is then the
carrier (the transport says `aws-eventstream`), as Gemini stays `gemini` over
two transports. The `:event-type chunk` header is the carrier's envelope, not
an event name of the wrapped vendor's.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from ..._json import loads
from ..._toolargs import parse_arguments
from ...findings import Report, Severity
from ...framing import FrameView
from ...merge import Merger, TextBuffer
from .._base import CONTENT_FILTER, ERROR, LENGTH, STOP, TOOL_CALLS, Dialect, compact_json, fast_decoder
from .native import snapshot
from .summary import summarize_event

if TYPE_CHECKING:
    from ...merge import ChoiceField, ChoicePath
    from .fast import TextBlockDelta

__all__ = ["Bedrock"]

CONVERSE_EVENTS = frozenset({"messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop",
                              "messageStop", "metadata"})
#: Keys Bedrock's InvokeModel adds beside the model's own event in a chunk.
_ENVELOPE_PREFIX = "amazon-bedrock-"
SERVER_TOOL = "server_tool_use"
_FAST_SHAPES = fast_decoder(f"{__package__}.fast", "decode_text_delta")
_CONTENT: ChoicePath = (0, "content")


def converse_event(value: object) -> tuple[str, dict[str, Any]] | None:
    """(event, body) of a wrapped ConverseStream event, `amazon-bedrock-*` keys aside; else None."""
    if type(value) is not dict:
        return None
    keys = [key for key in value if not (type(key) is str and key.startswith(_ENVELOPE_PREFIX))]
    if len(keys) != 1 or keys[0] not in CONVERSE_EVENTS or type(value[keys[0]]) is not dict:
        return None
    return keys[0], value[keys[0]]


class Bedrock(Dialect):
    name = "bedrock"
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
    #: (`streamfold.dialects`) imports this module, so it is the one to set it (an import circle otherwise).
    detect_inner: ClassVar[Callable[[Any], type[Dialect] | None] | None] = None
    #: The registry's summary of a dialect's payloads (set by the registry too).
    summary_of: ClassVar[Callable[[type[Dialect]], Callable[[object], str]]]

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        #: Open content blocks: index -> kind ("text", "reasoning", "tool_call", ...).
        self._blocks: dict[int, str] = {}
        self._block_fields: dict[int, dict[str, Any]] = {}
        #: A server tool's input fragments with their frames, by block (PARSE-AT-END).
        self._server_input: dict[int, list[tuple[str, int]]] = {}
        #: The wrapped vendor's dialect, for InvokeModelWithResponseStream.
        self._inner: Dialect | None = None
        #: InvokeModel chunks held ConverseStream events (Amazon Nova): they fold here.
        self._converse_chunks = False
        self.fast_decoder = _FAST_SHAPES

    @property
    def reported(self) -> Dialect:
        return self if self._inner is None else self._inner

    def carry(self, inner: Dialect) -> bool:
        inner.carrier = self
        inner.transport = self.transport
        self._inner = inner
        return True

    @classmethod
    def claims(cls, value: object) -> bool:
        # SDK-shaped events ({"contentBlockDelta": {...}}); raw event-stream
        # frames are Bedrock by their transport.
        return isinstance(value, dict) and len(value) == 1 and next(iter(value)) in CONVERSE_EVENTS

    def fold(self, value: object, frame: int) -> None:
        headers = dict(self.frames.headers(frame)) if frame < len(self.frames) else {}
        if headers.get(":message-type") in ("exception", "error"):
            return  # framing reported it as an in-stream error
        event = headers.get(":event-type")
        if event is None and isinstance(value, dict) and self.claims(value):
            ((event, value),) = value.items()
        if type(value) is not dict:
            self.report.diagnostic("unexpected-payload", frame,
                                   f"expected a JSON object for a Bedrock event, got {type(value).__name__}; ignored")
            return
        if event == "chunk":
            self._invoke_chunk(value, frame)
        elif event in CONVERSE_EVENTS:
            getattr(self, "_" + event)(value, frame)
        else:
            self.report.diagnostic("unknown-event", frame, f"unknown Bedrock event {event!r}; ignored",
                                   severity=Severity.INFO, once=event, event=event)

    def fold_fast_run(self, pieces: Sequence[bytes], position: int, start: int, frame: int,
                      events: Sequence[bytes | None] | None) -> int:
        """`contentBlockDelta`s of text decoded by `fast`, named so by their `:event-type` header (a run
        holds only `event` messages), each for an open text block: appended as `fold` appends them, in
        one loop, the run's text in one `extend`. It stops at anything else (another event, a block not
        open yet or of another kind), which is `fold`'s."""
        buffer = self.merger.texts.get(_CONTENT)
        if events is None or type(buffer) is not TextBuffer:  # (the text block opened it; else it is `fold`'s)
            return 0
        decode, blocks, at, first = self.fast_decoder, self._blocks, position, frame - position
        assert decode is not None
        added: list[str] = []  # the run's text so far, and its frames, for one `extend`
        frames: list[int] = []
        try:
            for at in range(position, len(pieces)):
                if events[at] != b"contentBlockDelta":
                    return at - position
                value: TextBlockDelta = decode(pieces[at][start:])
                if blocks.get(value.index) != "text":
                    return at - position
                if value.delta.text:
                    added.append(value.delta.text)
                    frames.append(first + at)
        except (ValueError, RecursionError):
            return at - position
        finally:
            buffer.extend(added, frames)
        return len(pieces) - position

    # -- ConverseStream ---------------------------------------------------------

    def _messageStart(self, value: dict[str, Any], frame: int) -> None:  # named after the event
        self.merger.set_once((0, "role"), value.get("role"), frame)

    def _contentBlockStart(self, value: dict[str, Any], frame: int) -> None:
        index = value.get("contentBlockIndex")
        start = value.get("start")
        if type(index) is not int or type(start) is not dict:
            return
        tool = start.get("toolUse")
        if type(tool) is dict and tool.get("type") == SERVER_TOOL:
            self._open(index, SERVER_TOOL, frame)
            self._block_fields[index].update(
                {key: tool[key] for key in ("toolUseId", "name", "type") if key in tool})
            self._server_input.setdefault(index, [])
        elif type(tool) is dict:
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
            server = self._server_input.get(index)
            if server is not None:
                piece = tool.get("input")
                if type(piece) is str and piece:
                    server.append((piece, frame))
            else:
                self.merger.append((0, "tool", index, "arguments"), tool.get("input"), frame)
        result = delta.get("toolResult")
        if type(result) is list:
            self._open(index, "toolResult", frame)
            self._tool_result(self._block_fields[index], result)
        reasoning = delta.get("reasoningContent")
        if type(reasoning) is dict:
            self._open(index, "reasoning", frame)
            self.merger.append((0, "reasoning"), reasoning.get("text"), frame)
            fields = self._block_fields[index]
            if reasoning.get("signature"):
                fields["signature"] = reasoning["signature"]  # REPLACE
            redacted = reasoning.get("redactedContent")
            if redacted and type(redacted) is str:
                fields["redactedContent"] = fields.get("redactedContent", "") + redacted
            elif redacted:
                self.wrong_type(redacted, frame, f"the `redactedContent` of content block {index}", "a string")
        citation = delta.get("citation")
        if citation is not None:
            self._open(index, "text", frame)
            self._block_fields[index].setdefault("citations", []).append(citation)

    @staticmethod
    def _tool_result(fields: dict[str, Any], pieces: list[Any]) -> None:
        """A server tool's result streamed as `{"text": ...}` / `{"json": ...}` items: text APPENDs."""
        content: list[Any] = fields.setdefault("content", [])
        for piece in pieces:
            if type(piece) is not dict:
                continue
            text = piece.get("text")
            if type(text) is str and content and type(content[-1].get("text")) is str:
                content[-1] = {"text": content[-1]["text"] + text}
            else:
                content.append(dict(piece))

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
        fields = self._block_fields[index]
        if kind == "tool_call":
            self.merger.parse((0, "tool", index, "arguments"), frame)
        elif kind == SERVER_TOOL:
            self._server_close(index, fields, frame)
        self.merger.replace((0, "block", index), {"type": kind, "index": index, **fields}, frame)

    def _server_close(self, index: int, fields: dict[str, Any], frame: int) -> None:
        """PARSE-AT-END of a server tool's input, reported as a tool call's would be."""
        fragments = self._server_input.get(index, [])
        joined = "".join(piece for piece, _ in fragments)
        parsed = parse_arguments(joined, fragments)
        fields["input"] = parsed.value if parsed.error is None else joined
        if not parsed.clean:
            name = fields.get("name")
            self.report_arguments(f"server tool call in content block {index}" + (f" ({name})" if name else ""),
                                  parsed, fragments, frame, choice=0, tool_call=index)

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
        inner = self._inner
        if inner is None:
            converse = converse_event(inner_value)
            if converse is not None:  # Amazon Nova: ConverseStream events inside the chunks
                self._converse_chunks = True
                event, body = converse
                getattr(self, "_" + event)(body, frame)
                return
            if self._converse_chunks:
                self.report.diagnostic(
                    "unexpected-payload", frame,
                    "a Bedrock `chunk` that is not a ConverseStream event, in a stream of them; ignored",
                    once=("chunk-shape",), keys=sorted(map(str, inner_value)) if type(inner_value) is dict else [])
                return
            detect = Bedrock.detect_inner
            found = None if detect is None else detect(inner_value)
            if found is None or found is Bedrock:
                self.report.diagnostic("unknown-dialect", frame,
                                       "a Bedrock `chunk` wraps a payload no dialect recognises; ignored",
                                       once=True, keys=sorted(inner_value) if isinstance(inner_value, dict) else [])
                return
            inner = found(self.merger, self.report, self.frames)
            self.carry(inner)
        inner.fold(inner_value, frame)
        self.end, self.terminal = inner.end, inner.terminal

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

    def normalise_usage(self, raw: object) -> dict[str, Any] | None:
        if type(raw) is not dict:
            return None
        return {
            "input_tokens": raw.get("inputTokens"),
            "output_tokens": raw.get("outputTokens"),
            "reasoning_tokens": None,
            # InvokeModel's Nova chunks name it `cacheReadInputTokenCount`.
            "cache_read_tokens": raw.get("cacheReadInputTokens", raw.get("cacheReadInputTokenCount")),
            "total_tokens": raw.get("totalTokens"),
        }

    def native(self) -> dict[str, Any] | None:
        """The `metadata` metrics, and per content block (by index) what the export needs beyond the
        Result: where its text starts in the choice's content or reasoning (`start`) with its
        signature, redacted content and citations; a server tool's id, name, type and input; a
        tool result's start and content."""
        return snapshot(self.merger)


    @classmethod
    def summarize(cls, value: object) -> str:
        if isinstance(value, dict) and "bytes" in value:
            try:
                inner = loads(base64.b64decode(value["bytes"]).decode("utf-8", "replace"))
            except (TypeError, ValueError, binascii.Error):
                pass
            else:
                detect = Bedrock.detect_inner
                found = None if detect is None or converse_event(inner) is not None else detect(inner)
                if found is not None and found is not Bedrock:
                    return "chunk · " + Bedrock.summary_of(found)(inner)
                converse = converse_event(inner)
                said = None if converse is None else summarize_event(*converse)
                return "chunk · " + said if said is not None else "chunk " + compact_json(inner, 150)
        if type(value) is dict:
            converse = converse_event(value)  # an SDK log's {"contentBlockDelta": {...}}
            said = summarize_event(*converse) if converse is not None else summarize_event(None, value)
            if said is not None:
                return said
        return compact_json({k: v for k, v in value.items() if k != "p"} if isinstance(value, dict) else value)
