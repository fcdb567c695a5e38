"""Anthropic Messages (`POST /v1/messages`, `stream: true`), reference §4.3.

Traps A1-A6, U1/U2. The stream is a sequence of typed events:
`message_start`, then per content block `content_block_start`, deltas and
`content_block_stop`, then `message_delta` and `message_stop`. Everything is
dispatched on the JSON `type`, never on the SSE `event:` name, because
proxies strip the `event:` lines (A1); a missing or different `event:` name
is only reported.

Each content block is an explicit block `(0, "block", index)` spanning its
start and stop frames, so `blocks` lists the real content blocks in order.
Text blocks APPEND to content, thinking blocks to reasoning, `tool_use`
blocks are the tool calls (key = block index), their `partial_json`
fragments APPENDed and parsed at `content_block_stop` (A2, A3). Server tool
calls (`server_tool_use`, beta `mcp_tool_use`: run by Anthropic, not by the
client; their input is streamed and parsed like a tool call's) and their
result blocks are kept as blocks with their vendor content for the export,
not as tool calls.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ...framing import FrameView

from ...merge import Merger
from ...findings import Report, Severity
from ..._toolargs import ParsedArguments, parse_arguments
from .._base import event_type, CONTENT_FILTER, INCOMPLETE, LENGTH, STOP, TOOL_CALLS, Dialect, compact_json

if TYPE_CHECKING:
    from ...result import Result
    from .._shapes import BlockDelta

try:
    from .._shapes import DECODERS as _DECODERS

    _FAST_SHAPES: Callable[[bytes], Any] | None = _DECODERS["anthropic"]
except ImportError:  # no msgspec: no fast way
    _FAST_SHAPES = None

__all__ = ["Anthropic"]

CHOICE = 0
_EVENT_TYPES = frozenset({
    "message_start", "content_block_start", "content_block_delta", "content_block_stop",
    "message_delta", "message_stop", "ping"})
#: Vendor block type -> the block type of the result's `blocks`.
_BLOCK_TYPES = {
    "text": "text",
    "thinking": "reasoning",
    "redacted_thinking": "redacted_reasoning",
    "tool_use": "tool_call",
    "server_tool_use": "server_tool_use",
}
#: Blocks that arrive whole in `content_block_start` (reference §4.3 table).
_WHOLE_BLOCKS = frozenset({
    "redacted_thinking", "web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result",
    "bash_code_execution_tool_result", "text_editor_code_execution_tool_result", "tool_search_tool_result",
    "container_upload", "mcp_tool_result"})
#: Tool calls Anthropic runs itself (not the client's): blocks with a streamed input, not tool calls.
_SERVER_TOOLS = frozenset({"server_tool_use", "mcp_tool_use"})
#: The delta type each block type takes (for a block whose start was lost).
_DELTA_BLOCK = {"text_delta": "text", "citations_delta": "text", "thinking_delta": "thinking",
                "signature_delta": "thinking", "input_json_delta": "tool_use"}
_SDK_DROPS = "the anthropic SDKs skip every frame without an `event:` name"


class _Block:
    """One content block: what the merger does not hold but the export needs."""

    __slots__ = ("index", "kind", "start", "first_frame", "last_frame", "stop", "pieces", "json", "saw_input",
                 "citations", "signature", "parsed")

    def __init__(self, index: int, kind: str, start: dict[str, Any], frame: int) -> None:
        self.index = index
        #: The vendor's block type (`text`, `thinking`, `tool_use`, ...).
        self.kind = kind
        #: The `content_block` of `content_block_start`, as sent.
        self.start = start
        self.first_frame = frame
        self.last_frame = frame
        #: The frame of its `content_block_stop`, None while open.
        self.stop: int | None = None
        #: Text or thinking pieces of this block (the merger joins all blocks).
        self.pieces: list[str] = []
        #: Server tool input fragments with their frames (PARSE-AT-END).
        self.json: list[tuple[str, int]] = []
        self.saw_input = False
        self.citations: list[Any] | None = None
        self.signature: str | None = None
        self.parsed: ParsedArguments | None = None


class Anthropic(Dialect):
    name = "anthropic"
    terminal_hint = "`message_stop`"
    # Some Anthropic-compatible gateways add `data: [DONE]` after `message_stop`: not the end.
    done_is_terminal = False
    finish_reasons = {
        "end_turn": STOP,
        "stop_sequence": STOP,
        "max_tokens": LENGTH,
        "model_context_window_exceeded": LENGTH,
        "tool_use": TOOL_CALLS,
        "refusal": CONTENT_FILTER,
        "pause_turn": INCOMPLETE,
    }

    def __init__(self, merger: Merger | None = None, report: Report | None = None, frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self._blocks: dict[int, _Block] = {}
        self._content = self.merger.buffer((CHOICE, "content"))
        self.fast_decoder = _FAST_SHAPES
        self._usage: dict[str, Any] = {}
        self._started = False
        #: Frames without an `event:` name (A1): the first one and how many.
        self._no_event: tuple[int, int] | None = None
        self._handlers: dict[Any, Callable[[dict[str, Any], int], None]] = {
            "message_start": self._message_start,
            "content_block_start": self._block_start,
            "content_block_delta": self._delta,
            "content_block_stop": self._block_stop,
            "message_delta": self._message_delta,
            "message_stop": self._message_stop,
            "error": self._error,
        }

    @classmethod
    def claims(cls, value: Any) -> bool:
        kind = event_type(value)
        if kind is None:
            return False
        if kind in _EVENT_TYPES:
            return True
        # An error event: {"type": "error", "error": {"type": "overloaded_error", "message": ...}}.
        error = value.get("error")
        return kind == "error" and type(error) is dict and "type" in error

    # -- the fold loop (once per frame: keep it lean) -------------------------

    def fold(self, value: Any, frame: int) -> None:
        if type(value) is not dict:
            self.report.diagnostic(
                "unexpected-payload", frame,
                f"expected a JSON object (an Anthropic stream event), got {type(value).__name__}; ignored",
                once=("not-object", type(value).__name__))
            return
        kind = value.get("type")
        if type(kind) is not str:
            kind = None if kind is None else repr(kind)  # never a dict key from the payload that is not a string
        event = self.event_name(frame)
        if event != kind:
            self._event_mismatch(event, kind, frame)
        if kind == "content_block_delta":
            # The common event, a text fragment of an open text block, is folded inline.
            delta = value.get("delta")
            if type(delta) is dict and delta.get("type") == "text_delta":
                index = value.get("index")
                block = self._blocks.get(index) if type(index) is int else None
                text = delta.get("text")
                if block is not None and block.kind == "text" and block.stop is None and type(text) is str:
                    if text:
                        self._content.add(text, frame)
                        block.pieces.append(text)
                    block.last_frame = frame
                    return
            self._delta(value, frame)
            return
        handler = self._handlers.get(kind)
        if handler is not None:
            handler(value, frame)
        elif kind == "ping":
            pass  # keep-alive, anywhere, also inside a block (A5, BerriAI/litellm#5063)
        elif type(kind) is str:
            # Anthropic's versioning policy: new event types may appear; ignore them.
            self.report.diagnostic(
                "unknown-event-type", frame,
                f"event type {kind!r} is not one streamfold knows; ignored, as Anthropic's versioning policy "
                "asks clients to do (every event of this type is skipped)",
                severity=Severity.INFO, once=("event", kind), type=kind)
        else:
            self.report.diagnostic(
                "unexpected-payload", frame,
                f"an object without a string `type` ({compact_json(value, 80)}): not an Anthropic event; ignored",
                once=("no-type",))

    def fold_fast(self, value: BlockDelta, frame: int, event: bytes | None) -> bool:
        """A `content_block_delta` decoded by `_shapes` (text, thinking or tool input), named by its
        `event:` line as it should be, for an open block of its kind: folded as `fold` folds it.
        Anything else (no or another event name, a block of another kind, a closed or unknown
        block, a server tool's input) is left to `fold`."""
        if event != b"event: content_block_delta":
            return False
        index, delta = value.index, value.delta
        block = self._blocks.get(index)
        if block is None or block.kind != delta.block or block.stop is not None:
            return False
        block.last_frame = frame
        piece = delta.piece
        if block.kind == "text":
            if piece:
                self._content.add(piece, frame)
                block.pieces.append(piece)
        elif block.kind == "thinking":
            if piece:
                self.merger.append((CHOICE, "reasoning"), piece, frame)
                block.pieces.append(piece)
        else:
            block.saw_input = True
            self.merger.append((CHOICE, "tool", index, "arguments"), piece, frame)
        return True

    def _event_mismatch(self, event: str | None, kind: Any, frame: int) -> None:
        if event is None:
            if self.transport == "sse":  # only SSE has `event:` lines to lose
                seen = self._no_event
                self._no_event = (frame, 1) if seen is None else (seen[0], seen[1] + 1)
            return
        self.report.diagnostic(
            "event-type-mismatch", frame,
            f"frame {frame} is named `event: {event}` but its data is of type {kind!r}: streamfold folds it by its "
            f"data type; the anthropic SDKs filter by the event name first (they skip `ping`, raise on `error` "
            f"and drop frames without a name), so a client may treat this frame differently",
            once=(event, kind), event=event, type=kind)

    # -- message-level events ----------------------------------------------------

    def _message_start(self, value: dict[str, Any], frame: int) -> None:
        message = value.get("message")
        if type(message) is not dict:
            self.report.diagnostic("unexpected-payload", frame,
                                   "a `message_start` without a `message` object; ignored")
            return
        merger = self.merger
        if self._started:
            self.report.diagnostic(
                "unexpected-payload", frame,
                f"a second `message_start` (frame {frame}); the first message's id, model and usage are kept",
                once=("message_start",))
            return
        self._started = True
        merger.set_once(("id",), message.get("id"), frame)
        merger.set_once(("model",), message.get("model"), frame)
        merger.set_once((CHOICE, "role"), message.get("role"), frame)
        merger.whole(("anthropic", "message"), message, frame)
        usage = message.get("usage")
        if type(usage) is dict:
            self._usage = {key: item for key, item in usage.items() if item is not None}
            merger.replace(("usage",), dict(self._usage), frame)

    def _message_delta(self, value: dict[str, Any], frame: int) -> None:
        merger = self.merger
        delta = value.get("delta")
        if type(delta) is dict:
            stop_reason = delta.get("stop_reason")
            if type(stop_reason) is str:
                held = merger.get((CHOICE, "finish_reason"))
                if held is not None and held != stop_reason:
                    self.report.diagnostic(
                        "finish-reason-conflict", frame,
                        f"stop_reason changed from {held!r} to {stop_reason!r}; the last value is kept",
                        once=(CHOICE,), choice=CHOICE, previous=held, value=stop_reason)
                merger.replace((CHOICE, "finish_reason"), stop_reason, frame)
            for name in ("stop_sequence", "stop_details", "container"):
                merger.replace(("anthropic", name), delta.get(name), frame)
        usage = value.get("usage")
        if type(usage) is dict:
            # A4: the counts are cumulative. REPLACE field by field for the fields
            # present; keep message_start's value for absent ones; never add.
            current = self._usage
            for key, item in usage.items():
                if item is not None:
                    current[key] = item
            merger.replace(("usage",), dict(current), frame)

    def _message_stop(self, value: dict[str, Any], frame: int) -> None:
        self.terminate(frame)

    def _error(self, value: dict[str, Any], frame: int) -> None:
        error = value.get("error")
        if type(error) is dict:
            kind, message = error.get("type"), error.get("message")
        else:
            kind, message = None, error
        message = str(message or kind or "(no message)")
        open_blocks = [block for block in self._blocks.values() if block.stop is None]
        where = ""
        if open_blocks:
            block = open_blocks[-1]
            where = f" while content block {block.index} ({block.kind}) was open"
        detail = f" ({kind})" if kind else ""
        self.report.error(
            "in-stream-error", frame,
            f"the server sent an error event inside the HTTP 200 stream{detail}{where}: {message}. The stream "
            "ends without `message_stop`; the anthropic SDK raises here and the partial reply is lost to it",
            raw=json.dumps(value, ensure_ascii=False))
        self.merger.replace((CHOICE, "error"), message, frame)

    # -- content blocks ----------------------------------------------------------

    def _block_start(self, value: dict[str, Any], frame: int) -> None:
        index = value.get("index")
        content = value.get("content_block")
        if type(index) is not int or type(content) is not dict:
            self.report.diagnostic(
                "unexpected-payload", frame,
                "a `content_block_start` without an integer `index` and a `content_block` object; ignored")
            return
        if not self._started:
            self._before_start(frame)
        kind = content.get("type")
        kind = kind if type(kind) is str else "?"
        held = self._blocks.get(index)
        if held is not None:
            self.report.diagnostic(
                "unexpected-payload", frame,
                f"a second `content_block_start` for content block {index} (first at frame {held.first_frame}); "
                "the new start replaces the block",
                once=("start", index), index=index)
        block = self._blocks[index] = _Block(index, kind, content, frame)
        merger = self.merger
        if kind == "text":
            text = content.get("text")
            if type(text) is str and text:
                self._content.add(text, frame)
                block.pieces.append(text)
            citations = content.get("citations")
            if type(citations) is list:
                block.citations = list(citations)
        elif kind == "thinking":
            thinking = content.get("thinking")
            if type(thinking) is str and thinking:
                merger.append((CHOICE, "reasoning"), thinking, frame)
                block.pieces.append(thinking)
            signature = content.get("signature")
            if type(signature) is str:
                block.signature = signature  # kept when no signature_delta comes (A6)
        elif kind == "tool_use":
            merger.set_once((CHOICE, "tool", index, "id"), content.get("id"), frame)
            merger.set_once((CHOICE, "tool", index, "name"), content.get("name"), frame)
            merger.buffer((CHOICE, "tool", index, "arguments"))
        elif kind not in _WHOLE_BLOCKS and kind not in _SERVER_TOOLS:
            self.report.diagnostic(
                "unknown-event-type", frame,
                f"content block type {kind!r} is not one streamfold knows; it is kept whole as it arrived "
                "(in `blocks` and the export) and its deltas, if any, are ignored",
                severity=Severity.INFO, once=("block", kind), type=kind)
        merger.replace((CHOICE, "block", index), {"type": _BLOCK_TYPES.get(kind, kind), "index": index}, frame)

    def _delta(self, value: dict[str, Any], frame: int) -> None:
        index = value.get("index")
        delta = value.get("delta")
        if type(index) is not int or type(delta) is not dict:
            self.report.diagnostic(
                "unexpected-payload", frame,
                "a `content_block_delta` without an integer `index` and a `delta` object; ignored",
                once=("delta-shape",))
            return
        kind = delta.get("type")
        block = self._blocks.get(index)
        if block is None:
            block = self._missing_start(index, kind, frame)
            if block is None:
                return
        elif block.stop is not None:
            self.report.diagnostic(
                "delta-after-block-stop", frame,
                f"a {kind} for content block {index} after its `content_block_stop` (frame {block.stop}); "
                "it is folded, but a client that finalises blocks at their stop loses it",
                once=("after-stop", index), index=index, stop_frame=block.stop)
        block.last_frame = frame
        merger = self.merger
        if kind == "text_delta":
            text = delta.get("text")
            if block.kind == "text" and type(text) is str:
                if text:
                    self._content.add(text, frame)
                    block.pieces.append(text)
                return
        elif kind == "input_json_delta":
            # A2: test `is not None`, not truthiness; "" is a valid (empty) fragment.
            partial = delta.get("partial_json")
            if partial is not None and type(partial) is str:
                if block.kind == "tool_use":
                    block.saw_input = True
                    merger.append((CHOICE, "tool", index, "arguments"), partial, frame)
                    return
                if block.kind in _SERVER_TOOLS:
                    block.saw_input = True
                    if partial:
                        block.json.append((partial, frame))
                    return
        elif kind == "thinking_delta":
            thinking = delta.get("thinking")
            if block.kind == "thinking" and type(thinking) is str:
                if thinking:
                    merger.append((CHOICE, "reasoning"), thinking, frame)
                    block.pieces.append(thinking)
                return
        elif kind == "signature_delta":
            signature = delta.get("signature")
            if block.kind == "thinking" and type(signature) is str:
                block.signature = signature  # REPLACE: the SDK assigns, it does not append (A6)
                return
        elif kind == "citations_delta":
            citation = delta.get("citation")
            if block.kind == "text" and citation is not None:
                if block.citations is None:
                    block.citations = []
                block.citations.append(citation)  # EXTEND
                return
        else:
            self.report.diagnostic(
                "unknown-event-type", frame,
                f"delta type {kind!r} (content block {index}) is not one streamfold knows; ignored, as "
                "Anthropic's versioning policy asks clients to do",
                severity=Severity.INFO, once=("delta", kind), type=kind)
            return
        self.report.diagnostic(
            "unexpected-payload", frame,
            f"a delta of type {kind!r} does not fit content block {index} (a {block.kind} block) or lacks its "
            "field; ignored, as the anthropic SDK does",
            once=("misfit", index, kind), index=index, delta_type=kind, block_type=block.kind)

    def _missing_start(self, index: int, kind: Any, frame: int) -> _Block | None:
        block_kind = _DELTA_BLOCK.get(kind) if type(kind) is str else None
        if block_kind is None:
            self.report.diagnostic(
                "content-block-missing-start", frame,
                f"a {kind!r} delta for content block {index}, which never started; ignored",
                once=("missing", index), index=index)
            return None
        if not self._started:
            self._before_start(frame)
        self.report.diagnostic(
            "content-block-missing-start", frame,
            f"a {kind} for content block {index}, which had no `content_block_start`: the anthropic SDK raises "
            f"(IndexError) here; streamfold folds it as a {block_kind} block"
            + (" with no tool id or name" if block_kind == "tool_use" else ""),
            once=("missing", index), index=index)
        start: dict[str, Any] = {"type": block_kind}
        block = self._blocks[index] = _Block(index, block_kind, start, frame)
        if block_kind == "tool_use":
            start.update(id="", name="", input={})
            self.merger.buffer((CHOICE, "tool", index, "arguments"))
        elif block_kind == "thinking":
            start.update(thinking="", signature="")
        else:
            start["text"] = ""
        self.merger.replace((CHOICE, "block", index), {"type": _BLOCK_TYPES[block_kind], "index": index}, frame)
        return block

    def _before_start(self, frame: int) -> None:
        self.report.diagnostic(
            "unexpected-payload", frame,
            "content arrived before any `message_start` (the capture may have lost its head): the anthropic SDK "
            "raises 'Unexpected event order' here; streamfold folds it, with no id or model",
            once=("before-start",))

    def _block_stop(self, value: dict[str, Any], frame: int) -> None:
        index = value.get("index")
        block = self._blocks.get(index) if type(index) is int else None
        if block is None:
            self.report.diagnostic(
                "content-block-missing-start", frame,
                f"a `content_block_stop` for content block {index!r}, which never started; ignored",
                once=("stop", index), index=index)
            return
        if block.stop is not None:
            return  # a repeated stop changes nothing
        block.stop = frame
        block.last_frame = frame
        self._close(block, frame)
        self.merger.replace((CHOICE, "block", block.index),
                            {"type": _BLOCK_TYPES.get(block.kind, block.kind), "index": block.index}, frame)

    def _close(self, block: _Block, frame: int) -> None:
        """PARSE-AT-END: the block's input is parsed once, when it closes (A3)."""
        if block.kind == "tool_use":
            path = (CHOICE, "tool", block.index, "arguments")
            if not block.saw_input:
                self._input_from_start(block, path)
            self.merger.parse(path, frame)
        elif block.kind in _SERVER_TOOLS:
            if not block.saw_input:
                start_input = block.start.get("input")
                if start_input:
                    block.json.append((_dumps(start_input), block.first_frame))
            block.parsed = parse_arguments("".join(piece for piece, _ in block.json), block.json)

    def _input_from_start(self, block: _Block, path: tuple[Any, ...]) -> None:
        # No input_json_delta at all: a non-empty `input` in the start block (as some
        # translating gateways send it) is the whole input, as the SDK snapshot keeps it.
        start_input = block.start.get("input")
        if start_input:
            self.merger.append(path, _dumps(start_input), block.first_frame)

    # -- end of stream -----------------------------------------------------------

    def finish(self, last_frame: int) -> None:
        for block in self._blocks.values():
            if block.stop is None:
                self._close(block, block.last_frame)
                self.merger.replace((CHOICE, "block", block.index),
                                    {"type": _BLOCK_TYPES.get(block.kind, block.kind), "index": block.index},
                                    block.last_frame)
            if block.kind == "tool_use":
                self._check_input(block, self.merger.parse((CHOICE, "tool", block.index, "arguments"), last_frame),
                                  self.merger.texts[(CHOICE, "tool", block.index, "arguments")].fragments())
            elif block.kind in _SERVER_TOOLS and block.parsed is not None:
                self._check_input(block, block.parsed, block.json)
        if self._no_event is not None:
            first, count = self._no_event
            every = not any(self.event_name(frame) is not None for frame in range(len(self.frames)))
            where = (f"none of its {count} JSON frames has an `event:` line" if every else
                     f"{count} data frame(s), starting with frame {first}, have no `event:` line")
            self.report.diagnostic(
                "event-type-missing", first,
                f"{where} (a proxy stripped them, A1): {_SDK_DROPS}, so a client built on them gets "
                + ("nothing at all ('request ended without sending any chunks')" if every else "a reply with holes")
                + "; streamfold dispatches on the data's `type` and folded them",
                frames=count)

    def _check_input(self, block: _Block, parsed: ParsedArguments, fragments: list[tuple[str, int]]) -> None:
        name = block.start.get("name")
        label = f"{'server tool' if block.kind in _SERVER_TOOLS else 'tool'} call in content block {block.index}" \
            + (f" ({name})" if name else "")
        joined_length = sum(len(piece) for piece, _ in fragments)
        if parsed.error is not None:
            position = parsed.position if parsed.position is not None else joined_length
            culprit = _frame_at(fragments, min(position, joined_length - 1)) if joined_length else block.last_frame
            hint = ""
            if self.merger.get((CHOICE, "finish_reason")) in ("max_tokens", "model_context_window_exceeded"):
                hint = (" The reply was cut by the token limit (stop_reason 'max_tokens'), so the input is "
                        "incomplete (B8); a client that substitutes {} runs the tool with empty input.")
            elif block.stop is None:
                hint = " The block never got its `content_block_stop`: the stream was cut inside it."
            self.report.diagnostic(
                "tool-args-invalid", culprit,
                f"{label}: the joined `partial_json` does not parse ({parsed.error}: character {position}); that "
                f"character came from frame {culprit}. The raw join is kept in `arguments`.{hint}",
                severity=Severity.ERROR, choice=CHOICE, tool_call=block.index, position=position)
        elif parsed.recovery is not None:
            self.report.diagnostic(
                "cumulative-resend", fragments[-1][1] if fragments else block.last_frame,
                f"{label}: the `partial_json` fragments repeat earlier ones ({parsed.recovery}, {parsed.copies} "
                "copies); a client that appends them gets invalid JSON; the recovered value is kept",
                choice=CHOICE, tool_call=block.index, recovery=parsed.recovery, copies=parsed.copies)

    # -- vocabulary -------------------------------------------------------------

    def normalise_usage(self, raw: Any) -> dict[str, Any] | None:
        if type(raw) is not dict:
            return None
        # U2: Anthropic's `input_tokens` EXCLUDES cache reads and cache writes
        # (unlike OpenAI's prompt_tokens); the prompt is the sum of the three.
        input_tokens = raw.get("input_tokens")
        output_tokens = raw.get("output_tokens")
        cache_read = raw.get("cache_read_input_tokens")
        cache_creation = raw.get("cache_creation_input_tokens")
        details = raw.get("output_tokens_details")
        total = None
        if type(input_tokens) is int and type(output_tokens) is int:
            total = input_tokens + output_tokens
            for extra in (cache_read, cache_creation):
                if type(extra) is int:
                    total += extra
        return {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "reasoning_tokens": details.get("thinking_tokens") if type(details) is dict else None,
            "cache_read_tokens": cache_read,
            "total_tokens": total,
        }

    def export(self, result: Result) -> dict[str, Any]:
        """The `anthropic.types.Message` a non-streaming request would have returned."""
        merger = self.merger
        start = merger.get(("anthropic", "message"))
        message: dict[str, Any] = dict(start) if type(start) is dict else {}
        choice = result.choice(CHOICE)
        message.update(
            id=result.id, type="message", role=(choice.role if choice else None) or "assistant",
            model=result.model, content=[self._export_block(block) for _, block in sorted(self._blocks.items())],
            stop_reason=choice.finish_reason_raw if choice else None,
            stop_sequence=merger.get(("anthropic", "stop_sequence")))
        for name in ("stop_details", "container"):
            if merger.get(("anthropic", name)) is not None:
                message[name] = merger.get(("anthropic", name))
        message["usage"] = None if result.usage is None else dict(result.usage.raw)
        return message

    def _export_block(self, block: _Block) -> dict[str, Any]:
        out = dict(block.start)
        kind = block.kind
        if kind == "text":
            out["text"] = "".join(block.pieces)
            if block.citations is not None:
                out["citations"] = block.citations
        elif kind == "thinking":
            out["thinking"] = "".join(block.pieces)
            out["signature"] = block.signature or ""
        elif kind == "tool_use":
            parsed = self.merger.parse((CHOICE, "tool", block.index, "arguments"), block.last_frame)
            # Unparseable input has no true non-streaming twin: keep the raw text, never a silent {}.
            out["input"] = parsed.value if parsed.error is None else self.merger.text(
                (CHOICE, "tool", block.index, "arguments"))
        elif kind in _SERVER_TOOLS:
            parsed = block.parsed or parse_arguments("".join(p for p, _ in block.json), block.json)
            out["input"] = parsed.value if parsed.error is None else "".join(p for p, _ in block.json)
        return out

    @classmethod
    def read_response(cls, value: Any) -> dict[str, Any] | None:
        """An Anthropic `Message`: text and thinking blocks, tool_use blocks with their input."""
        if not (isinstance(value, dict) and isinstance(value.get("content"), list)
                and (value.get("type") == "message" or value.get("role") == "assistant")):
            return None
        blocks = [block for block in value["content"] if isinstance(block, dict)]
        thinking = "".join(block.get("thinking", "") for block in blocks if block.get("type") == "thinking")
        return {
            "content": "".join(block.get("text", "") for block in blocks if block.get("type") == "text"),
            "reasoning": thinking or None,
            "tool_calls": [(block.get("name"), json.dumps(block.get("input"), separators=(",", ":"), ensure_ascii=False))
                           for block in blocks if block.get("type") == "tool_use"],
            "finish_reason": value.get("stop_reason"),
            "usage": value.get("usage"),
        }

    @classmethod
    def summarize(cls, value: Any) -> str:
        if type(value) is not dict:
            return compact_json(value)
        kind = value.get("type")
        if kind == "content_block_delta":
            delta = value.get("delta")
            index = value.get("index")
            if type(delta) is dict:
                delta_type = delta.get("type")
                for name, label in (("text", "text"), ("thinking", "thinking"), ("partial_json", "input"),
                                    ("signature", "signature")):
                    if name in delta:
                        return f"[{index}] {label} {compact_json(delta[name], 80)}"
                if delta_type == "citations_delta":
                    citation = delta.get("citation")
                    cited = citation.get("cited_text") if type(citation) is dict else None
                    return f"[{index}] citation {compact_json(cited, 80)}"
                return f"[{index}] {delta_type}"
            return f"[{index}] delta"
        if kind == "content_block_start":
            block = value.get("content_block")
            index = value.get("index")
            if type(block) is dict:
                label = " ".join(str(block[k]) for k in ("name", "id") if block.get(k))
                return f"[{index}] start {block.get('type')}" + (f" {label}" if label else "")
            return f"[{index}] start"
        if kind == "content_block_stop":
            return f"[{value.get('index')}] stop"
        if kind == "message_start":
            message = value.get("message")
            if type(message) is dict:
                return f"message_start {message.get('id')} {message.get('model')}"
            return "message_start"
        if kind == "message_delta":
            delta = value.get("delta")
            parts = ["message_delta"]
            if type(delta) is dict and delta.get("stop_reason"):
                parts.append(f"stop_reason {delta['stop_reason']}")
            usage = value.get("usage")
            if type(usage) is dict:
                parts.append("usage " + ", ".join(f"{k} {v}" for k, v in usage.items() if type(v) is int))
            return ", ".join(parts)
        if kind == "error":
            error = value.get("error")
            if type(error) is dict:
                return f"error {error.get('type')}: {compact_json(error.get('message'), 100)}"
            return f"error {compact_json(error, 100)}"
        if type(kind) is str:
            return kind
        return compact_json(value)


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _frame_at(fragments: list[tuple[str, int]], offset: int) -> int:
    seen = 0
    for piece, frame in fragments:
        seen += len(piece)
        if offset < seen:
            return frame
    return fragments[-1][1]

