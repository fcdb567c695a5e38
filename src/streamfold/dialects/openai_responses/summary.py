"""The one-line description of a Responses stream event (the frames table)."""

from __future__ import annotations

from .._base import compact_json

__all__ = ["summarize"]


def summarize(value: object) -> str:
    """A one-line description of a Responses event, for the frames table."""
    if type(value) is not dict:
        return compact_json(value)
    kind = value.get("type")
    if type(kind) is not str:
        return compact_json(value)
    where = ""
    if "output_index" in value:
        where = f" [{value.get('output_index')}"
        for key in ("content_index", "summary_index", "command_index"):
            if key in value:
                where += f":{value.get(key)}"
        where += "]"
    head = f"{kind.removeprefix('response.')}{where}"
    agent = value.get("agent")
    name = agent.get("agent_name") if type(agent) is dict else None
    if type(name) is str and name:  # a multi-agent response: whose event it is
        head += f" {name[:60]}"
    # The final values of built-in tool fields: custom tool `input`, code, an apply_patch `diff`, a shell `command`
    # (an `error` event's `code` is its error code).
    keys = ("delta", "text", "arguments", "refusal") + (() if kind == "error" else ("input", "code", "diff", "command"))
    for key in keys:
        if type(value.get(key)) is str:
            return f"{head} {compact_json(value[key], 80)}"
    delta = value.get("delta")
    if type(delta) is dict:  # shell output: stdout and stderr
        return f"{head} " + " ".join(f"{k} {compact_json(v, 60)}" for k, v in delta.items() if v is not None)
    image = value.get("partial_image_b64")
    if type(image) is str:
        return f"{head} partial image {value.get('partial_image_index')} ({len(image)} base64 chars)"
    item = value.get("item")
    if type(item) is dict:
        bits = [str(item.get(k)) for k in ("type", "action", "name", "call_id", "id") if item.get(k)]
        return f"{head} {' '.join(bits)}"
    if kind == "error":
        return f"error {value.get('code') or ''}: {compact_json(value.get('message'), 100)}".replace(" : ", ": ")
    response = value.get("response")
    if type(response) is dict:
        bits = [str(response.get("status") or "")]
        details = response.get("incomplete_details")
        if type(details) is dict and details.get("reason"):
            bits.append(str(details["reason"]))
        error = response.get("error")
        if type(error) is dict:
            bits.append(f"error {error.get('code') or ''}: {compact_json(error.get('message'), 80)}")
        if response.get("usage"):
            bits.append("usage")
        return f"{head} {' '.join(b for b in bits if b)}".rstrip()
    annotation = value.get("annotation")
    if type(annotation) is dict:
        return f"{head} annotation {value.get('annotation_index')} {annotation.get('type')}"
    return head
