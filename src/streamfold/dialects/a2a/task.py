"""The object an A2A stream stands for, from the Result alone (its `native` snapshot): the final
Task (its last status, the history an A2A server keeps, the artifacts as their chunks built them),
or, for a stream that answered with a Message, that Message; in the stream's A2A version. The
reverse (`read_reply`) reads a Task or Message, bare or as a JSON-RPC `result`. And the frames-table
summaries."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._base import compact_json
from .shapes import event_of, is_agent, state_name, texts

if TYPE_CHECKING:
    from ...result import Result

__all__ = ["export_reply", "read_reply", "summarize_event"]

_STATES = frozenset({"submitted", "working", "input-required", "completed", "canceled", "failed", "rejected",
                     "auth-required", "unknown", "unspecified"})


def export_reply(result: Result) -> dict[str, Any]:
    """A Task: `{kind?, id, contextId, status, artifacts, history?, metadata?}` (`kind` in 0.3 only);
    a Message reply as it came."""
    native = result.native if type(result.native) is dict else {}
    task = native.get("task") or {}
    messages = native.get("messages") or []
    if task.get("status") is None and messages:
        return dict(messages[-1])
    out: dict[str, Any] = {"kind": "task"} if native.get("version") == "0.3" else {}
    out["id"] = result.id or ""
    if task.get("contextId") is not None:
        out["contextId"] = task["contextId"]
    if task.get("status") is not None:
        out["status"] = task["status"]
    out["artifacts"] = list(native.get("artifacts") or [])
    if task.get("history"):
        out["history"] = list(task["history"])
    if task.get("metadata") is not None:
        out["metadata"] = task["metadata"]
    return out


def read_reply(value: object) -> dict[str, Any] | None:
    """The facts of a Task or an agent Message (0.3 or 1.0), or None when `value` is neither."""
    if isinstance(value, dict) and value.get("jsonrpc") == "2.0" and isinstance(value.get("result"), dict):
        value = value["result"]
    if not isinstance(value, dict):
        return None
    status = value.get("status")
    if (value.get("kind") in (None, "task") and isinstance(value.get("id"), str) and isinstance(status, dict)
            and state_name(status) in _STATES and isinstance(value.get("artifacts", []), list)):
        said = [text for artifact in value.get("artifacts") or [] if isinstance(artifact, dict)
                for text in texts(artifact.get("parts"))]
        if not said and is_agent(status.get("message")):
            said = texts(status["message"].get("parts"))
        return {"content": "".join(said), "reasoning": None, "tool_calls": [],
                "finish_reason": status.get("state"), "usage": None}
    if (value.get("kind") in (None, "message") and isinstance(value.get("messageId"), str)
            and isinstance(value.get("parts"), list) and is_agent(value)):
        return {"content": "".join(texts(value["parts"])), "reasoning": None, "tool_calls": [], "usage": None}
    return None


def summarize_event(value: object) -> str:
    """`artifact-update a1 append "text"`, `status-update working final`, `task submitted`, ..."""
    found = event_of(value)
    if found is None:
        error = value.get("error") if isinstance(value, dict) else None
        if isinstance(error, dict):
            return f"error {error.get('code')} {compact_json(error.get('message'), 80)}"
        return compact_json(value)
    _, kind, body = found
    if kind == "artifact-update":
        artifact = body["artifact"] if isinstance(body["artifact"], dict) else {}
        flags = "".join(f" {flag}" for flag, key in (("append", "append"), ("last", "lastChunk")) if body.get(key))
        joined = "".join(texts(artifact.get("parts")))
        return f"artifact-update {artifact.get('artifactId')}{flags} {compact_json(joined, 80)}"
    if kind in ("status-update", "task"):
        status = body["status"]
        final = " final" if body.get("final") is True else ""
        message = status.get("message") if isinstance(status, dict) else None
        said = " ".join(texts(message.get("parts"))) if isinstance(message, dict) else ""
        return f"{kind} {state_name(status)}{final}" + (f" {compact_json(said, 60)}" if said else "")
    return f"message {body.get('role')} {compact_json(''.join(texts(body.get('parts'))), 80)}"
