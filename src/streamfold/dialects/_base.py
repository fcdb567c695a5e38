"""What every dialect is: a small object that maps one vendor's payloads to
merge operations on canonical paths (see `streamfold._merge`), plus the
vendor's own vocabulary (finish reasons, usage fields, terminal markers).

A dialect never owns merge rules or result shape; it only says where things
go. Vendor quirks live in the vendor's module and nowhere else.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from .._frames import EVENT, FrameRecord, FrameStore
from .._merge import Merger
from .._report import Report

try:
    from ._shapes import DECODERS as _SHAPE_DECODERS
except ImportError:  # no msgspec: no dialect has a fast way
    _SHAPE_DECODERS = {}

if TYPE_CHECKING:
    from .._result import Result

__all__ = ["Dialect", "compact_json", "dumps_arguments", "event_type", "top_level_keys"]

#: The normalised finish reasons of the contract.
STOP, LENGTH, TOOL_CALLS, CONTENT_FILTER, ERROR = "stop", "length", "tool_calls", "content_filter", "error"
#: Reference §5, last row: the reply paused or is incomplete (pause_turn, CONTINUATION, ...).
INCOMPLETE = "incomplete"
#: A raw value this dialect does not know (kept in finish_reason_raw).
OTHER = "other"


class Dialect:
    """Base class: subclasses set `name`, implement `claims` and `fold`.

    A dialect sees decoded payloads (`fold`), the `[DONE]` sentinel (`done`)
    and the end of the stream (`finish`); it may read a frame's SSE fields
    (its `event:` name, its AWS headers) from `self.frames[frame]`.
    """

    name: ClassVar[str] = "unknown"
    #: Raw finish reason -> normalised value.
    finish_reasons: ClassVar[dict[str, str]] = {}
    #: How the stream says it is over, for the missing-terminal message.
    terminal_hint: ClassVar[str] = "`data: [DONE]`"
    #: `[DONE]` ends this dialect's stream. When False (Anthropic, Responses: a
    #: gateway adds one after the real end) it is ignored wherever it comes.
    done_is_terminal: ClassVar[bool] = True

    def __init__(self, merger: Merger, report: Report, frames: Sequence[FrameRecord] = ()) -> None:
        self.merger = merger
        self.report = report
        #: Every frame so far, as records (see `streamfold._frames`).
        self.frames = frames
        #: Frame index of the terminal frame ([DONE], message_stop, ...), once
        #: seen. Frames after it are listed but not folded.
        self.terminal: int | None = None
        #: The reply ended normally without a terminal frame (Gemini has none:
        #: its finishReason says so). Frames after it are still folded.
        self.finished = False
        #: An in-stream error was seen: the reply is not complete.
        self.failed = False
        #: "sse", "ndjson", "json-array" or "aws-eventstream"; set by the Folder.
        self.transport: str | None = None
        #: A decoder of the dialect's hot payload shapes from UTF-8 bytes (raising
        #: ValueError for any other payload), or None. What it returns goes to
        #: `fold_fast`. The dialect sets it when its state allows the fast way.
        self.fast_decoder: Callable[[bytes], Any] | None = None

    def event_name(self, frame: int) -> str | None:
        """The SSE `event:` name of a frame (None when it had none)."""
        frames = self.frames
        if not 0 <= frame < len(frames):
            return None
        return frames.event(frame) if isinstance(frames, FrameStore) else frames[frame][EVENT]

    @property
    def ended(self) -> bool:
        """The stream said it was over (a terminal frame, or the dialect's own sign)."""
        return self.terminal is not None or self.finished

    @classmethod
    def claims(cls, value: Any) -> bool:
        """Does this decoded payload look like this dialect's?"""
        return False

    def fold(self, value: Any, frame: int) -> None:
        """Fold one decoded JSON payload into the merger."""

    def shape_decoder(self) -> Callable[[bytes], Any] | None:
        """The decoder of this dialect's hot payload shapes (`_shapes`), for `fast_decoder`;
        None when it has none or msgspec is not installed."""
        return _SHAPE_DECODERS.get(self.name)

    def fold_fast(self, value: Any, frame: int, event: bytes | None) -> bool:
        """Fold what `fast_decoder` returned, exactly as `fold` would fold the same payload
        decoded as plain JSON; or return False, having changed nothing, and the payload
        goes to `fold`. `event` is the frame's SSE `event:` line as it came (`b"event: x"`),
        or None when it had none."""
        return False

    def in_stream_error(self, frame: int, message: str, raw: str | None = None, *,
                        offset: int | None = None, line: int | None = None) -> None:
        """The server sent an error inside the 200 stream: report it and end the unfinished choices with it."""
        self.report.error("in-stream-error", frame, message, raw=raw, offset=offset, line=line)
        self.failed = True
        merger = self.merger
        choices = {path[0] for path in (*merger.texts, *merger.values) if type(path[0]) is int}
        unfinished = [index for index in choices if merger.get((index, "finish_reason")) is None] or [0]
        for index in unfinished:
            merger.replace((index, "error"), message, frame)

    def check_arguments(self, index: int, key: int, last_frame: int) -> None:
        """PARSE-AT-END findings for tool call `key` of choice `index`: `tool-args-invalid` or `cumulative-resend`."""
        merger = self.merger
        path = (index, "tool", key, "arguments")
        parsed = merger.parse(path, last_frame)
        buffer = merger.texts[path]
        name = merger.get((index, "tool", key, "name"))
        label = f"tool call {key} ({name})" if name else f"tool call {key}"
        if parsed.error is not None:
            position = parsed.position if parsed.position is not None else buffer.length
            culprit = buffer.frame_at(min(position, buffer.length - 1)) if buffer.length else last_frame
            raw_finish = merger.get((index, "finish_reason"))
            hint = ""
            if type(raw_finish) is str and self.finish_reasons.get(raw_finish) == LENGTH:
                hint = (f" The reply was cut by the token limit (finish reason {raw_finish!r}), so the arguments "
                        "are incomplete (B8).")
            self.report.diagnostic(
                "tool-args-invalid", culprit,
                f"{label} of choice {index}: the joined arguments do not parse ({parsed.error}: character "
                f"{position}); that character came from frame {culprit}. The raw join is kept in `arguments`.{hint}",
                severity="error", choice=index, tool_call=key, position=position)
        elif parsed.recovery is not None:
            what = {
                "identical-copies": f"the arguments were sent {parsed.copies} times over (a final chunk "
                                    "repeating the streamed arguments)",
                "cumulative": f"each of {parsed.copies} fragments repeats everything sent before it (cumulative resend)",
                "first-document": f"the join holds {parsed.copies} JSON document(s) followed by more text",
            }[parsed.recovery]
            self.report.diagnostic(
                "cumulative-resend", buffer.last_frame,
                f"{label} of choice {index}: {what}. A client that appends fragments gets invalid JSON; "
                f"`parsed` holds the recovered value ({parsed.recovery}), `arguments` the raw join",
                choice=index, tool_call=key, recovery=parsed.recovery, copies=parsed.copies)

    def done(self, frame: int) -> None:
        """The `[DONE]` sentinel arrived (only called when `done_is_terminal`)."""
        self.terminal = frame

    def finish(self, last_frame: int) -> None:
        """End of stream: close open blocks, parse what is parsed at the end."""

    def normalise_finish(self, raw: str, has_tool_calls: bool) -> str:
        value = self.finish_reasons.get(raw, OTHER)
        if value == STOP and has_tool_calls:
            # Reference §5 "derive it": a plain stop that produced tool calls.
            return TOOL_CALLS
        return value

    def normalise_usage(self, raw: Any) -> dict[str, Any] | None:
        return None

    def export(self, result: Result) -> dict[str, Any]:
        """The vendor-native non-streaming object this stream stands for."""
        raise NotImplementedError(f"export is not available for the {self.name} dialect yet")

    @classmethod
    def read_response(cls, value: Any) -> dict[str, Any] | None:
        """The reverse of `export`: the facts of this vendor's non-streaming response body, or
        None when `value` is not one: {"content", "reasoning", "tool_calls": [(name, arguments
        text)], "finish_reason" (raw), "usage" (the raw usage object)}. Used by `check`/`diff`."""
        return None

    @classmethod
    def summarize(cls, value: Any) -> str:
        """A one-line description of a payload, for the frames table."""
        return compact_json(value)


def event_type(value: Any) -> str | None:
    """The `type` of a typed-event payload (Anthropic, Responses, Cohere, LM Studio), if it is a string.

    `claims` runs on any payload during detection, so a `type` that is a list or
    an object must not reach a set or dict lookup.
    """
    if type(value) is not dict:
        return None
    kind = value.get("type")
    return kind if type(kind) is str else None


def dumps_arguments(value: Any) -> str:
    """Object-valued tool arguments/input as the raw `arguments` string (compact, UTF-8 kept)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def compact_json(value: Any, limit: int = 200) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def top_level_keys(value: Any) -> list[str]:
    return sorted(value) if isinstance(value, dict) else [type(value).__name__]

