"""Gemini's non-streaming `GenerateContentResponse`: the `native` snapshot the
fold leaves in the Result, the export built from it, and the reverse (reading
such a response for `check`/`diff`).

The snapshot (plain JSON) holds what the Result does not:

    {"candidates": [{"index": 0,
                     "parts": [{"text": [start, end], "thoughtSignature": "..."},   # into choice.content
                               {"thought": [start, end]},                           # into choice.reasoning
                               {"functionCall": KEY},                               # the ToolCall of that key
                               {"whole": {...}}],                                   # executableCode, inlineData, ...
                     "fields": {...},            # safetyRatings, groundingMetadata, ... as last sent
                     "citationMetadata": {...}, "logprobsResult": {...}}],
     "promptFeedback": ..., "createTime": ..., "modelStatus": ...}

Only real candidates are listed (choice 0 of a blocked prompt has none); keys
whose value is empty or None are left out.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ...opaque import Opaque

if TYPE_CHECKING:
    from ...result import Result
    from .state import Candidate

__all__ = ["export", "may_hold_opaque", "opaque_values", "read_response", "snapshot", "usage"]


def snapshot(candidates: dict[int, Candidate], prompt_feedback: object, create_time: Any,
             model_status: Any) -> dict[str, Any]:
    """The `native` snapshot of a folded stream (see the module docstring)."""
    listed = []
    for index, state in sorted(candidates.items()):
        if not state.real:
            continue
        parts: list[dict[str, Any]] = []
        for part in state.parts:
            item: dict[str, Any]
            if part.kind == "text":
                item = {"text": [part.start, part.end]}
            elif part.kind == "reasoning":
                item = {"thought": [part.start, part.end]}
            elif part.kind == "tool_call":
                if part.tool is None:
                    continue
                item = {"functionCall": part.tool}
            else:
                parts.append({"whole": part.whole or {}})
                continue
            if part.signature:
                item["thoughtSignature"] = part.signature
            parts.append(item)
        candidate: dict[str, Any] = {"index": index, "parts": parts}
        if state.extras:
            candidate["fields"] = dict(state.extras)
        if state.citations:
            candidate["citationMetadata"] = {state.citation_field or "citationSources": list(state.citations)}
        if state.chosen or state.top:
            candidate["logprobsResult"] = {"topCandidates": list(state.top), "chosenCandidates": list(state.chosen)}
        listed.append(candidate)
    out: dict[str, Any] = {"candidates": listed}
    for name, value in (("promptFeedback", prompt_feedback), ("createTime", create_time),
                        ("modelStatus", model_status)):
        if value is not None:
            out[name] = value
    return out


def export(result: Result) -> dict[str, Any]:
    """The `GenerateContentResponse` a non-streaming `generateContent` would have returned (REST camelCase)."""
    native = result.native if isinstance(result.native, dict) else {}
    states = {candidate["index"]: candidate for candidate in native.get("candidates", ())}
    candidates = []
    for choice in result.choices:
        state = states.get(choice.index)
        if state is None:
            continue  # choice 0 of a blocked prompt has no candidate
        calls = {call.key: call for call in choice.tool_calls}
        parts: list[dict[str, Any]] = []
        for part in state["parts"]:
            item: dict[str, Any]
            if "text" in part:
                start, end = part["text"]
                item = {"text": choice.content[start:end]}
            elif "thought" in part:
                start, end = part["thought"]
                item = {"text": (choice.reasoning or "")[start:end], "thought": True}
            elif "functionCall" in part:
                call = calls.get(part["functionCall"])
                if call is None:
                    continue
                function: dict[str, Any] = {"name": call.name, "args": call.parsed if type(call.parsed) is dict else {}}
                if call.id is not None:
                    function = {"id": call.id, **function}
                item = {"functionCall": function}
            else:
                parts.append(dict(part["whole"]))
                continue
            if "thoughtSignature" in part:
                item["thoughtSignature"] = part["thoughtSignature"]
            parts.append(item)
        candidate: dict[str, Any] = {"content": {"parts": parts, "role": choice.role or "model"}}
        if choice.finish_reason_raw is not None:
            candidate["finishReason"] = choice.finish_reason_raw
        candidate["index"] = choice.index
        candidate.update(state.get("fields", {}))
        for name in ("citationMetadata", "logprobsResult"):
            if name in state:
                candidate[name] = state[name]
        candidates.append(candidate)
    out: dict[str, Any] = {}
    if candidates:
        out["candidates"] = candidates
    if "promptFeedback" in native:
        out["promptFeedback"] = native["promptFeedback"]
    if result.usage is not None:
        out["usageMetadata"] = result.usage.raw
    if result.model is not None:
        out["modelVersion"] = result.model
    if result.id is not None:
        out["responseId"] = result.id
    for name in ("createTime", "modelStatus"):
        if name in native:
            out[name] = native[name]
    return out


#: google-genai's `model_dump()` names (snake_case) of the fields `read_response` reads, and the API's.
_SDK_NAMES = {"usage_metadata": "usageMetadata", "prompt_feedback": "promptFeedback", "block_reason": "blockReason",
              "finish_reason": "finishReason", "function_call": "functionCall", "thought_signature": "thoughtSignature"}


def _api_names(value: dict[str, Any]) -> dict[str, Any]:
    """A google-genai object's dump with the API's names, where `read_response` looks (never inside a call's
    `args`: those are the caller's own keys)."""
    out = {_SDK_NAMES.get(key, key): inner for key, inner in value.items()}
    for key in ("promptFeedback", "functionCall"):
        if isinstance(out.get(key), dict):
            out[key] = {_SDK_NAMES.get(name, name): inner for name, inner in out[key].items()}
    if isinstance(out.get("content"), dict) and isinstance(out["content"].get("parts"), list):
        out["content"] = {**out["content"], "parts": [_api_names(part) if isinstance(part, dict) else part
                                                       for part in out["content"]["parts"]]}
    if isinstance(out.get("candidates"), list):
        out["candidates"] = [_api_names(one) if isinstance(one, dict) else one for one in out["candidates"]]
    return out


def read_response(value: object) -> dict[str, Any] | None:
    """A `GenerateContentResponse` (candidate 0): text and thought parts, function calls. Also a
    `Content` (`{"role": "model", "parts": [...]}`, what a client that keeps the turn holds), and either
    as google-genai dumps them (snake_case names)."""
    if not isinstance(value, dict):
        return None
    if value.get("role") == "model" and isinstance(value.get("parts"), list):
        value = {"candidates": [{"content": value}]}
    value = _api_names(value)
    candidates = value.get("candidates")
    if not (isinstance(candidates, list) and candidates and isinstance(candidates[0], dict)):
        feedback = value.get("promptFeedback")
        if isinstance(feedback, dict) and feedback.get("blockReason"):
            # A blocked prompt (G7): no candidates. Whatever the block reason (even OTHER),
            # the fold ends choice 0 as content_filter, which is what SAFETY normalises to.
            return {"content": "", "reasoning": None, "tool_calls": [], "finish_reason": "SAFETY",
                    "usage": value.get("usageMetadata")}
        return None
    content = candidates[0].get("content")
    parts = [p for p in (content.get("parts", []) if isinstance(content, dict) else []) if isinstance(p, dict)]
    # `or`: a google-genai dump holds every field, null where the part has none.
    thoughts = "".join(p.get("text") or "" for p in parts if p.get("thought"))
    calls = [p["functionCall"] for p in parts if isinstance(p.get("functionCall"), dict)]
    return {
        "content": "".join(p.get("text") or "" for p in parts if not p.get("thought")),
        "reasoning": thoughts or None,
        "tool_calls": [(call.get("name"), json.dumps(call.get("args") or {}, separators=(",", ":"),
                                                     ensure_ascii=False)) for call in calls],
        "tool_call_ids": [call.get("id") for call in calls],
        "finish_reason": candidates[0].get("finishReason"),
        "usage": value.get("usageMetadata"),
    }


def usage(raw: object) -> dict[str, Any] | None:
    """`usageMetadata` as the Result's usage counts."""
    if type(raw) is not dict:
        return None
    prompt = _count(raw.get("promptTokenCount"))
    tool_prompt = _count(raw.get("toolUsePromptTokenCount"))
    candidates = _count(raw.get("candidatesTokenCount"))
    thoughts = _count(raw.get("thoughtsTokenCount"))
    total = _count(raw.get("totalTokenCount"))
    input_tokens = prompt if tool_prompt is None else (prompt or 0) + tool_prompt
    # Output counts what the model generated, thoughts included (as OpenAI's
    # completion_tokens and Anthropic's output_tokens do); Gemini counts them apart.
    output_tokens = None if candidates is None and thoughts is None else (candidates or 0) + (thoughts or 0)
    if total is None and input_tokens is not None and output_tokens is not None:
        total = input_tokens + output_tokens
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "reasoning_tokens": thoughts,
        "cache_read_tokens": _count(raw.get("cachedContentTokenCount")),
        "total_tokens": total,
    }


