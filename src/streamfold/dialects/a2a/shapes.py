"""The stream events of both A2A versions, read alike.

A2A 0.3 (JSON-RPC `message/stream`) sends `result` objects told apart by `kind` (`task`,
`message`, `status-update`, `artifact-update`), states in kebab case (`input-required`), roles
`agent`/`user`, parts `{"kind": "text", "text": ...}`, and `final: true` on the last status update.
A2A 1.0 (`SendStreamingMessage`, the a2a-sdk 1.x ProtoJSON) sends a `StreamResponse`: one of
`task`, `message`, `statusUpdate`, `artifactUpdate`, states `TASK_STATE_*`, roles `ROLE_*`, parts
`{"text": ...}`, and no `final`: the stream ends at a terminal or interrupted state.
"""

from __future__ import annotations

from typing import Any

__all__ = ["KINDS", "V1_KEYS", "event_of", "is_agent", "state_name", "texts", "well_typed"]

KINDS = ("task", "message", "status-update", "artifact-update")
#: A 1.0 StreamResponse's one key -> the 0.3 kind it stands for.
V1_KEYS = {"task": "task", "message": "message", "statusUpdate": "status-update", "artifactUpdate": "artifact-update"}
#: What each kind must hold (0.3 and 1.0 share the camelCase names).
_REQUIRED = {"task": ("id", "status"), "message": ("messageId", "parts", "role"),
             "status-update": ("taskId", "status"), "artifact-update": ("taskId", "artifact")}


def event_of(value: object) -> tuple[str, str, dict[str, Any]] | None:
    """(version "0.3" or "1.0", kind, body) of a JSON-RPC response's `result`, or of a bare event;
    None when `value` is neither."""
    if type(value) is not dict:
        return None
    result = value.get("result") if value.get("jsonrpc") == "2.0" else value
    if type(result) is not dict:
        return None
    kind = result.get("kind")
    if type(kind) is str and kind in _REQUIRED:
        found: tuple[str, str, dict[str, Any]] = ("0.3", kind, result)
    elif len(result) == 1 and next(iter(result)) in V1_KEYS and type(next(iter(result.values()))) is dict:
        ((key, body),) = result.items()
        found = ("1.0", V1_KEYS[key], body)
    else:
        return None
    return found if all(key in found[2] for key in _REQUIRED[found[1]]) else None


def well_typed(body: dict[str, Any]) -> bool:
    """Its `status` and `artifact`, where it has them, are objects (an MCP task's `status` is a string):
    detection asks this; the fold reports a wrong type instead."""
    return all(type(body[key]) is dict for key in ("status", "artifact") if key in body)


def state_name(status: object) -> str | None:
    """A status's state as 0.3 names it (`TASK_STATE_INPUT_REQUIRED` is `input-required`)."""
    state = status.get("state") if type(status) is dict else None
    if type(state) is not str:
        return None
    if state.startswith("TASK_STATE_"):
        return state[len("TASK_STATE_"):].lower().replace("_", "-")
    return state


def is_agent(message: object) -> bool:
    return type(message) is dict and message.get("role") in ("agent", "ROLE_AGENT")


def texts(parts: object) -> list[str]:
    """The text of a parts list's text parts (0.3 `kind: text`, 1.0 a part with `text`)."""
    out = []
    for part in parts if type(parts) is list else ():
        if type(part) is dict and type(part.get("text")) is str and part.get("kind", "text") == "text":
            out.append(part["text"])
    return out
