"""Google ADK's `POST /run_sse` (`adk api_server`, `streaming: true`): each `data:` line is one ADK `Event`
(google-adk `events/event.py`, camelCase as served: `author`, `branch`, `invocationId`, `id`, `partial`,
`content.parts`, `actions`, `errorCode`/`errorMessage`, `finishReason`, `usageMetadata`, ...).

The trap: a model call streams `partial: true` events, then ONE aggregate (`partial: false`, or no `partial`
at all in ADK's older aggregation) with the same event `id` that REPEATS their text, thoughts and function
calls; a client that joins every event's text shows it twice. Partial text is folded as it comes, and the
aggregate is checked against it: equal, nothing is added; longer (the partials were cut), the rest is added;
otherwise `adk-aggregate-differs` says where, and the aggregate's text replaces the partials' (it is what ADK
keeps in the session). Function calls fold from non-partial events only (a fragment may hold unfinished
arguments, and ADK runs no tool from one), whole, once per call id.

The reply mirrors ADK's `Event.is_final_response()`: the text of a final response is `content`; text the
agent said before a function call in the same run (a tool loop's "Let me look that up.") is not the answer:
it moves to `reasoning`, with the thoughts (`thought: true` parts). Function responses are the calls'
results (`native`). An `errorCode` is an in-stream error, unless it only repeats the finish reason
(ADK sets `errorCode: MAX_TOKENS` beside `finishReason: MAX_TOKENS`): that is a finish. The server's
own error line (`{"error": "...", "error_details": {...}}`, the run raised) is an in-stream error.

Lanes: each `author` (an agent) is a lane. The default lane is the agent that holds the conversation: the
first agent to speak, then each agent it hands off to (`actions.transferToAgent`), as ADK's runner
answers the user from the transferred agent. `self.lane` names another agent to fold that one alone;
the lanes not followed are listed (`adk-other-lanes`).
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any, ClassVar

from ..._text import common_prefix_length
from ...findings import Report, Severity
from ...framing import FrameView
from ...merge import ChoicePath, Merger, TextBuffer
from .._base import Dialect, compact_json, dumps_arguments
from ..gemini import Gemini
from ..gemini.native import usage as gemini_usage
from .fields import PART
from .native import Lanes, joined, parts_of

__all__ = ["ADK", "claims_event", "is_final_response"]

_CHOICE = 0
#: The parts kept whole in `native` (code, its results, media: `fields.PART`).
_WHOLE = frozenset(name for name, how in PART.items() if how == "kept whole")
_CONTENT: ChoicePath = (_CHOICE, "content")
_REASONING: ChoicePath = (_CHOICE, "reasoning")


def claims_event(value: object) -> bool:
    """An ADK event as `/run_sse` serves it (its `author` and `invocationId`), or the endpoint's error line."""
    if type(value) is not dict:
        return False
    if type(value.get("author")) is str and type(value.get("invocationId")) is str:
        return True
    details = value.get("error_details")
    return type(value.get("error")) is str and type(details) is dict and "error_type" in details


def is_final_response(value: dict[str, Any]) -> bool:
    """ADK's `Event.is_final_response()`, on the served JSON."""
    parts = parts_of(value)
    actions = value.get("actions")
    calls = any(type(part.get("functionCall")) is dict for part in parts)
    if (type(actions) is dict and actions.get("skipSummarization")) or value.get("longRunningToolIds"):
        return True
    partial = value.get("partial") is True
    if value.get("errorCode") and not partial and not calls:
        return True
    responses = any(type(part.get("functionResponse")) is dict for part in parts)
    trailing_result = bool(parts) and parts[-1].get("codeExecutionResult") is not None
    return not calls and not responses and not partial and not trailing_result


class _Pending:
    """The partial events of one model call (one event id) not yet confirmed by their aggregate."""

    __slots__ = ("event_id", "frame", "text", "text_start", "thought", "thought_start")

    def __init__(self, event_id: object, frame: int, text_start: int, thought_start: int) -> None:
        self.event_id, self.frame = event_id, frame
        self.text: list[str] = []
        self.thought: list[str] = []
        self.text_start, self.thought_start = text_start, thought_start


