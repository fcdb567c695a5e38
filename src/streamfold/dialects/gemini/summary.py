"""The one-line description of a Gemini chunk, for the frames table."""

from __future__ import annotations

from .._base import compact_json
from .state import PART_EXTRAS

__all__ = ["summarize"]


def summarize(value: object) -> str:
    """What a chunk carries: each part (text, thought, call, or the whole part's type), finish, usage."""
    if type(value) is not dict:
        return compact_json(value)
    out: list[str] = []
    error = value.get("error")
    if error:
        out.append(f"error {compact_json(error, 120)}")
    candidates = value.get("candidates")
    for candidate in candidates if type(candidates) is list else ():
        if type(candidate) is not dict:
            continue
        index = candidate.get("index")
        prefix = f"[{index}] " if type(index) is int and index else ""
        content = candidate.get("content")
        parts = content.get("parts") if type(content) is dict else None
        for part in parts if type(parts) is list else ():
            if type(part) is not dict:
                continue
            signed = " (signed)" if part.get("thoughtSignature") else ""
            if type(part.get("text")) is str:
                kind = "thought" if part.get("thought") is True else "text"
                if part["text"] or signed:
                    out.append(f"{prefix}{kind} {compact_json(part['text'], 80)}{signed}")
            elif type(part.get("functionCall")) is dict:
                call = part["functionCall"]
                name = f" {call['name']}" if call.get("name") else ""
                args = call.get("args") if "args" in call else call.get("partialArgs")
                more = " …" if call.get("willContinue") is True else ""
                out.append(f"{prefix}call{name} {compact_json(args, 60)}{more}{signed}")
            else:
                kinds = [key for key in part if key not in PART_EXTRAS]
                out.append(f"{prefix}{kinds[0] if kinds else 'part'}{signed}")
        if candidate.get("finishReason"):
            out.append(f"{prefix}finish {candidate['finishReason']}")
    feedback = value.get("promptFeedback")
    if type(feedback) is dict and feedback.get("blockReason"):
        out.append(f"prompt blocked {feedback['blockReason']}")
    usage = value.get("usageMetadata")
    if type(usage) is dict:
        out.append(f"usage total {usage.get('totalTokenCount', '?')}")
    return ", ".join(out) or "(empty chunk)"
