"""AG-UI (docs.ag-ui.com, spec 1.0 "Events"; `ag-ui-protocol` 1.0.0's `ag_ui.core` models): typed
events over SSE (`data: {"type": "TEXT_MESSAGE_CONTENT", ...}`) or NDJSON, one run per stream.

Strategy. Events are dispatched on their `type` (the upper-case `EventType` names, which no other
dialect uses). Assistant text messages (start, content, end by `messageId`) APPEND to the reply's
content, a blank line between two messages; reasoning messages to its reasoning; tool calls
(start, args, end by `toolCallId`) are the reply's tool calls, their arguments joined and parsed
once, at `TOOL_CALL_END` (PARSE-AT-END). The `*_CHUNK` events open what they name on first sight
and close it implicitly, as the client's chunk expansion does. The state is kept whole: a
`STATE_SNAPSHOT` replaces it, a `STATE_DELTA` applies its JSON Patch atomically (`patch`).
`MESSAGES_SNAPSHOT`, tool results, steps, raw and custom events, and encrypted reasoning values
go to the native snapshot, in order. `RUN_FINISHED` finishes the reply (a later `RUN_STARTED`
opens the next run), `RUN_ERROR` is an in-stream error.

Lifecycle findings follow the `@ag-ui/client` verifier's rules: content, arguments or an end for
something never started (`event-before-start`), content or arguments after its end
(`event-after-end`, not folded: the call's arguments were complete, pydantic/pydantic-ai#4733),
what started and never ended (`never-ended`), a run that never finishes (`missing-terminal`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

from .._base import ERROR, INCOMPLETE, STOP, compact_json, event_type, fast_decoder
from .lifecycle import Lifecycle
from .native import Conversation, this_turn
from .patch import PatchError, PatchLimitError, State
from .runs import REASONING, TEXT, ContentRuns

if TYPE_CHECKING:
    from ...findings import Report
    from ...framing import FrameView
    from ...merge import Merger

__all__ = ["AGUI", "EVENT_TYPES"]

EVENT_TYPES = frozenset((
    "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "TEXT_MESSAGE_CHUNK", "TOOL_CALL_START",
    "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_CHUNK", "TOOL_CALL_RESULT", "STATE_SNAPSHOT", "STATE_DELTA",
    "MESSAGES_SNAPSHOT", "ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA", "RAW", "CUSTOM", "RUN_STARTED", "RUN_FINISHED",
    "RUN_ERROR", "STEP_STARTED", "STEP_FINISHED", "REASONING_START", "REASONING_MESSAGE_START",
    "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END", "REASONING_MESSAGE_CHUNK", "REASONING_END",
    "REASONING_ENCRYPTED_VALUE", "SUBAGENT_STARTED", "SUBAGENT_FINISHED", "SUBAGENT_ERROR"))

# What the open/closed bookkeeping is keyed by: (kind, id).
_CALL, _STEP, _PHASE = "tool call", "step", "reasoning"
_FAST_SHAPES = fast_decoder(f"{__package__}.fast", "decode_message_content")


class AGUI(ContentRuns):
    name = "ag-ui"
    terminal_hint = "`RUN_FINISHED` (or `RUN_ERROR`)"
    done_is_terminal = False
    text_keys = ("delta",)
    # ("error": an exported run that ended in RUN_ERROR, read back; no outcome is called that.)
    finish_reasons: ClassVar[dict[str, str]] = {"success": STOP, "interrupt": INCOMPLETE, "cancelled": INCOMPLETE,
                                                "error": ERROR}

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self.fast_decoder = _FAST_SHAPES
        self._content = self.merger.buffer((0, "content"))
        self._reasoning = self.merger.buffer((0, "reasoning"))
        self.conversation = Conversation()
        self.lifecycle = Lifecycle(self.report)
        self._chunked: dict[str, str | None] = {}  # the id the last chunk of each kind named
        self._tool_keys: dict[str, int] = {}
        self._names: dict[str, str] = {}
        self._replying: set[str] = set()  # the messages whose text is in the reply already
        self._run: str | None = None  # "open", "finished" or "failed" once a run started
        self._ids: dict[str, Any] = {}
        self._state = State()
        self._log: list[dict[str, Any]] = []  # steps, raw, custom, activities, encrypted values, in order
        self._hot, self._hot_pieces, self._hot_buffer = None, [], None  # (see `ContentRuns`)

    @classmethod
    def claims(cls, value: object) -> bool:
        return event_type(value) in EVENT_TYPES

    def fold(self, value: object, frame: int) -> None:
        self._hot = None
        kind = event_type(value)
        if kind is None:
            self.report.diagnostic("unexpected-payload", frame, f"frame {frame} is not an AG-UI event (no string "
                                   "`type`); ignored", once="ag-ui")
            return
        assert type(value) is dict
        handler = _HANDLERS.get(kind)
        if handler is None:
            if kind not in EVENT_TYPES:
                self.report.diagnostic("unknown-ag-ui-event", frame, f"frame {frame} is an AG-UI event of type "
                                       f"{kind!r}, which streamfold does not know; ignored", once=("ag-ui", kind))
            return
        if self._run is None and kind != "RUN_STARTED":
            self.report.diagnostic("event-before-start", frame, f"frame {frame} ({kind}) comes before "
                                   "`RUN_STARTED`: the verifier requires a run to start first", once=("ag-ui", "run"))
        elif self._run == "failed":
            self.report.diagnostic("event-after-end", frame, f"frame {frame} ({kind}) comes after the run's "
                                   "`RUN_ERROR`: the verifier rejects any event after it", once=("ag-ui", "error"))
        handler(self, value, frame)

    # -- lifecycle ------------------------------------------------------------------

    def _id(self, value: dict[str, Any], key: str, frame: int) -> str | None:
        ident = value.get(key)
        if type(ident) is str:
            return ident
        self.wrong_type(ident, frame, f"`{key}` of a {value.get('type')} event", "a string")
        return None

    # -- runs -------------------------------------------------------------------------

    def _run_started(self, value: dict[str, Any], frame: int) -> None:
        if self._run == "open":
            self.report.diagnostic("never-ended", frame,
                                   f"frame {frame} starts a run while the last one never finished")
        self._run = "open"
        self._ids = {"thread_id": value.get("threadId"), "run_id": value.get("runId")}
        run_id = value.get("runId")
        if type(run_id) is str:
            self.merger.replace(("id",), run_id, frame)
        self.finish_reply(False)

    def _run_finished(self, value: dict[str, Any], frame: int) -> None:
        self._close_all(frame, "`RUN_FINISHED`")
        outcome = value.get("outcome")
        raw = outcome.get("type") if type(outcome) is dict and type(outcome.get("type")) is str else "success"
        self._ids["outcome"] = outcome
        self._ids["result"] = value.get("result")
        self._take_usage(value, frame)
        self.merger.replace((0, "finish_reason"), raw, frame)
        self._run = "finished"
        self.finish_reply()

    def _run_error(self, value: dict[str, Any], frame: int) -> None:
        message = value.get("message")
        code = value.get("code")
        self._ids["error"] = {"message": message, "code": code}
        detail = f" ({code})" if type(code) is str else ""
        self._take_usage(value, frame)
        self.in_stream_error(frame, f"the agent's run failed{detail}: "
                             f"{message if type(message) is str else compact_json(message)}",
                             raw=json.dumps(value, ensure_ascii=False))
        self._run = "failed"
        self.finish_reply()

    def _take_usage(self, value: dict[str, Any], frame: int) -> None:
        usage = value.get("usage")
        if type(usage) is list and usage:
            self.merger.replace(("usage",), usage, frame)

    def _close_all(self, frame: int, at: str) -> None:
        for (what, ident), started in list(self.lifecycle.open.items()):
            if self._chunked.get(what) == ident:
                if what == _CALL:
                    self.check_arguments(0, self._tool_keys[ident], frame)
                continue  # opened by a chunk: closed implicitly, by design
            self.report.diagnostic("never-ended", started, f"{what} {ident!r} started at frame {started} and never "
                                   f"ended before {at}: the verifier rejects the run", once=("never", what, ident))
            if what == _CALL:
                self.check_arguments(0, self._tool_keys[ident], frame)
        self.lifecycle.open.clear()
        self._chunked.clear()

    # -- text and reasoning -------------------------------------------------------------

    def _text_start(self, value: dict[str, Any], frame: int, what: str = TEXT) -> None:
        ident = self._id(value, "messageId", frame)
        if ident is None:
            return
        self.lifecycle.start(what, ident, frame)
        role = value.get("role")
        self.conversation.message(ident, "reasoning" if what == REASONING else role if type(role) is str
                                  else "assistant")

    def _text_content(self, value: dict[str, Any], frame: int, what: str = TEXT) -> None:
        ident = self._id(value, "messageId", frame)
        if ident is None or not self.lifecycle.ongoing(what, ident, frame, str(value.get("type"))):
            return
        delta = self.string(value.get("delta"), frame, f"the `delta` of a {value.get('type')} event")
        if delta:
            self._add_text(ident, what, delta, frame)

    def _add_text(self, ident: str, what: str, delta: str, frame: int) -> bool:
        """Add a message's content; whether it is the reply's (not a user or system message echoed)."""
        role = self.conversation.text(ident, "reasoning" if what == REASONING else "assistant", delta)
        if role not in ("assistant", "reasoning"):
            return False  # a user or system message the agent echoes is not its reply
        buffer = self._reasoning if what == REASONING else self._content
        if ident not in self._replying:
            self._replying.add(ident)
            if buffer.length:
                buffer.add("\n\n", frame)  # a new message: a blank line from the last one
        buffer.add(delta, frame)
        return True

    def _text_end(self, value: dict[str, Any], frame: int, what: str = TEXT) -> None:
        ident = self._id(value, "messageId", frame)
        if ident is not None:
            self.lifecycle.end(what, ident, frame, str(value.get("type")))

    def _text_chunk(self, value: dict[str, Any], frame: int, what: str = TEXT) -> None:
        ident = value.get("messageId")
        if type(ident) is not str:
            ident = self._chunked.get(what)
            if ident is None:
                self.report.diagnostic("event-before-start", frame, f"frame {frame} is a chunk with no `messageId` "
                                       "and no chunk before it to continue: the client cannot place it; ignored")
                return
        if (what, ident) not in self.lifecycle.open:
            self.lifecycle.start(what, ident, frame)
            self.conversation.message(ident, "reasoning" if what == REASONING else "assistant")
        self._chunked[what] = ident
        delta = self.string(value.get("delta"), frame, f"the `delta` of a {value.get('type')} event")
        if delta:
            self._add_text(ident, what, delta, frame)

    def _reasoning_start(self, value: dict[str, Any], frame: int) -> None:
        self._text_start(value, frame, REASONING)

    def _reasoning_content(self, value: dict[str, Any], frame: int) -> None:
        self._text_content(value, frame, REASONING)

    def _reasoning_end(self, value: dict[str, Any], frame: int) -> None:
        self._text_end(value, frame, REASONING)

    def _reasoning_chunk(self, value: dict[str, Any], frame: int) -> None:
        self._text_chunk(value, frame, REASONING)

    def _phase(self, value: dict[str, Any], frame: int) -> None:
        ident = self._id(value, "messageId", frame)
        if ident is None:
            return
        if value.get("type") == "REASONING_START":
            self.lifecycle.start(_PHASE, ident, frame)
        else:
            self.lifecycle.end(_PHASE, ident, frame, "REASONING_END")

    # -- tool calls ---------------------------------------------------------------------

    def _call_start(self, value: dict[str, Any], frame: int) -> None:
        ident = self._id(value, "toolCallId", frame)
        if ident is None:
            return
        self.lifecycle.start(_CALL, ident, frame)
        name = value.get("toolCallName")
        parent = value.get("parentMessageId")
        self._new_call(ident, name if type(name) is str else None, parent if type(parent) is str else None, frame)

    def _new_call(self, ident: str, name: str | None, parent: str | None, frame: int, *, record: bool = True) -> int:
        """The key of tool call `ident`, a new call's added to the conversation (unless a snapshot holds it)."""
        key = self._tool_keys.get(ident)
        if name:
            name = self._names.setdefault(name, name)  # one string per tool name, not one per call
        if key is None:
            key = self._tool_keys[ident] = len(self._tool_keys)
            if record:
                self.conversation.tool_call(ident, name, parent)
            self.merger.set_once((0, "tool", key, "id"), ident, frame)
        if name:
            self.merger.set_once((0, "tool", key, "name"), name, frame)
        return key

    def _call_args(self, value: dict[str, Any], frame: int) -> None:
        ident = self._id(value, "toolCallId", frame)
        if ident is None or not self.lifecycle.ongoing(_CALL, ident, frame, "TOOL_CALL_ARGS"):
            return
        self._append_args(ident, value.get("delta"), frame)

    def _append_args(self, ident: str, delta: object, frame: int) -> None:
        key = self._new_call(ident, None, None, frame)
        text = self.string(delta, frame, f"the arguments delta of tool call {ident!r}")
        if text:
            self.merger.append((0, "tool", key, "arguments"), text, frame)
            self.conversation.arguments(ident, text)

    def _call_end(self, value: dict[str, Any], frame: int) -> None:
        ident = self._id(value, "toolCallId", frame)
        if ident is not None and self.lifecycle.end(_CALL, ident, frame, "TOOL_CALL_END"):
            self.check_arguments(0, self._new_call(ident, None, None, frame), frame)

    def _call_chunk(self, value: dict[str, Any], frame: int) -> None:
        ident = value.get("toolCallId")
        if type(ident) is not str:
            ident = self._chunked.get(_CALL)
        if ident is None:
            self.report.diagnostic("event-before-start", frame, f"frame {frame} is a tool call chunk with no "
                                   "`toolCallId` and no chunk before it to continue; ignored")
            return
        previous = self._chunked.get(_CALL)
        if previous is not None and previous != ident and (_CALL, previous) in self.lifecycle.open:
            self.lifecycle.end(_CALL, previous, frame, "TOOL_CALL_CHUNK")  # a new call's chunk closes the last one
            self.check_arguments(0, self._tool_keys[previous], frame)
        if (_CALL, ident) not in self.lifecycle.open and not self.lifecycle.ended(_CALL, ident):
            self.lifecycle.start(_CALL, ident, frame)
            name, parent = value.get("toolCallName"), value.get("parentMessageId")
            self._new_call(ident, name if type(name) is str else None, parent if type(parent) is str else None, frame)
        elif not self.lifecycle.ongoing(_CALL, ident, frame, "TOOL_CALL_CHUNK"):
            return
        self._chunked[_CALL] = ident
        self._append_args(ident, value.get("delta"), frame)

    def _call_result(self, value: dict[str, Any], frame: int) -> None:
        message_id, call_id = value.get("messageId"), value.get("toolCallId")
        if type(message_id) is str and type(call_id) is str:
            self.conversation.tool_result(message_id, call_id, value.get("content"), value.get("error"))

    # -- state, snapshots and the rest ------------------------------------------------

    def _state_snapshot(self, value: dict[str, Any], frame: int) -> None:
        self._state.snapshot(value.get("snapshot"))

    def _state_delta(self, value: dict[str, Any], frame: int) -> None:
        baseline = self._state.value is None
        try:
            self._state.patch(value.get("delta"))
        except PatchLimitError as error:
            self.report.diagnostic("state-capped", frame, f"frame {frame}'s STATE_DELTA is not applied: {error} "
                                   "(docs/dialects.md, ag-ui); the state stays as it was before it. A client that "
                                   "applies it may grow the state without bound: a `copy` of the state into itself "
                                   "doubles it")
        except PatchError as error:
            why = (" No STATE_SNAPSHOT came first, so the baseline was taken as {} (the run input's state is not in "
                   "the stream).") if baseline else ""
            self.report.diagnostic(
                "state-patch-failed", frame,
                f"frame {frame}'s STATE_DELTA does not apply: {error}. Patches are atomic, so the state stays as it "
                f"was before it; the spec asks the consumer to resynchronise (a STATE_SNAPSHOT).{why}")

    def _messages_snapshot(self, value: dict[str, Any], frame: int) -> None:
        messages = value.get("messages")
        if type(messages) is not list:
            self.wrong_type(messages, frame, "the `messages` of a MESSAGES_SNAPSHOT", "an array")
            return
        odd = sum(1 for m in messages if type(m) is not dict or type(m.get("id")) is not str
                  or type(m.get("role")) is not str)
        if odd:
            self.report.diagnostic(
                "unexpected-payload", frame, f"frame {frame}'s MESSAGES_SNAPSHOT holds {odd} message(s) that are "
                "not an object with a string `id` and `role` (every AG-UI Message has both): one without an id "
                "cannot be placed and is left out, one without a role is kept as sent", messages=odd)
        self.conversation.snapshot(messages)
        # A compacted run (a server replaying a finished run as one snapshot) carries its reply only here: the
        # turn's messages that no event streamed join the reply, as a client reading the snapshot shows them.
        for message in this_turn(messages):
            ident, role, content = message.get("id"), message.get("role"), message.get("content")
            if (role in ("assistant", "reasoning") and type(ident) is str and type(content) is str and content
                    and ident not in self._replying):
                self._add_text(ident, REASONING if role == "reasoning" else TEXT, content, frame)
            calls = message.get("toolCalls")
            for call in calls if role == "assistant" and type(calls) is list else ():
                self._snapshot_call(call, frame)

    def _snapshot_call(self, call: object, frame: int) -> None:
        function = call.get("function") if type(call) is dict else None
        if type(call) is not dict or type(call.get("id")) is not str or type(function) is not dict \
                or call["id"] in self._tool_keys:
            return
        name = function.get("name")
        key = self._new_call(call["id"], name if type(name) is str else None, None, frame, record=False)
        if type(function.get("arguments")) is str:
            self.merger.append((0, "tool", key, "arguments"), function["arguments"], frame)
        self.check_arguments(0, key, frame)

    def _keep(self, value: dict[str, Any], frame: int) -> None:
        kind = value.get("type")
        if kind in ("STEP_STARTED", "STEP_FINISHED"):
            name = value.get("stepName")
            if type(name) is str:
                if kind == "STEP_STARTED":
                    self.lifecycle.start(_STEP, name, frame)
                else:
                    self.lifecycle.end(_STEP, name, frame, "STEP_FINISHED")
        self._log.append(value)  # (no frame index: the native snapshot is the same however the stream was framed)

    def finish(self, last_frame: int) -> None:
        if self._run != "failed" and self.lifecycle.open:
            self._close_all(last_frame, "the end of the stream")
        # What ended and which key each call has serve the fold only: let them go before the Result is
        # built, the fold's peak (a run of many tool calls held both).
        self.lifecycle.closed.clear()
        self._tool_keys.clear()

    def native(self) -> dict[str, Any] | None:
        return {**self._ids, "messages": self.conversation.build(), "state": self._state.value,
                "events": self._log}

    def normalise_usage(self, raw: object) -> dict[str, Any] | None:
        if type(raw) is not list:
            return None
        totals: dict[str, Any] = {}
        for name, key in (("input_tokens", "inputTokens"), ("output_tokens", "outputTokens"),
                          ("total_tokens", "totalTokens"), ("reasoning_tokens", "reasoningTokens"),
                          ("cache_read_tokens", "cachedInputTokens")):
            counts = [entry.get(key) for entry in raw if type(entry) is dict and type(entry.get(key)) is int]
            totals[name] = sum(counts) if counts else None
        if totals["total_tokens"] is None and totals["input_tokens"] is not None \
                and totals["output_tokens"] is not None:
            totals["total_tokens"] = totals["input_tokens"] + totals["output_tokens"]
        return totals