class ADK(Dialect):
    name = "adk"
    terminal_hint = "a final response (ADK's `is_final_response()`) of the followed agent"
    finish_reasons: ClassVar[dict[str, str]] = Gemini.finish_reasons
    text_keys: ClassVar[tuple[str, ...]] = ("text",)

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self._content = self.merger.buffer(_CONTENT)
        self._reasoning: TextBuffer | None = None
        self._lanes = Lanes()
        self._pending: _Pending | None = None
        #: Function call id (or name and arguments, without one) -> its key.
        self._calls: dict[object, int] = {}

    @classmethod
    def claims(cls, value: object) -> bool:
        return claims_event(value)

    # -- the fold loop -----------------------------------------------------------------

    def fold(self, value: object, frame: int) -> None:
        if type(value) is not dict or not claims_event(value):
            self.report.diagnostic("unexpected-payload", frame,
                                   f"frame {frame} is no ADK event ({compact_json(value, 80)}); ignored",
                                   severity=Severity.INFO, once=("adk", "not-event"))
            return
        if "author" not in value:
            self._run_failed(value, frame)
            return
        author = value["author"]
        if author == "user":
            return  # the user's own message, echoed: the prompt, not a lane
        followed = self.lane if self.lane is not None else self._lanes.holder
        if followed is None:
            followed = self._lanes.holder = author
        self.saw_lane(str(author), "agent", frame)
        if author == followed:
            self.followed_lane = str(author)  # the last agent followed: after a hand-off, the one that answers
        else:
            self._lanes.other(author, value.get("branch"), frame, is_final_response(value))
            return
        self._lanes.followed(value)
        self.merger.set_once(("id",), value["invocationId"], frame)
        if value.get("partial") is True:
            self._partial(value, frame)
        else:
            self._whole(value, frame)

    def _partial(self, value: dict[str, Any], frame: int) -> None:
        pending = self._pending
        if pending is None or pending.event_id != value.get("id"):
            self._unconfirmed()
            reasoning = self._reasoning.length if self._reasoning is not None else 0
            pending = self._pending = _Pending(value.get("id"), frame, self._content.length, reasoning)
        for part in parts_of(value):
            text = part.get("text")
            if type(text) is str and text:
                if part.get("thought") is True:
                    pending.thought.append(text)
                    self._thought().add(text, frame)
                else:
                    pending.text.append(text)
                    self._content.add(text, frame)
        self.finish_reply(False)

    def _whole(self, value: dict[str, Any], frame: int) -> None:
        pending = self._pending
        if pending is not None and pending.event_id != value.get("id"):
            self._unconfirmed()
            pending = None
        parts = parts_of(value)
        text, thought = joined(parts, False), joined(parts, True)
        if pending is None:
            self._content.add(text, frame)
            if thought:
                self._thought().add(thought, frame)
        else:
            self._pending = None
            self._content = self._confirm(_CONTENT, self._content, pending.text_start, pending.text, text, frame)
            if thought or pending.thought:
                self._reasoning = self._confirm(_REASONING, self._thought(), pending.thought_start, pending.thought,
                                                thought, frame)
        calls = [part["functionCall"] for part in parts if type(part.get("functionCall")) is dict]
        if calls:
            last_call = max(at for at, part in enumerate(parts) if type(part.get("functionCall")) is dict)
            self._into_reasoning(self._content.length - len(joined(parts[last_call:], False)))
            for call in calls:
                self._call(call, frame)
        for part in parts:
            if type(part.get("functionResponse")) is dict:
                self._lanes.result(part["functionResponse"])
            elif not _WHOLE.isdisjoint(part):
                self._lanes.parts.append(part)
        self._envelope(value, frame)
        self.finish_reply(is_final_response(value))

    def _confirm(self, path: ChoicePath, buffer: TextBuffer, start: int, streamed: list[str], aggregate: str,
                 frame: int) -> TextBuffer:
        """The aggregate's text against the partials' it repeats (see the module); the buffer it leaves."""
        said = "".join(streamed)
        if aggregate == said:
            return buffer
        if aggregate.startswith(said):
            buffer.add(aggregate[len(said):], frame)
            return buffer
        parted = common_prefix_length(said, aggregate)
        first = buffer.frame_at(start + parted)
        what = "thoughts" if path is _REASONING else "text"
        self.report.diagnostic(
            "adk-aggregate-differs", frame,
            f"the aggregate event at frame {frame} repeats its partial events' {what} differently "
            f"(they part at character {parted}, from frame {first}): "
            f"{compact_json(said, 60)} streamed, {compact_json(aggregate, 60)} in the aggregate; the "
            "aggregate's is kept, as ADK keeps it in the session", severity=Severity.WARNING,
            streamed_from=first)
        _truncate(buffer, start)  # in place: rebuilt, the text before would be copied again at every aggregate
        buffer.add(aggregate, frame)
        return buffer

    def _into_reasoning(self, end: int) -> None:
        """The text said before a function call, up to `end`, is not the answer: it moves to reasoning; the text
        after the call in the same event stays. So `content` only ever holds the text since the lane's last
        call, and each piece moves at most once (a linear cost)."""
        content = self._content
        if end > 0:
            self._content = self.merger.replace_text(_CONTENT, _slice(content, end, content.length))
            reasoning = self._thought()
            for piece, at in _slice(content, 0, end):
                reasoning.add(piece, at)

    def _call(self, call: dict[str, Any], frame: int) -> None:
        ident, name, args = call.get("id"), call.get("name"), call.get("args")
        identity = ident if type(ident) is str and ident else (repr(name), dumps_arguments(args))
        if identity in self._calls:
            return  # ADK's older aggregation sends no copy, but a call is one call however often it is named
        key = self._calls[identity] = len(self._calls)
        merger = self.merger
        merger.set_once((_CHOICE, "role"), "assistant", frame)
        if type(ident) is str and ident:
            merger.set_once((_CHOICE, "tool", key, "id"), ident, frame)
        if name is not None:
            merger.set_once((_CHOICE, "tool", key, "name"), name, frame)
        merger.append((_CHOICE, "tool", key, "arguments"), dumps_arguments(args if args is not None else {}), frame)
        merger.parse((_CHOICE, "tool", key, "arguments"), frame)

    def _envelope(self, value: dict[str, Any], frame: int) -> None:
        merger = self.merger
        if self._content.length or self._reasoning is not None:
            merger.set_once((_CHOICE, "role"), "assistant", frame)
        model = value.get("modelVersion")
        if type(model) is str and model:
            merger.replace(("model",), model, frame)
        if type(value.get("usageMetadata")) is dict:
            merger.replace(("usage",), value["usageMetadata"], frame)
        finish = self.string(value.get("finishReason"), frame, "`finishReason`")
        if finish:
            merger.replace((_CHOICE, "finish_reason"), finish, frame)
        code = value.get("errorCode")
        if code and code != finish:
            message = value.get("errorMessage")
            said = f": {message}" if type(message) is str and message else ""
            self.in_stream_error(frame, f"the agent's event carries errorCode {code!r}{said}",
                                 compact_json(value, 2000))

    def _run_failed(self, value: dict[str, Any], frame: int) -> None:
        self.in_stream_error(frame, f"the run failed and the server said so in the stream: {value['error']}",
                             compact_json(value, 2000))

    def _thought(self) -> TextBuffer:
        if self._reasoning is None:
            self._reasoning = self.merger.buffer(_REASONING)
        return self._reasoning

    def _unconfirmed(self) -> None:
        """Partial events whose aggregate never came: their text stays as streamed, and a finding says so."""
        pending, self._pending = self._pending, None
        if pending is not None:
            self.report.diagnostic(
                "adk-no-aggregate", pending.frame,
                f"the partial events of event {pending.event_id!r} from frame {pending.frame} were never followed "
                "by their aggregate (`partial: false`): their text is kept as streamed, but ADK keeps only an "
                "aggregate in the session, and runs no function call of a partial event",
                severity=Severity.WARNING)

    # -- end of stream ---------------------------------------------------------------------

    def finish(self, last_frame: int) -> None:
        self._unconfirmed()
        self._lanes.report_others(self.report, self._lanes.holder if self.lane is None else self.lane)

    def normalise_usage(self, raw: object) -> dict[str, Any] | None:
        return gemini_usage(raw)

    def native(self) -> dict[str, Any] | None:
        return self._lanes.snapshot(self.lane)



