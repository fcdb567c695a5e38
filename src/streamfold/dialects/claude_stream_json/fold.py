"""Claude Code / Agent SDK `stream-json` (`claude -p --output-format stream-json --verbose
[--include-partial-messages]`, the Agent SDK's transport): NDJSON lines, each an envelope with a
`type` and the `session_id`: `system` (`init` names the model), `stream_event` (its `event` is one
Anthropic Messages stream event), `assistant` (a whole Anthropic message, or one block of it),
`user` (tool results), `result` (the end of the run: subtype, usage, cost, `is_error`), and
others (`rate_limit_event`, ...) that are recognised and skipped.

This dialect is the carrier; the Anthropic dialect folds the events, into the same merger, and the
Result names `anthropic` (as Bedrock's InvokeModel carries Claude's events). One note (`envelope`)
says so. A run is one or more turns (a message, the tools' results, the next message): they fold
as one reply, text, reasoning and tool calls in order, the block indexes of each later turn moved
past the earlier ones'. A turn's `message_delta` is held until the next turn starts (its stop
reason, `tool_use` before the tools ran, is not the run's) or the run ends; `message_stop` is not
the end: the `result` line is, and its usage (the run's total) is the usage. Without
`stream_event` lines the `assistant` messages fold, each block as if it streamed in one delta.
Lines of a subagent (`parent_tool_use_id` set) are not the reply: counted, not folded. The Result
names `anthropic`, so its export is Anthropic's `Message` of the run's turns, and its finish follows
Anthropic's rule: a run that called tools says `tool_calls` even after they ran (as its exported
Message reads back), `finish_reason_raw` being the last turn's stop reason.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ...findings import Report, Severity
from ...framing import FrameView
from ...merge import Merger
from .._base import Dialect, compact_json, event_type
from ..anthropic import Anthropic
from ..anthropic.summary import summarize as summarize_anthropic
from .turns import events_of_message

__all__ = ["ClaudeStreamJSON"]

_ENVELOPES = frozenset({"system", "stream_event", "assistant", "user", "result"})
#: Lines the Agent SDK knows that hold nothing of the reply.
_SKIPPED = frozenset({"rate_limit_event", "subagent_token_usage", "tool_progress", "auth_status", "keep_alive"})
_BLOCK_EVENTS = frozenset({"content_block_start", "content_block_delta", "content_block_stop"})


class ClaudeStreamJSON(Dialect):
    name = "claude-stream-json"
    terminal_hint = "a `result` line"
    done_is_terminal = False
    finish_reasons: ClassVar[dict[str, str]] = Anthropic.finish_reasons

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self._inner = Anthropic(self.merger, self.report, self.frames)
        self._inner.carrier = self
        #: Turns begun; the block index the current turn's block 0 is moved to; the next free one.
        self._turns, self._offset, self._next_index = 0, 0, 0
        #: The current turn's `message_delta` with its frame, until the turn is known to be the last.
        self._held_delta: tuple[dict[str, Any], int] | None = None
        #: `stream_event` lines came: `assistant` lines repeat them and are not folded.
        self._partial = False
        self._message_id: object = None
        self._subagent_lines = 0
        self._noted = False

    @property
    def reported(self) -> Dialect:
        return self._inner

    @classmethod
    def claims(cls, value: object) -> bool:
        kind = event_type(value)
        if kind is None or type(value) is not dict or type(value.get("session_id")) is not str:
            return False
        if kind == "stream_event":
            return type(value.get("event")) is dict
        if kind in ("assistant", "user"):
            return type(value.get("message")) is dict
        return kind in _ENVELOPES or kind in _SKIPPED

    # -- the fold loop -------------------------------------------------------

    def fold(self, value: object, frame: int) -> None:
        self._inner.transport = self.transport
        kind = event_type(value)
        if kind is None or type(value) is not dict:
            self.report.diagnostic("unexpected-payload", frame, "a stream-json line is a JSON object with a string "
                                   f"`type`, not {compact_json(value, 60)}; ignored", once=("no-type",))
            return
        if not self._noted:
            self._noted = True
            self.report.diagnostic(
                "envelope", frame, "Claude Code stream-json: NDJSON envelopes (`system`, `stream_event`, `assistant`, "
                "`user`, `result`) around Anthropic Messages events; the events are folded as `anthropic`, the "
                "`result` line ends the run", severity=Severity.INFO)
        if value.get("parent_tool_use_id") is not None:
            self._subagent_lines += 1  # a subagent's own turns: not this reply
            return
        if kind == "stream_event":
            event = value.get("event")
            if type(event) is dict:
                self._partial = True
                self._event(event, frame)
            else:
                self.wrong_type(event, frame, "a `stream_event` line's `event`", "an object")
        elif kind == "assistant":
            if not self._partial and type(value.get("message")) is dict:
                self._assistant(value["message"], frame)
        elif kind == "system":
            if value.get("subtype") == "init":
                self.merger.set_once(("model",), value.get("model"), frame)
        elif kind == "result":
            self._result(value, frame)
        elif kind not in _SKIPPED and kind != "user":  # `user` lines: the tools' results, no part of the reply
            self.report.diagnostic(
                "unknown-event-type", frame, f"stream-json line type {kind!r} is not one streamfold knows; ignored",
                severity=Severity.INFO, once=("line", kind), type=kind)

    def _event(self, event: dict[str, Any], frame: int) -> None:
        """One Anthropic event: a later turn's `message_start` opens a turn, block indexes are moved,
        `message_delta` is held and `message_stop` waits for the `result` line. (An event whose
        `type` is not a string goes to the Anthropic fold, which reports it.)"""
        kind = event_type(event)
        if kind == "message_start":
            self._turn(frame)
            if self._turns > 1:
                return  # the first message's id and model are the reply's
        elif kind in _BLOCK_EVENTS and type(event.get("index")) is int:
            index = event["index"] + self._offset
            self._next_index = max(self._next_index, index + 1)
            event = {**event, "index": index}
        elif kind == "message_delta":
            self._release(keep_stop=False)
            self._held_delta = (event, frame)
            return
        elif kind == "message_stop":
            return
        self._inner.fold(event, frame)

    def _turn(self, frame: int) -> None:
        """A new message begins: the last one's held `message_delta` goes in without its stop reason."""
        self._release(keep_stop=False)
        self._turns += 1
        self._offset = self._next_index

    def _release(self, keep_stop: bool) -> None:
        if self._held_delta is None:
            return
        event, frame = self._held_delta
        self._held_delta = None
        if not keep_stop and type(event.get("delta")) is dict:
            event = {**event, "delta": {key: item for key, item in event["delta"].items()
                                        if key not in ("stop_reason", "stop_sequence")}}
        self._inner.fold(event, frame)

    def _assistant(self, message: dict[str, Any], frame: int) -> None:
        first = message.get("id") is None or message.get("id") != self._message_id
        if first:
            self._message_id = message.get("id")
            self._turn(frame)
        for event in events_of_message(message, first and self._turns == 1, self._next_index):
            if event["type"] in _BLOCK_EVENTS:
                self._next_index = max(self._next_index, event["index"] + 1)
            if event["type"] == "message_delta":
                self._release(keep_stop=False)
                self._held_delta = (event, frame)
            elif event["type"] != "message_start" or self._turns == 1:
                self._inner.fold(event, frame)

    def _result(self, value: dict[str, Any], frame: int) -> None:
        """The end of the run: the last turn's stop reason, the run's usage, an error if it failed."""
        self._release(keep_stop=True)
        stop = value.get("stop_reason")
        if type(stop) is str and stop:
            self.merger.replace((0, "finish_reason"), stop, frame)
        usage = value.get("usage")
        if type(usage) is dict:
            self.merger.replace(("usage",), usage, frame)
        subtype = value.get("subtype")
        if value.get("is_error") is True or (type(subtype) is str and subtype.startswith("error")):
            said = value.get("result") or value.get("errors") or "no message"
            self.in_stream_error(frame, f"the Claude Code run ended with {subtype!r}: "
                                        f"{said if type(said) is str else compact_json(said, 160)}",
                                 raw=compact_json(value, 400))
        self._inner.terminate(frame)
        self.terminate(frame)

    # -- end of stream -------------------------------------------------------

    def finish(self, last_frame: int) -> None:
        self._release(keep_stop=True)
        self._inner.finish(last_frame)
        if self._subagent_lines:
            self.report.diagnostic(
                "envelope", None, f"{self._subagent_lines} line(s) of a subagent (`parent_tool_use_id` set) are its "
                "own turns, not this reply: not folded", severity=Severity.INFO, lines=self._subagent_lines)

    def in_stream_error(self, frame: int, message: str, raw: str | None = None, *,
                        offset: int | None = None, line: int | None = None) -> None:
        self._inner.in_stream_error(frame, message, raw, offset=offset, line=line)

    @classmethod
    def summarize(cls, value: object) -> str:
        if type(value) is not dict:
            return compact_json(value)
        kind = value.get("type")
        if kind == "stream_event" and type(value.get("event")) is dict:
            return "stream_event · " + summarize_anthropic(value["event"])
        if kind == "result":
            return f"result {value.get('subtype')}, {value.get('num_turns')} turn(s)"
        if kind == "system":
            return f"system {value.get('subtype')}"
        return f"{kind} " + compact_json(value.get("message", value), 120)
