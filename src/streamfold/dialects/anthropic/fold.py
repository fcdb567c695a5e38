"""Anthropic Messages (`POST /v1/messages`, `stream: true`), reference §4.3.

Traps A1-A6, U1/U2. The stream is a sequence of typed events:
`message_start`, then per content block `content_block_start`, deltas and
`content_block_stop` (folded by `ContentBlocks`, in `blocks`), then
`message_delta` and `message_stop`. Everything is dispatched on the JSON
`type`, never on the SSE `event:` name, because proxies strip the `event:`
lines (A1); a missing or different `event:` name is only reported.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from ...findings import Report, Severity
from ...framing import FrameView
from ...merge import Merger
from .._base import CONTENT_FILTER, INCOMPLETE, LENGTH, STOP, TOOL_CALLS, compact_json, event_type, fast_decoder
from .blocks import CHOICE, Block, ContentBlocks
from .native import snapshot

if TYPE_CHECKING:
    from .fast import BlockDelta

_FAST_SHAPES = fast_decoder(f"{__package__}.fast", "decode_block_delta")

__all__ = ["Anthropic", "messages_usage"]

EVENT_TYPES = frozenset({
    "message_start", "content_block_start", "content_block_delta", "content_block_stop",
    "message_delta", "message_stop", "ping"})
_SDK_DROPS = "the anthropic SDKs skip every frame without an `event:` name"


class Anthropic(ContentBlocks):
    name = "anthropic"
    terminal_hint = "`message_stop`"
    # Some Anthropic-compatible gateways add `data: [DONE]` after `message_stop`: not the end.
    done_is_terminal = False
    finish_reasons: ClassVar[dict[str, str]] = {
        "end_turn": STOP,
        "stop_sequence": STOP,
        "max_tokens": LENGTH,
        "model_context_window_exceeded": LENGTH,
        "tool_use": TOOL_CALLS,
        "refusal": CONTENT_FILTER,
        "pause_turn": INCOMPLETE,
        # Beta: the server compacted the context and paused (`pause_after_compaction`); the client continues.
        "compaction": INCOMPLETE,
    }

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self.fast_decoder = _FAST_SHAPES
        self._usage: dict[str, Any] = {}
        #: The `message` of the first `message_start`, as sent (None before it, or if not an object).
        self._message: dict[str, Any] | None = None
        #: `stop_sequence`, `stop_details`, `container` of `message_delta`'s delta, `context_management` and
        #: `input_transformations` of the event: the last non-null value of each.
        self._stop: dict[str, Any] = {}
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
    def claims(cls, value: object) -> bool:
        kind = event_type(value)
        if kind is None or kind == "ping":
            return False  # a keep-alive says nothing of whose stream it is: Text Completions send it too
        if kind in EVENT_TYPES:
            return True
        # An error event: {"type": "error", "error": {"type": "overloaded_error", "message": ...}}.
        error = value.get("error") if isinstance(value, dict) else None
        return kind == "error" and type(error) is dict and "type" in error

    # -- the fold loop (once per frame: keep it lean) -------------------------

    def fold(self, value: object, frame: int) -> None:
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

    def fold_fast_run(self, pieces: Sequence[bytes], position: int, start: int, frame: int,
                      events: Sequence[bytes | None] | None) -> int:
        """`content_block_delta` events decoded by `fast` (text, thinking or tool input), named by
        their `event:` line as they should be, each for an open block of its kind: folded as `fold`
        folds them, in one loop, the text of the run in one `extend`. It stops at anything else (no
        or another event name, a block of another kind, a closed or unknown block, a server tool's
        input), which is `fold`'s."""
        if events is None:  # a run without `event:` lines: `fold` tells what it is missing
            return 0
        decode, content, blocks, at = self.fast_decoder, self._content, self._blocks, position
        assert decode is not None
        first = frame - position
        texts: list[str] = []  # the text of the run so far, and its frames, for one `extend`
        frames: list[int] = []
        # The block the last delta went to, looked up and checked once while its deltas come, and that delta's
        # frame (its `last_frame` when another block's delta comes, or the loop ends).
        hot: Block | None = None
        hot_index = last = -1
        try:
            for at in range(position, len(pieces)):
                if events[at] != b"event: content_block_delta":
                    return at - position
                value: BlockDelta = decode(pieces[at][start:])
                index, delta = value.index, value.delta
                if index == hot_index and hot is not None:
                    block = hot
                    if block.kind != delta.block:
                        return at - position
                else:
                    found = blocks.get(index)
                    if found is None or found.kind != delta.block or found.stop is not None:
                        return at - position
                    if hot is not None:
                        hot.last_frame = last
                    block = hot = found
                    hot_index = index
                last = first + at
                piece = delta.piece
                if block.kind == "text":
                    if piece:
                        texts.append(piece)
                        frames.append(last)
                        block.pieces.append(piece)
                    continue
                content.extend(texts, frames)  # first, so the journal keeps the frames' order
                texts, frames = [], []
                if block.kind == "thinking":
                    if piece:
                        self.merger.append((CHOICE, "reasoning"), piece, last)
                        block.pieces.append(piece)
                else:
                    block.saw_input = True
                    self.merger.append((CHOICE, "tool", index, "arguments"), piece, last)
        except (ValueError, RecursionError):
            return at - position
        finally:
            content.extend(texts, frames)
            if hot is not None:
                hot.last_frame = last
        return len(pieces) - position

    def _event_mismatch(self, event: str | None, kind: object, frame: int) -> None:
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
        self._message = message
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
                held_value = delta.get(name)
                if held_value is not None:
                    self._stop[name] = held_value  # REPLACE: null never clears
        # Beta fields of the event itself (not of its delta): the SDK REPLACEs each when it is not null
        # (anthropic 2.15 lib/streaming/_beta_messages.py, message_delta).
        for name in ("context_management", "input_transformations"):
            held_value = value.get(name)
            if held_value is not None:
                self._stop[name] = held_value
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

    # -- end of stream -----------------------------------------------------------

    def finish(self, last_frame: int) -> None:
        self._finish_blocks(last_frame)
        if self._no_event is not None:
            first, count = self._no_event
            every = not any(self.event_name(frame) is not None for frame in range(len(self.frames)))
            where = (f"none of its {count} JSON frames has an `event:` line" if every else
                     f"{count} data frame(s), starting with frame {first}, have no `event:` line")
            self.report.diagnostic(
                "event-type-missing", first,
                f"{where} (a proxy stripped them): {_SDK_DROPS}, so a client built on them gets "
                + ("nothing at all ('request ended without sending any chunks')" if every else "a reply with holes")
                + "; streamfold dispatches on the data's `type` and folded them",
                frames=count)

    # -- vocabulary -------------------------------------------------------------

    def normalise_usage(self, raw: object) -> dict[str, Any] | None:
        return messages_usage(raw)

    def native(self) -> dict[str, Any] | None:
        return snapshot(self._message, self._stop, self._blocks, self.merger)


def messages_usage(raw: object) -> dict[str, Any] | None:
    """The Messages API's usage object (or one of its shape: Managed Agents' per-request `model_usage`), normalised."""
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
