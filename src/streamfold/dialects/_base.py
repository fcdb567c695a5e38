"""What every dialect is: a small object that maps one vendor's payloads to
merge operations on canonical paths (see `streamfold.merge`), plus the
vendor's own vocabulary (finish reasons, usage fields, terminal markers).

A dialect never owns merge rules or result shape; it only says where things
go. Vendor quirks live in the vendor's module and nowhere else.
"""

from __future__ import annotations

import enum
import importlib
import json
from collections.abc import Callable, Mapping, Sequence
from itertools import islice
from types import MappingProxyType
from typing import Any, ClassVar

from ..findings import Report, Severity
from ..framing import FrameIssue, FrameView
from ..framing._records import FrameStore
from ..merge import Merger, ParsedArguments, Path, ToolPath

__all__ = ["NO_HEADERS", "Dialect", "End", "arguments_text", "compact_json", "dumps_arguments",
           "event_type", "top_level_keys"]

#: The normalised finish reasons of the contract.
STOP, LENGTH, TOOL_CALLS, CONTENT_FILTER, ERROR = "stop", "length", "tool_calls", "content_filter", "error"
#: The reply paused or is incomplete (pause_turn, CONTINUATION, ...).
#: A capture without its request's headers (the Folder's `request_headers` default).
NO_HEADERS: Mapping[str, str] = MappingProxyType({})
INCOMPLETE = "incomplete"
#: A raw value this dialect does not know (kept in finish_reason_raw).
OTHER = "other"


def fast_decoder(module: str, name: str) -> Callable[[bytes], Any] | None:
    """A dialect's decoder of its hot payload shapes into msgspec Structs (`name` in its
    `module`), or None without msgspec: then the plain path folds every payload, with
    the same result (tests/folding/test_fast_paths.py)."""
    try:
        decoder: Callable[[bytes], Any] = getattr(importlib.import_module(module), name)
    except ImportError:
        return None
    return decoder


class End(enum.Enum):
    """How far a dialect's stream has come to its end. (Whether the server sent an error is
    the report's to say: `Dialect.failed`.)"""

    #: Nothing has said the reply is over.
    OPEN = "open"
    #: The reply said it is over without a terminal frame (Gemini: every candidate has a
    #: finishReason; Bedrock's messageStop; a finish reason in JSONL). Later frames still fold,
    #: and a later frame may open the reply again (a new Gemini candidate).
    FINISHED = "finished"
    #: The terminal frame came (`[DONE]`, `message_stop`, `response.completed`, ...): later
    #: frames are listed, not folded.
    TERMINATED = "terminated"


