"""The non-streaming `Completion` a Text Completions stream stands for, and the reverse."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...result import Result

__all__ = ["export", "read_completion"]


def export(result: Result) -> dict[str, Any]:
    """The `Completion` a non-streaming `POST /v1/complete` would have returned: `type`, `id`, `completion`,
    `stop_reason`, `model`, and what else the last event carried (`stop`, `log_id`)."""
    choice = result.choice(0)
    out: dict[str, Any] = {
        "type": "completion", "id": result.id, "completion": choice.content if choice else "",
        "stop_reason": choice.finish_reason_raw if choice else None, "model": result.model}
    if isinstance(result.native, dict):
        out.update((key, value) for key, value in result.native.items() if key not in out)
    return out


def read_completion(value: object) -> dict[str, Any] | None:
    """The facts of a non-streaming `Completion` body, or None when `value` is not one."""
    if not (type(value) is dict and value.get("type", "completion") == "completion"
            and type(value.get("completion")) is str and "stop_reason" in value):
        return None
    return {"content": value["completion"], "reasoning": None, "tool_calls": [], "tool_call_ids": [],
            "finish_reason": value.get("stop_reason"), "usage": None}
