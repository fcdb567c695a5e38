"""Anthropic content blocks: `content_block_start`, the deltas and `content_block_stop`
(reference §4.3, traps A2, A3, A6).

Each content block is an explicit block `(0, "block", index)` spanning its
start and stop frames, so `blocks` lists the real content blocks in order.
Text blocks APPEND to content, thinking blocks to reasoning, `tool_use`
blocks are the tool calls (key = block index), their `partial_json`
fragments APPENDed and parsed at `content_block_stop` (A2, A3). Server tool
calls (`server_tool_use`, beta `mcp_tool_use`: run by Anthropic, not by the
client; their input is streamed and parsed like a tool call's) and their
result blocks are kept as blocks with their vendor content for the export,
not as tool calls. A beta `compaction` block (the summary that replaces the
conversation's older turns) is its own block too, never reply text: its
`compaction_delta` APPENDs `content` and REPLACEs `encrypted_content` (A7).
Every block type in the anthropic SDK's `ContentBlock` and beta
`BetaContentBlock` unions is known; any other one is kept whole and named.
"""

from __future__ import annotations

from typing import Any

from ..._toolargs import ParsedArguments, parse_arguments
from ...findings import Report, Severity
from ...framing import FrameView
from ...merge import Merger, TextBuffer, ToolPath
from .._base import Dialect, dumps_arguments

__all__ = ["CHOICE", "SERVER_TOOLS", "TOOL_USE_START", "Block", "ContentBlocks"]

CHOICE = 0
#: Vendor block type -> the block type of the result's `blocks`.
_BLOCK_TYPES = {
    "text": "text",
    "thinking": "reasoning",
    "redacted_thinking": "redacted_reasoning",
    "tool_use": "tool_call",
    "server_tool_use": "server_tool_use",
}
#: Blocks that arrive whole in `content_block_start` (reference §4.3 table).
#: The beta ones from anthropic 2.15 `types/beta/beta_content_block.py`: `advisor_tool_result`,
#: `mcp_tool_result`, `mcp_tool_listing` (the MCP server's tools, sent back unchanged), `fallback` (where a
#: fallback model takes over; "treated like a server-tool content block for streaming ... carries no deltas").
_WHOLE_BLOCKS = frozenset({
    "redacted_thinking", "web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result",
    "bash_code_execution_tool_result", "text_editor_code_execution_tool_result", "tool_search_tool_result",
    "container_upload", "mcp_tool_result", "mcp_tool_listing", "advisor_tool_result", "fallback"})
#: Tool calls Anthropic runs itself (not the client's): blocks with a streamed input, not tool calls.
SERVER_TOOLS = frozenset({"server_tool_use", "mcp_tool_use"})
_KINDS = {kind: kind for kind in (*_BLOCK_TYPES, *_WHOLE_BLOCKS, *SERVER_TOOLS, "compaction")}
#: The vendor block type -> the block's value in the merger, {"type": ...}, shared by the blocks of a type
#: (its index is the block path's key, which the result builder reads when the value has none).
_BLOCK_VALUES: dict[str, dict[str, Any]] = {}


def _block_value(kind: str) -> dict[str, Any]:
    value = _BLOCK_VALUES.get(kind)
    if value is None:
        value = {"type": _BLOCK_TYPES.get(kind, kind)}
        if len(_BLOCK_VALUES) < 64:  # the types Anthropic sends, not every name a hostile stream makes up
            _BLOCK_VALUES[kind] = value
    return value


#: The start a block whose `content_block_start` was lost stands in with, by its type: shared, as
#: nothing changes a start but a compaction block's deltas (and a compaction block gets its own).
_MISSING_STARTS: dict[str, dict[str, Any]] = {
    "tool_use": {"type": "tool_use", "id": "", "name": "", "input": {}},
    "thinking": {"type": "thinking", "thinking": "", "signature": ""},
    "text": {"type": "text", "text": ""},
}
#: What a `tool_use` block holds for its start when the start is the usual `{type, id, name, input: {}}` and
#: the merger holds its id and name: one start for all of them, which the snapshot fills from the merger,
#: not the decoded object of each (~300 bytes a block: a stream of block starts made the fold 22x its size).
TOOL_USE_START: dict[str, Any] = {"type": "tool_use", "id": "", "name": "", "input": {}}
_TOOL_USE_KEYS = ("type", "id", "name", "input")
#: The delta type each block type takes (for a block whose start was lost).
_DELTA_BLOCK = {"text_delta": "text", "citations_delta": "text", "thinking_delta": "thinking",
                "signature_delta": "thinking", "input_json_delta": "tool_use", "compaction_delta": "compaction"}


