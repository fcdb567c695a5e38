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
        for key in ("content_index", "summary_index"):
            if key in value:
                where += f":{value.get(key)}"
        where += "]"
    head = f"{kind.removeprefix('response.')}{where}"
    for key in ("delta", "text", "arguments", "refusal"):
        if type(value.get(key)) is str:
            return f"{head} {compact_json(value[key], 80)}"
    item = value.get("item")
    if type(item) is dict:
        bits = [str(item.get(k)) for k in ("type", "name", "call_id", "id") if item.get(k)]
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