class Dialect:
    """Base class: subclasses set `name`, implement `claims` and `fold`.

    A dialect sees decoded payloads (`fold`), the `[DONE]` sentinel (`done`)
    and the end of the stream (`finish`); it may read a frame's event name,
    transport headers and raw bytes through `self.frames` (a `FrameView`).
    """

    name: ClassVar[str] = "unknown"
    #: Raw finish reason -> normalised value.
    finish_reasons: ClassVar[dict[str, str]] = {}
    #: How the stream says it is over, for the missing-terminal message.
    terminal_hint: ClassVar[str] = "`data: [DONE]`"
    #: `[DONE]` ends this dialect's stream. When False (Anthropic, Responses: a
    #: gateway adds one after the real end) it is ignored wherever it comes.
    done_is_terminal: ClassVar[bool] = True
    #: A stream of this dialect says when it is over (else no `missing-terminal`).
    expects_end: ClassVar[bool] = True
    #: The JSON keys whose string is reply text, first the likeliest: what `services.lost`
    #: reads out of a frame whose JSON broke off (`{"delta":{"content":"Hel` holds `Hel`).
    text_keys: ClassVar[tuple[str, ...]] = ("content", "text")

    @staticmethod
    def carried_error(issue: FrameIssue) -> tuple[str, str] | None:
        """The in-stream error a transport's frame issue stands for in this vendor's streams, as
        (message, raw), or None. Asked of every dialect, before any is chosen (llama.cpp's `error:`)."""
        return None

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        self.frames: FrameView = FrameStore() if frames is None else frames
        self.merger = Merger() if merger is None else merger
        self.report = Report() if report is None else report
        self.merger.rejected = self._not_text
        self.end = End.OPEN
        #: Frame index of the terminal frame, once the stream is TERMINATED.
        self.terminal: int | None = None
        #: "sse", "ndjson", "json-array" or "aws-eventstream"; set by the Folder.
        self.transport: str | None = None
        #: While the dialect's state allows the fast way: the decoder of its hot payload shapes
        #: from UTF-8 bytes (raising ValueError for any other payload), whose values go to
        #: `fold_fast_run` (by default, `fold_fast` each); else None (and always without msgspec).
        self.fast_decoder: Callable[[bytes], Any] | None = None
        #: The dialect whose envelopes carry this one's payloads (Bedrock's InvokeModel chunks), or
        #: None: a frame's event name is then the carrier's, not this dialect's.
        self.carrier: Dialect | None = None
        #: The lane the user asked to follow (`fold(..., lane=)`; set by the Folder before the first
        #: payload), or None: the dialect's default, which its docs name.
        self.lane: str | None = None
        #: The lanes seen so far: id -> (kind, the first frame that named it); and the one followed.
        self.lanes: dict[str, tuple[str, int]] = {}
        self.followed_lane: str | None = None
        #: The request's headers by lower-case name, when the capture has them (set by the Folder).
        self.request_headers: Mapping[str, str] = NO_HEADERS

    def saw_lane(self, lane: str, kind: str, frame: int) -> None:
        """A lane named at `frame` (only its first naming counts)."""
        if lane not in self.lanes:
            self.lanes[lane] = (kind, frame)

    def follows(self, lane: str) -> bool:
        """Is `lane` the one to fold? The one asked for, or else the first one seen (the default of the
        dialects whose lanes are peers: responses, turns, `stream_id`s)."""
        if self.followed_lane is None and (self.lane is None or lane == self.lane):
            self.followed_lane = lane
        return lane == self.followed_lane

    # -- the end state ----------------------------------------------------------------

    def terminate(self, frame: int) -> None:
        """The terminal frame: the stream is over; later frames are not folded."""
        self.end = End.TERMINATED
        self.terminal = frame

    def finish_reply(self, finished: bool = True) -> None:
        """The reply said it is over (or, with False, that it goes on after all)."""
        if self.end is not End.TERMINATED:
            self.end = End.FINISHED if finished else End.OPEN

    @property
    def ended(self) -> bool:
        """The stream said it was over (a terminal frame, or the dialect's own sign)."""
        return self.end is not End.OPEN

    @property
    def failed(self) -> bool:
        """The server sent an error inside the stream: the reply is not complete."""
        return self.report.server_failed

    def event_name(self, frame: int) -> str | None:
        """The SSE `event:` name of a frame (None when it had none, or when it names a carrier's envelope)."""
        frames = self.frames
        if not 0 <= frame < len(frames) or self.carrier is not None:
            return None
        return frames.event(frame)

    @property
    def reported(self) -> Dialect:
        """The dialect the Result names: this one, or the vendor's dialect this one found inside its
        envelopes (Claude through Bedrock's InvokeModelWithResponseStream is `anthropic`), which
        also normalises the finish reasons and usage and takes the `native` snapshot."""
        return self

    def carry(self, inner: Dialect) -> bool:
        """Fold the payloads inside this dialect's envelopes with `inner` (a dialect forced on a
        transport this one owns); False when this dialect carries no other."""
        return False

    # -- what a dialect implements ----------------------------------------------------

    @classmethod
    def claims(cls, value: object) -> bool:
        """Does this decoded payload look like this dialect's?"""
        return False

    def fold(self, value: object, frame: int) -> None:
        """Fold one decoded JSON payload into the merger."""

    def fold_fast(self, value: Any, frame: int, event: bytes | None) -> bool:
        """Fold what `fast_decoder` returned, exactly as `fold` would fold the same payload
        decoded as plain JSON; or return False, having changed nothing, and the payload
        goes to `fold`. `event` is the frame's SSE `event:` line as it came (`b"event: x"`),
        or None when it had none."""
        return False

    def fold_fast_run(self, pieces: Sequence[bytes], position: int, start: int, frame: int,
                      events: Sequence[bytes | None] | None) -> int:
        """The fast way over a run: fold `pieces[position:]` (each payload from byte `start` on; the
        first is frame `frame`; `events`, each piece's `event:` line, or None when the run has none)
        with `fast_decoder` and `fold_fast`, in order, until one refuses; return how many were
        folded. The payload it stopped at, unchanged, goes to `fold`. A dialect whose hot frames are
        many and small may fold its runs in a loop of its own (the same result, fewer calls)."""
        decode, fold_fast, index = self.fast_decoder, self.fold_fast, frame
        assert decode is not None
        try:
            if events is None:
                for piece in islice(pieces, position, None):
                    if not fold_fast(decode(piece[start:]), index, None):
                        break
                    index += 1
            else:
                for piece, event in zip(islice(pieces, position, None), islice(events, position, None)):
                    if not fold_fast(decode(piece[start:]), index, event):
                        break
                    index += 1
        except (ValueError, RecursionError):
            pass
        return index - frame

    def in_stream_error(self, frame: int, message: str, raw: str | None = None, *,
                        offset: int | None = None, line: int | None = None) -> None:
        """The server sent an error inside the 200 stream: report it and end the unfinished choices with it."""
        self.report.error("in-stream-error", frame, message, raw=raw, offset=offset, line=line)
        merger = self.merger
        choices = {path[0] for path in (*merger.texts, *merger.values) if type(path[0]) is int}
        unfinished = [index for index in choices if merger.get((index, "finish_reason")) is None] or [0]
        for index in unfinished:
            merger.replace((index, "error"), message, frame)

    def _not_text(self, path: Path, value: object, frame: int) -> None:
        """The merger refused a value that is not a string where the Result holds text."""
        field = str(path[-1]).replace("_", " ")
        if len(path) == 4:
            where = f"the {field} of tool call {path[2]} of choice {path[0]}"
        else:
            where = f"the {field} of choice {path[0]}" if type(path[0]) is int else f"the {field}"
        self.wrong_type(value, frame, where, "a string")

    def wrong_type(self, value: object, frame: int | None, what: str, expected: str,
                   consequence: str = "ignored") -> None:
        """Report a payload value of the wrong JSON type (`what` names it, `expected` is what
        belongs there) as `unexpected-payload` at its frame."""
        self.report.diagnostic(
            "unexpected-payload", frame,
            f"frame {frame} sends {what} as {_a_json_type(value)}, not {expected}; {consequence}"
            if frame is not None else f"{what} is {_a_json_type(value)}, not {expected}; {consequence}",
            expected=expected)

    def string(self, value: object, frame: int, what: str) -> str | None:
        """`value` if it is a string, None if it is None; anything else is reported and None."""
        if value is None or type(value) is str:
            return value
        self.wrong_type(value, frame, what, "a string")
        return None

    def check_arguments(self, index: int, key: int, last_frame: int) -> None:
        """PARSE-AT-END findings for tool call `key` of choice `index` (arguments in the merger)."""
        merger = self.merger
        path: ToolPath = (index, "tool", key, "arguments")
        parsed = merger.parse(path, last_frame)
        if parsed.clean:
            return  # the common case builds no fragments
        name = merger.get((index, "tool", key, "name"))
        raw_finish = merger.get((index, "finish_reason"))
        cut = raw_finish if type(raw_finish) is str and self.finish_reasons.get(raw_finish) == LENGTH else None
        self.report_arguments(f"tool call {key} ({name}) of choice {index}" if name else
                              f"tool call {key} of choice {index}",
                              parsed, merger.texts[path].fragments(), last_frame, choice=index, tool_call=key,
                              cut_by=cut)

    def report_arguments(self, label: str, parsed: ParsedArguments, fragments: Sequence[tuple[str, int]],
                         last_frame: int, *, choice: int, tool_call: int, cut_by: str | None = None,
                         unclosed: bool = False) -> None:
        """The one place that reports tool-argument findings, for every dialect:
        `tool-args-invalid` (nothing parsed) or `cumulative-resend` (a value was recovered).
        `cut_by`: the raw finish reason when the token limit cut the reply; `unclosed`: the
        call's block never closed."""
        if parsed.error is not None:
            joined = sum(len(piece) for piece, _ in fragments)
            position = parsed.position if parsed.position is not None else joined
            culprit = _frame_at(fragments, min(position, joined - 1)) if joined else last_frame
            hint = ""
            if cut_by is not None:
                hint = (f" The reply was cut by the token limit (finish reason {cut_by!r}), so the arguments are "
                        "incomplete; a client that substitutes {} runs the tool with empty input.")
            elif unclosed:
                hint = " The call's block never closed: the stream was cut inside it."
            self.report.diagnostic(
                "tool-args-invalid", culprit,
                f"{label}: the joined arguments do not parse ({parsed.error}: character {position}); that "
                f"character came from frame {culprit}. The raw join is kept in `arguments`.{hint}",
                severity=Severity.ERROR, choice=choice, tool_call=tool_call, position=position)
        elif parsed.recovery is not None:
            what = {
                "identical-copies": f"the arguments were sent {parsed.copies} times over (a final chunk "
                                    "repeating the streamed arguments)",
                "cumulative": f"each of {parsed.copies} fragments repeats everything sent before it "
                              "(cumulative resend)",
                "first-document": f"the join holds {parsed.copies} JSON document(s) followed by more text",
            }[parsed.recovery]
            self.report.diagnostic(
                "cumulative-resend", fragments[-1][1] if fragments else last_frame,
                f"{label}: {what}. A client that appends fragments gets invalid JSON; "
                f"`parsed` holds the recovered value ({parsed.recovery}), `arguments` the raw join",
                choice=choice, tool_call=tool_call, recovery=parsed.recovery, copies=parsed.copies)

    def done(self, frame: int) -> None:
        """The `[DONE]` sentinel arrived (only called when `done_is_terminal`)."""
        self.terminate(frame)

    def finish(self, last_frame: int) -> None:
        """End of stream: close open blocks, parse what is parsed at the end."""

    def native(self) -> dict[str, Any] | None:
        """At the end of the stream: what `export` needs beyond the Result (the vendor's own
        envelope, blocks and the like), as JSON values. It travels in `Result.native`, so a
        Result read back from JSON exports the same object."""
        return None

    def normalise_finish(self, raw: str, has_tool_calls: bool) -> str:
        value = self.finish_reasons.get(raw, OTHER)
        if value == STOP and has_tool_calls:
            # A plain stop that produced tool calls is reported as tool_calls.
            return TOOL_CALLS
        return value

    def normalise_usage(self, raw: object) -> dict[str, Any] | None:
        return None