class Block:
    """One content block: what the merger does not hold but the export needs."""

    __slots__ = ("citations", "compactions", "first_frame", "index", "json", "kind", "last_frame", "offset",
                 "parsed", "pieces", "saw_input", "signature", "start", "stop")

    def __init__(self, index: int, kind: str, start: dict[str, Any], frame: int, offset: int) -> None:
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
        #: The length of the choice's content (text block) or reasoning (thinking block) when the
        #: block started: where its text is, unless another block's text came in between.
        self.offset = offset
        #: Server tool input fragments with their frames (PARSE-AT-END); None for other blocks.
        self.json: list[tuple[str, int]] | None = [] if kind in SERVER_TOOLS else None
        self.saw_input = False
        self.citations: list[Any] | None = None
        self.signature: str | None = None
        self.parsed: ParsedArguments | None = None
        #: `compaction_delta` events that carried `content` (a compaction block).
        self.compactions = 0


class ContentBlocks(Dialect):
    """The content-block events of the Anthropic dialect (the `Anthropic` class adds the
    message-level events and the fold loop)."""

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self._blocks: dict[int, Block] = {}
        self._content: TextBuffer = self.merger.buffer((CHOICE, "content"))
        #: A `message_start` came.
        self._started = False

    def _new_block(self, index: int, kind: str, start: dict[str, Any], frame: int) -> Block:
        """Block `index` (a new one replaces the one held), with where its text will start."""
        offset = 0
        if kind == "text":
            offset = self._content.length
        elif kind == "thinking":
            reasoning = self.merger.texts.get((CHOICE, "reasoning"))
            offset = 0 if reasoning is None else reasoning.length
        block = self._blocks[index] = Block(index, kind, start, frame, offset)
        return block

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
        kind = _KINDS.get(kind, kind) if type(kind) is str else "?"  # a known type: one string for every block
        held = self._blocks.get(index)
        if held is not None:
            self.report.diagnostic(
                "unexpected-payload", frame,
                f"a second `content_block_start` for content block {index} (first at frame {held.first_frame}); "
                "the new start replaces the block",
                once=("start", index), index=index)
        block = self._new_block(index, kind, content, frame)
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
            call_id, name, start_input = content.get("id"), content.get("name"), content.get("input")
            held_id = merger.set_once((CHOICE, "tool", index, "id"), call_id, frame)
            held_name = merger.set_once((CHOICE, "tool", index, "name"), name, frame)
            merger.buffer((CHOICE, "tool", index, "arguments"))
            if held_id is call_id and held_name is name and type(start_input) is dict and not start_input \
                    and tuple(content) == _TOOL_USE_KEYS:
                block.start = TOOL_USE_START
        elif kind == "compaction":
            block.start = dict(content)  # its content and encrypted_content change with the deltas
        elif kind == "fallback":
            # The SDK relabels its snapshot with the model that serves the rest of the reply, as the
            # non-streaming message names it (anthropic 2.15 lib/streaming/_beta_messages.py accumulate_event).
            target = content.get("to")
            model = target.get("model") if type(target) is dict else None
            if type(model) is str and model:
                merger.replace(("model",), model, frame)
        elif kind not in _WHOLE_BLOCKS and kind not in SERVER_TOOLS:
            self.report.diagnostic(
                "unknown-event-type", frame,
                f"content block type {kind!r} is not one streamfold knows; it is kept whole as it arrived "
                "(in `blocks` and the export) and its deltas, if any, are ignored",
                severity=Severity.INFO, once=("block", kind), type=kind)
        merger.replace((CHOICE, "block", index), _block_value(kind), frame)

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
                if block.json is not None:  # a server tool's block
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
        elif kind == "compaction_delta":
            if block.kind == "compaction":
                self._compaction(block, delta, frame)
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

    def _compaction(self, block: Block, delta: dict[str, Any], frame: int) -> None:
        """A `compaction_delta` (beta `BetaCompactionContentBlockDelta`: `content`, `encrypted_content`, both
        nullable). Anthropic sends the whole summary in one delta; `content` APPENDs, so a summary split over
        several deltas is whole, and a null adds nothing (null content means "compaction failed", which the
        block's start already says). `encrypted_content` REPLACEs, a null keeps the value held: it is opaque
        state the next request must send back verbatim (anthropics/anthropic-sdk-python#1821 fixed the SDK
        dropping it)."""
        start = block.start
        text = delta.get("content")
        if type(text) is str:
            held = start.get("content")
            start["content"] = (held if type(held) is str else "") + text
            block.compactions += 1
            if block.compactions == 2:
                self.report.diagnostic(
                    "compaction-split", frame,
                    f"compaction block {block.index} gets its summary in more than one `compaction_delta`; "
                    "streamfold appends them. The anthropic Python SDK (2.15, beta accumulate_event) assigns "
                    "each delta's content, so it keeps only the last piece",
                    severity=Severity.INFO, once=("compaction", block.index), index=block.index)
        encrypted = delta.get("encrypted_content")
        if type(encrypted) is str:
            start["encrypted_content"] = encrypted

    def _missing_start(self, index: int, kind: object, frame: int) -> Block | None:
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
        start = _MISSING_STARTS.get(block_kind) or {"type": block_kind, "content": None}
        block = self._new_block(index, block_kind, start, frame)
        if block_kind == "tool_use":
            self.merger.buffer((CHOICE, "tool", index, "arguments"))
        self.merger.replace((CHOICE, "block", index), _block_value(block_kind), frame)
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
        self.merger.replace((CHOICE, "block", block.index), _block_value(block.kind), frame)

    def _close(self, block: Block, frame: int) -> None:
        """PARSE-AT-END: the block's input is parsed once, when it closes (A3)."""
        if block.kind == "tool_use":
            path: ToolPath = (CHOICE, "tool", block.index, "arguments")
            if not block.saw_input:
                self._input_from_start(block, path)
            self.merger.parse(path, frame)
        elif block.json is not None:  # a server tool's block
            if not block.saw_input:
                start_input = block.start.get("input")
                if start_input:
                    block.json.append((dumps_arguments(start_input), block.first_frame))
            block.parsed = parse_arguments("".join(piece for piece, _ in block.json), block.json)

    def _input_from_start(self, block: Block, path: tuple[Any, ...]) -> None:
        # No input_json_delta at all: a non-empty `input` in the start block (as some
        # translating gateways send it) is the whole input, as the SDK snapshot keeps it.
        start_input = block.start.get("input")
        if start_input:
            self.merger.append(path, dumps_arguments(start_input), block.first_frame)

    def _finish_blocks(self, last_frame: int) -> None:
        """End of stream: close the blocks still open, then report on every tool input."""
        merger = self.merger
        raw_finish = merger.get((CHOICE, "finish_reason"))
        cut_by = raw_finish if raw_finish in ("max_tokens", "model_context_window_exceeded") else None
        for block in self._blocks.values():
            if block.stop is None:
                self._close(block, block.last_frame)
                merger.replace((CHOICE, "block", block.index), _block_value(block.kind), block.last_frame)
            if block.kind == "tool_use":
                path: ToolPath = (CHOICE, "tool", block.index, "arguments")
                parsed = merger.parse(path, last_frame)
                if parsed.clean:
                    continue  # the common case builds no fragments
                fragments = merger.texts[path].fragments()
            elif block.json is not None and block.parsed is not None:
                parsed, fragments = block.parsed, block.json
            else:
                continue
            name = merger.get((CHOICE, "tool", block.index, "name")) if block.start is TOOL_USE_START \
                else block.start.get("name")
            label = f"{'server tool' if block.kind in SERVER_TOOLS else 'tool'} call in content block {block.index}" \
                + (f" ({name})" if name else "")
            self.report_arguments(label, parsed, fragments, block.last_frame, choice=CHOICE, tool_call=block.index,
                                  cut_by=cut_by, unclosed=block.stop is None)
