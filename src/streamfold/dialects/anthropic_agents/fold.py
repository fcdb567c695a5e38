"""Anthropic Managed Agents: the session event stream (`GET /v1/sessions/{id}/events/stream`, beta
`managed-agents-2026-04-01`; the anthropic SDK's `BetaManagedAgentsStreamSessionEvents`).

A session stream carries whole ("buffered") events, `event: <type>` over SSE, each with an `id`:
`agent.message` (its `content`: text and redacted blocks, whole), `agent.thinking` (a progress
signal: it carries no text), `agent.tool_use` / `agent.mcp_tool_use` / `agent.custom_tool_use` (each
a tool call whose `input` arrives whole, as an object), their results, `span.*` (model requests and
outcome evaluations), `session.*` (status, errors, usage, sub-agent threads) and echoes of the
`user.*` events the client sent. A connection that opts in (`event_deltas`) also gets previews:
`event_start` names an event being produced, `event_delta`s stream its text, and the buffered event
with the same id then carries the whole of it.

What the fold calls the reply, where the API says nothing of it: the first turn of the followed lane.
The turn ends when the session goes idle with a stop reason other than `requires_action` (`end_turn`,
`retries_exhausted`, `budget_reached`, `refusal`: the agent is done until the user speaks again), or
when the session is terminated or deleted (TERMINATED). `requires_action` pauses the turn (the agent
waits for a tool confirmation or a custom tool's result; a later `session.status_running` resumes
it), so a stream cut there is finished with `requires_action`. A status event before the turn began
is the session's state when the stream opened, not an end. Events after the turn are listed (their
count and first frame), not folded.

Lanes are threads: the primary thread's events carry no `session_thread_id` (lane None, the default:
the session stream is the primary thread's, and its reply is what the user asked for); a sub-agent's
events cross-posted to it (a permission request) and `session.thread_*` name their thread.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ...findings import Report, Severity
from ...framing import FrameView
from ...merge import Merger
from .._base import (
    CONTENT_FILTER,
    ERROR,
    INCOMPLETE,
    OTHER,
    STOP,
    TOOL_CALLS,
    Dialect,
    compact_json,
    dumps_arguments,
    event_type,
)
from ..anthropic.fold import messages_usage
from .events import BUFFERED_TYPES, PREVIEW_TYPES, Preview, add_usage, claims_event, texts

__all__ = ["AnthropicAgents"]

#: The primary thread's lane (its events name no `session_thread_id`): the default one.
PRIMARY = "primary"
_CHOICE = 0
#: The tool-use event types, each a tool call of the reply (its block named after it).
_TOOL_USES = {"agent.tool_use": "tool_use", "agent.mcp_tool_use": "mcp_tool_use",
              "agent.custom_tool_use": "custom_tool_use"}
#: Status events of a sub-agent's thread, read as the session's own when that thread is the lane followed.
_THREAD_STATUS = {"session.thread_status_idle": "session.status_idle",
                  "session.thread_status_running": "session.status_running",
                  "session.thread_status_rescheduled": "session.status_rescheduled",
                  "session.thread_status_terminated": "session.status_terminated"}
#: Events that end the session, and with it the stream.
_SESSION_ENDS = {"session.status_terminated": "terminated", "session.deleted": "deleted"}
#: What begins a turn: the user's events, the agent's, its model requests and previews (not a status, a usage
#: snapshot or a session update, which a stream may send as it opens).
_TURN_EVENTS = ("user.", "agent.", "span.", "event_", "session.error")


class AnthropicAgents(Dialect):
    name = "anthropic-agents"
    terminal_hint = "`session.status_idle` with a stop reason other than `requires_action`, or " \
                    "`session.status_terminated`"
    done_is_terminal = False
    text_keys = ("text",)
    #: Raw values: the idle event's `stop_reason.type`, or how the session ended.
    finish_reasons: ClassVar[dict[str, str]] = {
        "end_turn": STOP, "requires_action": TOOL_CALLS, "retries_exhausted": ERROR,
        "budget_reached": INCOMPLETE, "refusal": CONTENT_FILTER, "terminated": INCOMPLETE, "deleted": INCOMPLETE}

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self._content = self.merger.buffer((_CHOICE, "content"))
        self._started = False
        #: The frame of the status that ended the turn, once it has.
        self._over: int | None = None
        #: A `requires_action` pause: (stop reason, frame), written as the finish only if nothing resumes it.
        self._paused: tuple[str, int] | None = None
        self._blocks = 0
        self._calls = 0
        self._previews: dict[str, Preview] = {}
        #: The buffered events of the folded turn, as they came: the events list page the export gives.
        self._events: list[dict[str, Any]] = []
        self._usage: dict[str, int] = {}
        self._session_usage: Any = None
        #: Preview text the server dropped (its model request ended without the event): id -> text.
        self._abandoned: dict[str, str] = {}
        #: Preview text of a message the stream was cut in (it closes the content): id -> text.
        self._cut: dict[str, str] = {}
        #: Other lanes: thread id (None: the primary thread) -> the first frame that named it.
        self._others: dict[str | None, int] = {}
        #: Events of the followed lane after the turn: (first frame, how many).
        self._after: tuple[int, int] | None = None
        self._handlers = {
            "agent.message": self._message, "agent.thinking": self._thinking,
            "event_start": self._preview_start, "event_delta": self._preview_delta,
            "span.model_request_end": self._request_end, "session.status_idle": self._idle,
            "session.status_running": self._running, "session.error": self._error,
            "session.usage": self._snapshot, "session.updated": self._updated,
            **dict.fromkeys(_TOOL_USES, self._tool_use), **dict.fromkeys(_SESSION_ENDS, self._session_end)}

    @classmethod
    def claims(cls, value: object) -> bool:
        return claims_event(value)

    # -- the fold loop ------------------------------------------------------------------

    def fold(self, value: object, frame: int) -> None:
        kind = event_type(value)
        if kind is None or type(value) is not dict:
            self.report.diagnostic("unexpected-payload", frame,
                                   f"frame {frame} is not a session event (an object with a `type`); ignored",
                                   severity=Severity.INFO, once=("anthropic-agents", "untyped"))
            return
        if kind not in BUFFERED_TYPES and kind not in PREVIEW_TYPES:
            self.report.diagnostic("unexpected-payload", frame,
                                   f"event type {kind!r} is not one of the Managed Agents session events; ignored",
                                   severity=Severity.INFO, once=("anthropic-agents", kind))
            return
        kind = self._followed(kind, value, frame)
        if kind is None:
            return
        if self._over is not None:
            if kind.startswith(_TURN_EVENTS):  # (a status or usage snapshot after the end is no new turn)
                first, count = self._after or (frame, 0)
                self._after = (first, count + 1)
            return
        if kind in BUFFERED_TYPES:
            self._events.append(value)
        if not self._started and kind.startswith(_TURN_EVENTS):
            self._started = True
        handler = self._handlers.get(kind)
        if handler is not None:
            handler(value, frame)

    def _followed(self, kind: str, value: dict[str, Any], frame: int) -> str | None:
        """The event's type as the fold reads it when the event is of the lane followed, else None (the
        lane noted). A sub-agent's thread status is its lane's own status; the session's end ends every lane."""
        thread = value.get("session_thread_id")
        lane = thread if type(thread) is str and thread else None
        wanted = self._thread
        if kind in _THREAD_STATUS or kind == "session.thread_created":
            if lane is not None:
                self.saw_lane(lane, "thread", frame)
            if lane is not None and lane == wanted and kind in _THREAD_STATUS:
                return _THREAD_STATUS[kind]
            if lane is not None and lane != wanted:
                self._others.setdefault(lane, frame)
            return None
        if kind in _SESSION_ENDS:
            return kind
        if wanted is not None and (kind.startswith(("session.status_", "span.")) or kind in PREVIEW_TYPES):
            return None  # the primary thread's own status, requests and previews
        self.saw_lane(PRIMARY if lane is None else lane, "thread", frame)
        if lane != wanted:
            self._others.setdefault(lane, frame)
            return None
        self.followed_lane = PRIMARY if lane is None else lane
        return kind

    @property
    def _thread(self) -> str | None:
        """The thread folded: the primary thread's events name none (the lane `primary`, the default)."""
        return None if self.lane in (None, PRIMARY) else self.lane

    def _block(self, kind: str, frame: int) -> None:
        self.merger.replace((_CHOICE, "block", self._blocks), {"type": kind, "index": self._blocks}, frame)
        self._blocks += 1

    # -- event handlers -------------------------------------------------------------------

    def _message(self, value: dict[str, Any], frame: int) -> None:
        self.merger.set_once((_CHOICE, "role"), "assistant", frame)
        pieces, redacted = texts(value.get("content"))
        text = "".join(pieces)
        if text:
            self._content.add(text, frame)
            self._block("text", frame)
        for _ in range(redacted):
            self._block("redacted", frame)
        self._reconcile(value.get("id"), text, frame)

    def _thinking(self, value: dict[str, Any], frame: int) -> None:
        # A progress signal, not a content carrier: a block of its own, and no reasoning text.
        self.merger.set_once((_CHOICE, "role"), "assistant", frame)
        self._block("thinking", frame)
        self._reconcile(value.get("id"), "", frame)

    def _tool_use(self, value: dict[str, Any], frame: int) -> None:
        merger, key = self.merger, self._calls
        self._calls += 1
        merger.set_once((_CHOICE, "role"), "assistant", frame)
        merger.set_once((_CHOICE, "tool", key, "id"), value.get("id"), frame)
        merger.set_once((_CHOICE, "tool", key, "name"), value.get("name"), frame)
        arguments = value.get("input")
        if type(arguments) is not dict:
            self.wrong_type(arguments, frame, f"the input of {value['type']} {value.get('id')}", "an object",
                            "kept as it came")
        merger.append_whole((_CHOICE, "tool", key, "arguments"),
                            arguments if type(arguments) is str else dumps_arguments(arguments), frame)
        self._block(_TOOL_USES[value["type"]], frame)

    def _preview_start(self, value: dict[str, Any], frame: int) -> None:
        event = value.get("event")
        ident = event.get("id") if type(event) is dict else None
        if type(ident) is str and ident not in self._previews:
            self._previews[ident] = Preview(str(event.get("type")), frame)  # type: ignore[union-attr]

    def _preview_delta(self, value: dict[str, Any], frame: int) -> None:
        ident, delta = value.get("event_id"), value.get("delta")
        if type(ident) is not str or type(delta) is not dict:
            return
        preview = self._previews.get(ident)
        if preview is None:  # a delta whose start never came: the delta opens it
            preview = self._previews[ident] = Preview("agent.message", frame)
        content = delta.get("content")
        text = content.get("text") if type(content) is dict else None
        if type(text) is str and text and preview.state is None:
            index = delta.get("index")
            preview.add(index if type(index) is int else 0, text, frame)

    def _reconcile(self, ident: object, text: str, frame: int) -> None:
        """The buffered event concludes its preview: the preview's text is not counted again."""
        preview = self._previews.get(ident) if type(ident) is str else None
        if preview is None or preview.state is not None:
            return
        preview.state = "reconciled"
        shown = preview.text()
        if not text.startswith(shown):
            self.report.diagnostic(
                "agents-preview-differs", frame,
                f"the preview of {preview.kind} {ident} (from frame {preview.frame}) showed {compact_json(shown, 80)}, "
                f"which the event itself (frame {frame}) does not begin with: a client that showed the deltas "
                "showed other words; the event's content is the reply's", event_id=ident)

    def _request_end(self, value: dict[str, Any], frame: int) -> None:
        if type(value.get("model_usage")) is dict:
            add_usage(self._usage, value["model_usage"])
            self.merger.replace(("usage",), dict(self._usage), frame)
        for ident, preview in self._previews.items():
            if preview.state is None:  # the request ended without the event: the server closed the preview
                preview.state = "abandoned"
                self._abandoned[ident] = preview.text()
                self.report.diagnostic(
                    "agents-preview-unreconciled", preview.frame,
                    f"the preview of {preview.kind} {ident} (opened at frame {preview.frame}) was closed by the end of "
                    f"its model request (frame {frame}{', an error' if value.get('is_error') else ''}) without the "
                    f"event itself: the server dropped it (an error or an interrupt mid-event); its "
                    f"{len(self._abandoned[ident])} characters of preview text are not the reply's",
                    event_id=ident, abandoned=True)

    def _running(self, value: dict[str, Any], frame: int) -> None:
        if self._paused is not None:
            self._paused = None
            self.finish_reply(False)

    def _idle(self, value: dict[str, Any], frame: int) -> None:
        if not self._started:
            return  # the session was idle when the stream opened: no turn has begun
        stop = value.get("stop_reason")
        reason = stop.get("type") if type(stop) is dict else None
        if type(reason) is not str or not reason:
            self.wrong_type(reason, frame, "the idle event's stop reason type", "a string", "read as `end_turn`")
            reason = "end_turn"
        if reason == "requires_action":
            self._paused = (reason, frame)
            self.finish_reply()
            return
        self.merger.replace((_CHOICE, "finish_reason"), reason, frame)
        self._end(frame)

    def _session_end(self, value: dict[str, Any], frame: int) -> None:
        if self._paused is not None or self.merger.get((_CHOICE, "finish_reason")) is None:
            self.merger.replace((_CHOICE, "finish_reason"), _SESSION_ENDS[value["type"]], frame)
            self._paused = None
        self._end(frame)
        self.terminate(frame)

    def _end(self, frame: int) -> None:
        self._over = frame
        self.finish_reply()

    def _error(self, value: dict[str, Any], frame: int) -> None:
        error = value.get("error")
        error = error if type(error) is dict else {}
        retry = error.get("retry_status")
        retry_type = retry.get("type") if type(retry) is dict else None
        message = f"the session sent `session.error` ({error.get('type', 'no type')}): " \
                  f"{error.get('message') or 'no message'}"
        if retry_type == "retrying":
            self.report.diagnostic("agents-error-retried", frame,
                                   f"{message}; the server retries (retry status `retrying`), so the turn goes on",
                                   error_type=error.get("type"))
            return
        self.in_stream_error(frame, f"{message} (retry status {retry_type!r})", compact_json(value, 2000))

    def _snapshot(self, value: dict[str, Any], frame: int) -> None:
        self._session_usage = value.get("usage")

    def _updated(self, value: dict[str, Any], frame: int) -> None:
        agent = value.get("agent")
        model = agent.get("model") if type(agent) is dict else None
        if type(model) is dict and type(model.get("id")) is str:
            self.merger.set_once(("model",), model["id"], frame)

    # -- end of stream --------------------------------------------------------------------

    def finish(self, last_frame: int) -> None:
        super().finish(last_frame)
        if self._paused is not None:
            self.merger.replace((_CHOICE, "finish_reason"), *self._paused)
        for ident, preview in self._previews.items():
            if preview.state is None:
                self._cut_preview(ident, preview)
        if self._others:
            named = ", ".join(f"{'the primary thread' if lane is None else lane} (from frame {at})"
                              for lane, at in list(self._others.items())[:10])
            self.report.diagnostic(
                "agents-other-lanes", min(self._others.values()),
                f"the stream holds {len(self._others)} thread(s) besides the one folded "
                f"({'the primary thread' if self._thread is None else self._thread}): {named}; their events are listed "
                "as frames but not folded", lanes=list(self._others))
        if self._after is not None:
            self.report.diagnostic(
                "agents-later-turns", self._after[0],
                f"the first turn ended at frame {self._over}; the session goes on from frame {self._after[0]} "
                f"({self._after[1]} event(s) of the user, the agent or its model requests): later turns, listed as "
                "frames, not folded")

    def _cut_preview(self, ident: str, preview: Preview) -> None:
        """A preview the stream never concluded: the stream was cut mid-event. Its text is the last the
        client saw of the reply, so it closes the content (provenance: the deltas' frames)."""
        for piece, frame in preview.pieces():
            self._content.add(piece, frame)
        shown = preview.text()
        if shown:
            self._cut[ident] = shown
        self.report.diagnostic(
            "agents-preview-unreconciled", preview.frame,
            f"the stream was cut mid-event: frame {preview.frame} opened a preview of {preview.kind} {ident}, and "
            f"neither that event nor the end of its model request came"
            + (f"; its {len(shown)} characters of preview text close the content" if shown else ""),
            event_id=ident, abandoned=False)

    def normalise_finish(self, raw: str, has_tool_calls: bool) -> str:
        # The harness ran the agent's tools within the turn: `end_turn` after tool uses is a stop, not a
        # request for the client to run them (that is `requires_action`).
        return self.finish_reasons.get(raw, OTHER)

    def normalise_usage(self, raw: object) -> dict[str, Any] | None:
        return messages_usage(raw)

    def native(self) -> dict[str, Any] | None:
        """The folded turn's buffered events (the events list page the export gives), the last session
        usage snapshot, the preview text the server dropped and that of a message the stream was cut in,
        the lane followed and the other lanes (thread ids, or "primary"). (No frame numbers: a keep-alive
        comment the replay server adds moves them, and the native part of a reply must not change.)"""
        out: dict[str, Any] = {"events": self._events}
        if self._session_usage is not None:
            out["session_usage"] = self._session_usage
        if self._abandoned:
            out["abandoned_previews"] = dict(self._abandoned)
        if self._cut:
            out["cut_previews"] = dict(self._cut)
        if self._thread is not None:
            out["lane"] = self._thread
        if self._others:
            out["other_lanes"] = [PRIMARY if lane is None else lane for lane in self._others]
        return out