def _count(value: object) -> int | None:
    return value if type(value) is int else None


def may_hold_opaque(result: Result) -> bool:
    """Whether the export can hold what `opaque_values` reads: a part's `thoughtSignature`, which the export
    copies from the snapshot's part or from a part it keeps whole (most replies have none)."""
    native = result.native
    candidates = native.get("candidates") if type(native) is dict else None
    for candidate in candidates if type(candidates) is list else ():
        parts = candidate.get("parts") if type(candidate) is dict else None
        for part in parts if type(parts) is list else ():
            if type(part) is not dict:
                continue
            whole = part.get("whole")
            if "thoughtSignature" in part or (type(whole) is dict and "thoughtSignature" in whole):
                return True
    return False


def opaque_values(exported: dict[str, Any]) -> list[Opaque]:
    """Every part's `thoughtSignature` (google-genai: `thought_signature`, as bytes): Gemini 3 refuses a
    function call's turn sent back without its signature."""
    found: list[Opaque] = []
    candidates = exported.get("candidates")
    for candidate in candidates if type(candidates) is list else ():
        content = candidate.get("content") if type(candidate) is dict else None
        parts = content.get("parts") if type(content) is dict else None
        choice = candidate.get("index", 0)
        for position, part in enumerate(parts if type(parts) is list else ()):
            if type(part) is dict and type(signature := part.get("thoughtSignature")) is str and signature:
                found.append(Opaque("thought signature", f"candidates[{choice}].content.parts[{position}]"
                                    ".thoughtSignature", signature, ("thoughtSignature", "thought_signature"),
                                    choice=choice if type(choice) is int else 0))
    return found
