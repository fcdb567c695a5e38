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

if TYPE_CHECKING:
    from ...result import Result
    from .state import Candidate

__all__ = ["export", "read_response", "snapshot"]


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


def read_response(value: object) -> dict[str, Any] | None:
    """A `GenerateContentResponse` (candidate 0): text and thought parts, function calls."""
    if not isinstance(value, dict):
        return None
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
    thoughts = "".join(p.get("text", "") for p in parts if p.get("thought"))
    return {
        "content": "".join(p.get("text", "") for p in parts if not p.get("thought")),
        "reasoning": thoughts or None,
        "tool_calls": [(p["functionCall"].get("name"), json.dumps(p["functionCall"].get("args", {}),
                                                                  separators=(",", ":"), ensure_ascii=False))
                       for p in parts if isinstance(p.get("functionCall"), dict)],
        "finish_reason": candidates[0].get("finishReason"),
        "usage": value.get("usageMetadata"),
    }