def _truncate(buffer: TextBuffer, length: int) -> None:
    """Cut the buffer's text at character `length`, from its end: the pieces after it go, the one it falls in
    is cut (each piece is removed at most once, so the cost is that of the text the partials streamed)."""
    if length >= buffer.length:
        return
    ends = buffer.ends
    last = bisect_left(ends, length) if length else -1  # the piece that holds character `length - 1`
    if len(buffer.pieces) == len(ends):  # the pieces as added
        del buffer.pieces[last + 1:]
        if last >= 0 and ends[last] > length:
            buffer.pieces[last] = buffer.pieces[last][:len(buffer.pieces[last]) - (ends[last] - length)]
    else:  # joined into one when read (and maybe added to since)
        buffer.pieces[:] = ["".join(buffer.pieces)[:length]] if length else []
    del buffer.frames[last + 1:], ends[last + 1:]
    if last >= 0:
        ends[last] = length
    buffer.length, buffer.parsed = length, None


def _slice(buffer: TextBuffer, start: int, end: int) -> list[tuple[str, int]]:
    """The buffer's pieces (with their frames) between characters `start` and `end`, cut there."""
    found, seen = [], 0
    for piece, frame in buffer.fragments():
        piece_end = seen + len(piece)
        if piece_end > start and seen < end:
            found.append((piece[max(0, start - seen): end - seen], frame))
        seen = piece_end
    return found
