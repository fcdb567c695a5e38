"""The conversation an AG-UI stream builds, as the protocol's own `Message` objects, and the export.

Strategy. Messages are kept in the order they first appear, as the TypeScript client's
`defaultApplyEvents` keeps them: a text message is an assistant (or its start's role) message;
a tool call joins the assistant message its `parentMessageId` names when that is the last
message, else it opens an assistant message of its own (id: the parent's, else the call's);
a `TOOL_CALL_RESULT` is a `tool` message; a reasoning message is a `reasoning` message. A
`MESSAGES_SNAPSHOT` reconciles by id: a message it holds replaces the one kept, in place, and a
new one is added at the end. Text is kept as pieces and joined once, at the end.

The export is what a client holds when the run is over: `{threadId, runId, messages, state}`,
the messages valid `ag_ui.core.Message`s and the state the final one (every patch applied); the
run's `outcome` when it finished (`{"type": "success"}` when RUN_FINISHED gave none), RUN_ERROR's
`error` (`{message, code}`) when it failed, and its token `usage` when it sent them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._base import compact_json

if TYPE_CHECKING:
    from ...result import Result

__all__ = ["Conversation", "export_run", "read_run", "summarize_event", "this_turn"]


class Conversation:
    """The messages of the stream, by id, in order."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self._by_id: dict[str, dict[str, Any]] = {}
        self._pieces: dict[str, list[str]] = {}
        #: call id -> its `function` object, whose `arguments` are the pieces (a list) until `build` joins them.
        self._calls: dict[str, dict[str, Any]] = {}

    def message(self, message_id: str, role: str) -> dict[str, Any]:
        """The message with this id, opened with `role` if it is new."""
        found = self._by_id.get(message_id)
        if found is None:
            found = {"id": message_id, "role": role}
            self._add(found)
        return found

    def _add(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        self._by_id[message["id"]] = message

    def text(self, message_id: str, role: str, delta: str) -> object:
        """Add `delta` to the message (opened with `role` if it is new); return the message's role
        (`role` when it has none: a MESSAGES_SNAPSHOT may hold it without one)."""
        message = self.message(message_id, role)
        self._pieces.setdefault(message_id, []).append(delta)
        return message.get("role", role)

    def pieces(self, message_id: str) -> list[str]:
        """The text of a message so far, as the pieces `text` appended (the list itself: appending to it
        is `text` without the lookups)."""
        return self._pieces.setdefault(message_id, [])

    def tool_call(self, call_id: str, name: str | None, parent: str | None) -> None:
        last = self.messages[-1] if self.messages else None
        if parent is not None and last is not None and last["id"] == parent and last.get("role") == "assistant":
            owner = last
        else:
            owner = self.message(parent if parent is not None else call_id, "assistant")
        function: dict[str, Any] = {"name": name or "", "arguments": ""}
        if type(owner.get("toolCalls")) is not list:
            owner["toolCalls"] = []  # (a snapshot may have put anything there)
        owner["toolCalls"].append({"id": call_id, "type": "function", "function": function})
        self._calls[call_id] = function

    def arguments(self, call_id: str, delta: str) -> None:
        function = self._calls.get(call_id)
        if function is not None:
            pieces = function["arguments"]
            if type(pieces) is str:
                pieces = function["arguments"] = []
            pieces.append(delta)

    def tool_result(self, message_id: str, call_id: str, content: object, error: object = None) -> None:
        message = self.message(message_id, "tool")
        message["toolCallId"] = call_id
        message["content"] = content if isinstance(content, str) else compact_json(content, 1 << 30)
        if isinstance(error, str):
            message["error"] = error

    def snapshot(self, messages: list[Any]) -> None:
        """MESSAGES_SNAPSHOT: each message replaces the one with its id in place, or joins at the end."""
        for message in messages:
            if not isinstance(message, dict) or not isinstance(message.get("id"), str):
                continue
            kept = self._by_id.get(message["id"])
            self._pieces.pop(message["id"], None)
            if kept is None:
                self._add(dict(message))
            else:
                kept.clear()
                kept.update(message)

    def build(self) -> list[dict[str, Any]]:
        """The messages with their text and arguments joined (JSON values, for the native snapshot)."""
        for function in self._calls.values():
            if type(function["arguments"]) is list:
                function["arguments"] = "".join(function["arguments"])
        for message_id, pieces in self._pieces.items():
            self._by_id[message_id]["content"] = "".join(pieces)
        for message in self.messages:
            if message.get("role") in ("user", "system", "developer", "reasoning") and "content" not in message:
                message["content"] = ""
        return self.messages


def export_run(result: Result) -> dict[str, Any]:
    """The run as a client holds it at the end: its thread and run ids, its messages, its final state."""
    native = result.native or {}
    exported: dict[str, Any] = {"threadId": native.get("thread_id"), "runId": native.get("run_id"),
                                "messages": native.get("messages", []), "state": native.get("state")}
    choice = result.choice(0)
    if native.get("outcome") is not None:
        exported["outcome"] = native["outcome"]
    elif choice is not None and choice.finish_reason_raw is not None:
        exported["outcome"] = {"type": choice.finish_reason_raw}  # RUN_FINISHED without one: a success
    if native.get("error") is not None:
        exported["error"] = native["error"]  # RUN_ERROR's message and code
    if result.usage is not None:
        exported["usage"] = result.usage.raw  # RUN_FINISHED's (or RUN_ERROR's) token usages
    return exported


def this_turn(messages: list[Any]) -> list[dict[str, Any]]:
    """The messages after the last user message: the agent's reply to it (all of them when none is a user's)."""
    turn: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, dict):
            turn = [] if message.get("role") == "user" else [*turn, message]
    return turn


