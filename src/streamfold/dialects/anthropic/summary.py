"""The one-line description of each Anthropic event in the frames table."""

from __future__ import annotations

from .._base import compact_json

__all__ = ["summarize"]


def summarize(value: object) -> str:
    """A one-line description of an Anthropic event, for the frames table."""
    if type(value) is not dict:
        return compact_json(value)
    kind = value.get("type")
    if kind == "content_block_delta":
        delta = value.get("delta")
        index = value.get("index")
        if type(delta) is dict:
            delta_type = delta.get("type")
            for name, label in (("text", "text"), ("thinking", "thinking"), ("partial_json", "input"),
                                ("signature", "signature")):
                if name in delta:
                    return f"[{index}] {label} {compact_json(delta[name], 80)}"
            if delta_type == "compaction_delta":
                parts = [f"[{index}] compaction"]
                if delta.get("content") is not None:
                    parts.append(compact_json(delta["content"], 80))
                if delta.get("encrypted_content") is not None:
                    parts.append(f"encrypted_content ({len(str(delta['encrypted_content']))} chars)")
                return " ".join(parts)
            if delta_type == "citations_delta":
                citation = delta.get("citation")
                cited = citation.get("cited_text") if type(citation) is dict else None
                return f"[{index}] citation {compact_json(cited, 80)}"
            return f"[{index}] {delta_type}"
        return f"[{index}] delta"
    if kind == "content_block_start":
        block = value.get("content_block")
        index = value.get("index")
        if type(block) is dict:
            label = " ".join(str(block[k]) for k in ("name", "id") if block.get(k))
            return f"[{index}] start {block.get('type')}" + (f" {label}" if label else "")
        return f"[{index}] start"
    if kind == "content_block_stop":
        return f"[{value.get('index')}] stop"
    if kind == "message_start":
        message = value.get("message")
        if type(message) is dict:
            return f"message_start {message.get('id')} {message.get('model')}"
        return "message_start"
    if kind == "message_delta":
        delta = value.get("delta")
        parts = ["message_delta"]
        if type(delta) is dict and delta.get("stop_reason"):
            parts.append(f"stop_reason {delta['stop_reason']}")
        usage = value.get("usage")
        if type(usage) is dict:
            parts.append("usage " + ", ".join(f"{k} {v}" for k, v in usage.items() if type(v) is int))
        return ", ".join(parts)
    if kind == "error":
        error = value.get("error")
        if type(error) is dict:
            return f"error {error.get('type')}: {compact_json(error.get('message'), 100)}"
        return f"error {compact_json(error, 100)}"
    if type(kind) is str:
        return kind
    return compact_json(value)