_HANDLERS: dict[str, Any] = {
    "RUN_STARTED": AGUI._run_started, "RUN_FINISHED": AGUI._run_finished, "RUN_ERROR": AGUI._run_error,
    "TEXT_MESSAGE_START": AGUI._text_start, "TEXT_MESSAGE_CONTENT": AGUI._text_content,
    "TEXT_MESSAGE_END": AGUI._text_end, "TEXT_MESSAGE_CHUNK": AGUI._text_chunk,
    "REASONING_MESSAGE_START": AGUI._reasoning_start, "REASONING_MESSAGE_CONTENT": AGUI._reasoning_content,
    "REASONING_MESSAGE_END": AGUI._reasoning_end, "REASONING_MESSAGE_CHUNK": AGUI._reasoning_chunk,
    "REASONING_START": AGUI._phase, "REASONING_END": AGUI._phase,
    "TOOL_CALL_START": AGUI._call_start, "TOOL_CALL_ARGS": AGUI._call_args, "TOOL_CALL_END": AGUI._call_end,
    "TOOL_CALL_CHUNK": AGUI._call_chunk, "TOOL_CALL_RESULT": AGUI._call_result,
    "STATE_SNAPSHOT": AGUI._state_snapshot, "STATE_DELTA": AGUI._state_delta,
    "MESSAGES_SNAPSHOT": AGUI._messages_snapshot,
    "STEP_STARTED": AGUI._keep, "STEP_FINISHED": AGUI._keep, "RAW": AGUI._keep, "CUSTOM": AGUI._keep,
    "ACTIVITY_SNAPSHOT": AGUI._keep, "ACTIVITY_DELTA": AGUI._keep, "REASONING_ENCRYPTED_VALUE": AGUI._keep,
}