def read_run(value: object) -> dict[str, Any] | None:
    """The facts of an exported run (`{threadId, runId, messages, state}`): the text, reasoning and tool calls
    of the messages after the last user message (the turn the run answered)."""
    if not (isinstance(value, dict) and "runId" in value and isinstance(value.get("messages"), list)
            and "state" in value):
        return None
    texts: dict[str, list[str]] = {"assistant": [], "reasoning": []}
    calls, ids = [], []
    for message in this_turn(value["messages"]):
        role, content = message.get("role"), message.get("content")
        if type(role) is str and role in texts and isinstance(content, str) and content:
            texts[role].append(content)
        listed = message.get("toolCalls")
        for call in listed if role == "assistant" and isinstance(listed, list) else ():
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict):
                function = {}
            calls.append((function.get("name"), function.get("arguments", "")))
            ids.append(call.get("id") if isinstance(call, dict) else None)
    # How the run ended: its RUN_ERROR, its outcome; a run that says neither never finished.
    outcome = value.get("outcome")
    finish = "error" if isinstance(value.get("error"), dict) else \
        outcome.get("type", "success") if isinstance(outcome, dict) else None
    return {"content": "\n\n".join(texts["assistant"]), "reasoning": "\n\n".join(texts["reasoning"]) or None,
            "tool_calls": calls, "tool_call_ids": ids, "usage": value.get("usage"), "finish_reason": finish}


def summarize_event(value: object) -> str:
    """One line for a frame: the event type and what it carries."""
    if not isinstance(value, dict):
        return compact_json(value)
    kind = value.get("type")
    detail: list[str] = []
    # The ids and names alone, short enough for a narrow frames table: "TOOL_CALL_START call_1 get_weather".
    for key in ("messageId", "toolCallId", "toolCallName", "stepName", "name", "runId"):
        if isinstance(value.get(key), str):
            detail.append(value[key])
    if isinstance(value.get("delta"), str):
        detail.append(compact_json(value["delta"], 80))
    elif kind == "STATE_DELTA":
        operations = value.get("delta")
        detail.append(f"{len(operations) if isinstance(operations, list) else 0} operation(s)")
    if kind == "RUN_ERROR":
        detail.append(compact_json(value.get("message"), 100))
    return f"{kind} " + " ".join(detail) if detail else str(kind)
