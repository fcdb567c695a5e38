"""The one-line description of an OpenAI chat (or legacy completions) chunk, for the frames table."""

from __future__ import annotations

from .._base import compact_json

__all__ = ["summarize"]


def summarize(value: object) -> str:
    if type(value) is not dict:
        return compact_json(value)
    parts: list[str] = []
    if value.get("error") or value.get("object") == "error":
        parts.append(f"error {compact_json(value.get('error') or value.get('message'), 120)}")
    choices = value.get("choices")
    for choice in choices if type(choices) is list else ():
        if type(choice) is not dict:
            continue
        prefix = f"[{choice.get('index')}] " if choice.get("index") not in (0, None) else ""
        delta = choice.get("delta")
        if type(delta) is dict:
            for name in ("role", "content", "reasoning_content", "reasoning", "refusal"):
                if delta.get(name):
                    parts.append(f"{prefix}{name} {compact_json(delta[name], 80)}")
            calls = delta.get("tool_calls")
            for call in calls if type(calls) is list else ():
                if type(call) is dict:
                    function = call.get("function")
                    if type(function) is not dict:
                        function = {}
                    name = f" {function['name']}" if function.get("name") else ""
                    arguments = function.get("arguments")
                    parts.append(f"{prefix}tool {call.get('index', '?')}{name}"
                                 + (f" args {compact_json(arguments, 60)}" if arguments else ""))
        elif "content_filter_results" in choice:
            parts.append(f"{prefix}content filter annotation")
        logprobs = choice.get("logprobs")
        if type(logprobs) is dict:  # the tokens of this chunk (content[], refusal[], or a completion's tokens)
            count = max((len(v) for v in logprobs.values() if type(v) is list), default=0)
            if count:
                parts.append(f"{prefix}logprobs {count} token{'s' if count != 1 else ''}")
        if choice.get("finish_reason"):
            parts.append(f"{prefix}finish {choice['finish_reason']}")
    if value.get("usage"):
        parts.append("usage")
    if not parts and ("prompt_filter_results" in value or "prompt_annotations" in value):
        parts.append("prompt filter results")
    return ", ".join(parts) or "(empty delta)"