def _frame_at(fragments: Sequence[tuple[str, int]], offset: int) -> int:
    """The frame of the fragment that holds character `offset` of the join."""
    seen = 0
    for piece, frame in fragments:
        seen += len(piece)
        if offset < seen:
            return frame
    return fragments[-1][1]


def event_type(value: object) -> str | None:
    """The `type` of a typed-event payload (Anthropic, Responses, Cohere, LM Studio), if it is a string.

    `claims` runs on any payload during detection, so a `type` that is a list or
    an object must not reach a set or dict lookup.
    """
    if type(value) is not dict:
        return None
    kind = value.get("type")
    return kind if type(kind) is str else None


def dumps_arguments(value: object) -> str:
    """Object-valued tool arguments/input as the raw `arguments` string (compact, UTF-8 kept)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def arguments_text(value: object) -> str:
    """Tool arguments/input of a non-streaming reply as the `arguments` text: an object serialised, a
    string as it is (an export keeps arguments that do not parse as their text, where an object belongs)."""
    return value if isinstance(value, str) else dumps_arguments(value)


# One encoder for every summary (json.dumps makes one per call when given options: a third of a summary's time).
_compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def compact_json(value: object, limit: int = 200) -> str:
    text = _compact(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def top_level_keys(value: object) -> list[str]:
    return sorted(value) if isinstance(value, dict) else [type(value).__name__]


def _a_json_type(value: object) -> str:
    """`value`'s JSON type with its article, for messages: "a number", "an object"..."""
    if value is True or value is False:
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    names: dict[type, str] = {dict: "an object", list: "an array", str: "a string"}
    return names.get(type(value), f"a {type(value).__name__}")
