"""Mistral's Conversations API stream (`POST /v1/conversations`, `/v1/conversations/{id}` and
`/v1/conversations/{id}/restart`, `stream: true`), dialect `mistral-conversations`.

SSE, each frame `event: TYPE` with `{"type": TYPE, ...}` (mistralai `models/conversationevents.py`,
`ConversationEvents`; the SDK's union is read at test time, so a new event fails a test):

- `conversation.response.started {conversation_id}`: the conversation's id is the Result's id;
- `message.output.delta {id, content, agent_id, model, output_index, content_index}`: `content` is a
  string (APPEND to the reply) or ONE chunk: `text` (APPEND), `thinking` (its text chunks APPEND to the
  reasoning), `tool_reference` / `tool_file` / `image_url` / `document_url` (kept whole, in order, for the
  export: the web search's sources are references, not text);
- `function.call.delta {id, tool_call_id, name, arguments}`: the client's function calls, keyed by
  `tool_call_id`, arguments APPENDed and PARSE-AT-END;
- `tool.execution.started/delta/done {id, name, arguments, info}`: a tool Mistral runs itself
  (`web_search`, `code_interpreter`, `image_generation`, `document_library`): a block of its own,
  never a tool call the client would run; its arguments and `info` are kept for the export;
- `agent.handoff.started {previous_agent_id}` / `.done {next_agent_id}`: the conversation passes to
  another agent. Each agent is a lane (below);
- `conversation.response.done {usage}` is the end (the finish reason is this event's type: the API
  sends none), `conversation.response.error {message, code}` an in-stream error.

Lanes. The lane of an output is its `agent_id`; function calls and tool executions carry none and
belong to the agent in control (the last `agent_id` seen, or the last hand-off's `next_agent_id`).
`fold(..., lane=AGENT_ID)` names the agent followed; by default the first agent that outputs anything:
a hand-off agent that routes without a word leaves nothing to read, and the fold, being incremental,
cannot wait for the last one. The agents are the Result's lanes (a hand-off names both of its agents);
the other agents' outputs are not folded: one `mistral-other-agents` finding names them with their first
output's frame, and the export's `lanes`.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from ...findings import Report, Severity
from ...framing import FrameView
from ...merge import Merger
from .._base import STOP, Dialect, End, compact_json, event_type

__all__ = ["EVENT_TYPES", "MistralConversations"]

_DONE, _ERROR, _STARTED = "conversation.response.done", "conversation.response.error", "conversation.response.started"
_TOOL_EXECUTION = ("tool.execution.started", "tool.execution.delta", "tool.execution.done")
_HANDOFF = ("agent.handoff.started", "agent.handoff.done")
#: mistralai `models/ssetypes.py` `SSETypes`.
EVENT_TYPES = frozenset({_STARTED, _DONE, _ERROR, "message.output.delta", "function.call.delta",
                         *_TOOL_EXECUTION, *_HANDOFF})
#: The chunk types a message carries whole (mistralai `OutputContentChunks` less text and thinking).
_WHOLE_CHUNKS = frozenset({"tool_reference", "tool_file", "image_url", "document_url"})
#: The lane of outputs before any names its agent: a model conversation has no agent at all.
_NO_AGENT = ""


class MistralConversations(Dialect):
    name = "mistral-conversations"
    terminal_hint = "`conversation.response.done`"
    #: The API sends no finish reason: the end event's type stands for it (a STOP with calls is tool_calls).
    finish_reasons: ClassVar[dict[str, str]] = {_DONE: STOP}
    done_is_terminal = False  # a gateway's `[DONE]` says nothing of the conversation

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self._content = self.merger.buffer((0, "content"))
        self._reasoning = self.merger.buffer((0, "reasoning"))
        #: The agent in control: the lane of the events that name none.
        self._current = _NO_AGENT
        #: The other lanes, by the frame of their first output.
        self._others: dict[str, int] = {}
        #: The followed lane's output entries in stream order, by (type, entry id): what the export rebuilds.
        self._entries: dict[tuple[str, str], dict[str, Any]] = {}
        #: tool_call_id -> the call's key among the tool calls.
        self._calls: dict[str, int] = {}
        self._blocks = 0

    @classmethod
    def claims(cls, value: object) -> bool:
        return event_type(value) in EVENT_TYPES

    def fold(self, value: object, frame: int) -> None:
        if type(value) is not dict:
            self._unexpected(f"expected a JSON object, got {type(value).__name__}; ignored", frame, "not-object")
            return
        kind = event_type(value)
        if "type" not in value:  # the SDK's types make `type` optional: the `event:` line then names it
            kind = self.event_name(frame)
        if kind == "message.output.delta":
            self._message(value, frame)
        elif kind == "function.call.delta":
            self._function_call(value, frame)
        elif kind in _TOOL_EXECUTION:
            self._tool_execution(kind, value, frame)
        elif kind in _HANDOFF:
            self._handoff(kind, value, frame)
        elif kind == _STARTED:
            self.merger.set_once(("id",), self.string(value.get("conversation_id"), frame, "the conversation id"),
                                 frame)
        elif kind == _DONE:
            self._done(value, frame)
        elif kind == _ERROR:
            message = value.get("message")
            code = value.get("code")
            self.in_stream_error(frame, f"Mistral conversation error{f' {code}' if code is not None else ''}: "
                                        f"{message if type(message) is str else compact_json(value, 200)}",
                                 raw=json.dumps(value, ensure_ascii=False)[:2000])
            self.terminate(frame)
        else:
            self._unexpected(f"an event of unknown type {kind!r}; ignored", frame, kind)

    # -- lanes -----------------------------------------------------------------

    def _follows(self, agent: object, frame: int) -> bool:
        """Whether an output of `agent` (None: of the agent in control) is the followed lane's; the first
        output of another lane is remembered for the finding."""
        if type(agent) is str and agent and self._current == _NO_AGENT:
            self._named(agent)
        lane = agent if type(agent) is str and agent else self._current
        self._current = lane
        if lane:
            self.saw_lane(lane, "agent", frame)
        if self.follows(lane):  # ("": no agent named yet, or a model conversation, which has no lanes)
            return True
        self._others.setdefault(lane, frame)
        return False

    def _named(self, agent: str) -> None:
        """The agent in control from the start is named: the outputs that came before without a name (tool
        executions, function calls) were its own, so the lane they opened is its lane."""
        self._current = agent
        if self.followed_lane == _NO_AGENT:
            self.followed_lane = agent

    # -- outputs ---------------------------------------------------------------

    def _entry(self, kind: str, entry_id: object, frame: int, **fields: Any) -> dict[str, Any]:
        """The followed lane's output entry (opened at its first event), its block REPLACEd so it spans its events."""
        key = (kind, entry_id if type(entry_id) is str else f"#{len(self._entries)}")
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = {"type": kind, "id": key[1], "block": self._blocks, **fields}
            self._blocks += 1
        block = {"type": {"message.output": "text", "function.call": "tool_call"}.get(kind, "tool_execution")}
        self.merger.replace((0, "block", entry["block"]), block, frame)
        return entry

    def _message(self, value: dict[str, Any], frame: int) -> None:
        if not self._follows(value.get("agent_id"), frame):
            return
        self.merger.set_once((0, "role"), "assistant", frame)
        if type(value.get("model")) is str:
            self.merger.replace(("model",), value["model"], frame)
        entry = self._entry("message.output", value.get("id"), frame, agent_id=value.get("agent_id"),
                            model=value.get("model"), content=[])
        content = value.get("content")
        parts: list[Any] = entry["content"]
        if type(content) is str:
            self._text(parts, "text", self._content, content, frame)
        elif type(content) is dict and content.get("type", "text") == "text":
            self._text(parts, "text", self._content, content.get("text"), frame)
        elif type(content) is dict and content.get("type") == "thinking":
            thinking = content.get("thinking")
            for piece in thinking if type(thinking) is list else ():
                if type(piece) is dict and piece.get("type", "text") == "text":
                    self._text(parts, "thinking", self._reasoning, piece.get("text"), frame)
        elif event_type(content) in _WHOLE_CHUNKS:
            parts.append(content)
        else:
            self._unexpected(f"a message delta whose content is {compact_json(content, 80)}; ignored", frame,
                             "content")

    def _text(self, parts: list[Any], kind: str, buffer: Any, text: object, frame: int) -> None:
        """APPEND `text` to the reply or the reasoning, and to the entry's last part of that kind as a span."""
        if type(text) is not str:
            self.wrong_type(text, frame, "a message delta's text", "a string")
            return
        if not text:
            return
        start = buffer.length
        buffer.add(text, frame)
        if parts and type(parts[-1]) is list and parts[-1][0] == kind and parts[-1][2] == start:
            parts[-1][2] = buffer.length
        else:
            parts.append([kind, start, buffer.length])

    def _function_call(self, value: dict[str, Any], frame: int) -> None:
        if not self._follows(None, frame):
            return
        call_id = value.get("tool_call_id") if type(value.get("tool_call_id")) is str else value.get("id")
        if type(call_id) is not str:
            self._unexpected("a function call delta without a `tool_call_id`; ignored", frame, "call-id")
            return
        key = self._calls.setdefault(call_id, len(self._calls))
        self._entry("function.call", value.get("id"), frame, tool_call_id=call_id, call=key)
        self.merger.set_once((0, "role"), "assistant", frame)
        self.merger.set_once((0, "tool", key, "id"), call_id, frame)
        self.merger.set_once((0, "tool", key, "name"), value.get("name"), frame)
        self.merger.append((0, "tool", key, "arguments"), value.get("arguments"), frame)

    def _tool_execution(self, kind: str, value: dict[str, Any], frame: int) -> None:
        if not self._follows(None, frame):
            return
        entry = self._entry("tool.execution", value.get("id"), frame, name=value.get("name"), arguments="")
        arguments = value.get("arguments")
        if type(arguments) is str and kind != "tool.execution.done":
            entry["arguments"] += arguments
        if type(value.get("info")) is dict:
            entry["info"] = value["info"]
        if kind == "tool.execution.done":
            entry["done"] = True

    def _handoff(self, kind: str, value: dict[str, Any], frame: int) -> None:
        """A hand-off is an entry of the conversation, whichever lane is followed: kept where it came."""
        handoff_id = value.get("id")
        key = ("agent.handoff", handoff_id if type(handoff_id) is str else "#handoff")
        handoff = self._entries.setdefault(key, {"type": "agent.handoff", "id": key[1]})
        handoff.update((name, value[name]) for name in ("previous_agent_id", "previous_agent_name", "next_agent_id",
                                                         "next_agent_name") if type(value.get(name)) is str)
        for name in ("previous_agent_id", "next_agent_id"):
            if type(value.get(name)) is str and value[name]:
                self.saw_lane(value[name], "agent", frame)
        if kind == "agent.handoff.done" and type(value.get("next_agent_id")) is str:
            self._current = value["next_agent_id"]
        elif kind == "agent.handoff.started" and type(value.get("previous_agent_id")) is str and \
                self._current == _NO_AGENT:
            self._named(value["previous_agent_id"])

    # -- the end ---------------------------------------------------------------

    def _done(self, value: dict[str, Any], frame: int) -> None:
        usage = value.get("usage")
        if type(usage) is dict:
            self.merger.replace(("usage",), usage, frame)
        self.merger.replace((0, "finish_reason"), _DONE, frame)
        for key in self._calls.values():
            self.check_arguments(0, key, frame)
        self.terminate(frame)

    def finish(self, last_frame: int) -> None:
        super().finish(last_frame)
        if self.end is not End.TERMINATED:
            for key in self._calls.values():
                self.check_arguments(0, key, last_frame)
        if self._others and self.followed_lane is not None:  # else `lane-not-found` lists them
            named = ", ".join(f"{lane or '(no agent)'} (from frame {at})" for lane, at in self._others.items())
            self.report.diagnostic(
                "mistral-other-agents", min(self._others.values()),
                f"the conversation was handed to {len(self._others)} more agent(s) than "
                f"{self.followed_lane or '(no agent)'!r}, {'the one asked for' if self.lane else 'the first'}, "
                f"which is the one folded: {named}; their outputs are listed as frames but not folded (`--lane ID` "
                "folds another)", lanes=list(self._others))

    def _unexpected(self, message: str, frame: int, once: object) -> None:
        self.report.diagnostic("unexpected-payload", frame, message, severity=Severity.INFO,
                               once=("mistral-conversations", once))

    def normalise_usage(self, raw: object) -> dict[str, Any] | None:
        if type(raw) is not dict:
            return None
        return {"input_tokens": raw.get("prompt_tokens"), "output_tokens": raw.get("completion_tokens"),
                "reasoning_tokens": None, "cache_read_tokens": None, "total_tokens": raw.get("total_tokens")}

    def native(self) -> dict[str, Any] | None:
        """The followed lane's output entries in order (a message's text parts as spans of the reply or the
        reasoning, its other chunks whole), the hand-offs where they came, and the lanes."""
        out: dict[str, Any] = {"entries": list(self._entries.values())}
        if self.followed_lane is not None:
            # (Their frames are the finding's: a keep-alive more would change the export.)
            out["lanes"] = {"followed": self.followed_lane, "others": list(self._others)}
        return out
