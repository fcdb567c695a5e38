"""The non-streaming objects of the OpenAI family, from a Result alone: the
`ChatCompletion` (and the legacy `Completion`, whose envelope is the same),
the native snapshot they need beyond the Result, and the reverse (`read_chat`,
`read_completion`: what `check` and `diff` read from a response body).

The snapshot is the chunk envelope's fields a Result has no place for:
`created`, and `system_fingerprint` and `service_tier` when the stream sent
them; and the opaque state a client sends back with the next turn
(`extras.py`: OpenRouter's `reasoning_details`, a tool call's
`extra_content`), and each choice's `logprobs` token by token. Everything else (id, model, usage, each choice's text,
tool calls and raw finish reason) is the Result's own.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ...opaque import Opaque
from .._base import dumps_arguments

if TYPE_CHECKING:
    from ...merge import Merger
    from ...result import Result, ToolCall
    from .extras import StreamExtras

__all__ = ["envelope", "export_chat", "export_completion", "may_hold_opaque", "opaque_values", "read_chat",
           "read_completion", "snapshot"]

#: The envelope fields exported only when the stream sent them.
_OPTIONAL = ("system_fingerprint", "service_tier")


def snapshot(merger: Merger, extras: StreamExtras | None = None) -> dict[str, Any]:
    """The native snapshot at the end of the stream (JSON values, as the chunks sent them)."""
    out: dict[str, Any] = {"created": merger.get(("created",))}
    for name in _OPTIONAL:
        value = merger.get(("dialect", name))
        if value is not None:
            out[name] = value
    if extras is not None:
        out.update(extras.snapshot())
    return out


def export_chat(result: Result) -> dict[str, Any]:
    """The `ChatCompletion` a non-streaming request would have returned."""
    native = result.native if isinstance(result.native, dict) else {}
    details, extras = native.get("reasoning_details") or {}, native.get("tool_extras") or {}
    logprobs = native.get("logprobs") or {}
    choices = []
    for choice in result.choices:
        message: dict[str, Any] = {"role": choice.role or "assistant", "content": choice.content or None,
                                   "refusal": choice.refusal}
        if choice.reasoning is not None:
            message["reasoning_content"] = choice.reasoning  # DeepSeek's non-streaming field
        if details.get(str(choice.index)):
            message["reasoning_details"] = details[str(choice.index)]  # OpenRouter's, as its replies carry them
        if choice.tool_calls:
            held = extras.get(str(choice.index)) or {}
            message["tool_calls"] = [_exported_call(call, held.get(str(call.key))) for call in choice.tool_calls]
        choices.append({"index": choice.index, "message": message, "logprobs": logprobs.get(str(choice.index)),
                        "finish_reason": _exported_finish(choice.finish_reason_raw, bool(choice.tool_calls))})
    return envelope("chat.completion", result, choices)


def export_completion(result: Result) -> dict[str, Any]:
    """The `Completion` (`text_completion`) a non-streaming request would have returned."""
    native = result.native if isinstance(result.native, dict) else {}
    logprobs = native.get("logprobs") or {}
    choices = [{"index": choice.index, "text": choice.content, "logprobs": logprobs.get(str(choice.index)),
                "finish_reason": choice.finish_reason_raw} for choice in result.choices]
    return envelope("text_completion", result, choices)


def envelope(kind: str, result: Result, choices: list[dict[str, Any]]) -> dict[str, Any]:
    """The object around the choices: id, object, created, model, the optional envelope fields, usage."""
    native = result.native if isinstance(result.native, dict) else {}
    out: dict[str, Any] = {"id": result.id, "object": kind, "created": native.get("created"),
                           "model": result.model, "choices": choices}
    for name in _OPTIONAL:
        if native.get(name) is not None:
            out[name] = native[name]
    if result.usage is not None:
        out["usage"] = result.usage.raw
    return out


def read_chat(value: object) -> dict[str, Any] | None:
    """A `ChatCompletion`, or a bare assistant message dict (what clients often keep)."""
    if not isinstance(value, dict):
        return None
    choices = value.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict) and "message" in choices[0]:
        choice = choices[0]
        message = choice["message"] if isinstance(choice["message"], dict) else {}
        finish = choice.get("finish_reason")
    elif value.get("role") == "assistant" and "type" not in value:
        message, finish = value, None
    else:
        return None
    calls = message.get("tool_calls")
    if calls is not None:
        calls = [call for call in calls if isinstance(call, dict)]
    return {
        "content": message.get("content") or "",
        "reasoning": message.get("reasoning_content") or message.get("reasoning"),
        "tool_calls": None if calls is None else [
            (call.get("function", {}).get("name"), _arguments_text(call.get("function", {}).get("arguments")))
            for call in calls],
        "tool_call_ids": None if calls is None else [call.get("id") for call in calls],
        "finish_reason": finish,
        "usage": value.get("usage"),
    }


def read_completion(value: object) -> dict[str, Any] | None:
    """A legacy `Completion` (`text_completion`)."""
    if not isinstance(value, dict):
        return None
    choices = value.get("choices")
    if not (isinstance(choices, list) and choices and isinstance(choices[0], dict) and "text" in choices[0]):
        return None
    return {"content": choices[0].get("text") or "", "reasoning": None, "tool_calls": None,
            "finish_reason": choices[0].get("finish_reason"),
            "usage": value.get("usage")}


def _exported_call(call: ToolCall, extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"id": call.id, "type": "function",
                           "function": {"name": call.name, "arguments": _exported_arguments(call)}}
    if extra is not None:
        out["extra_content"] = extra  # Gemini's OpenAI layer: its thought_signature must go back
    return out


def _exported_finish(raw: str | None, has_tool_calls: bool) -> str | None:
    """Non-streaming replies say `tool_calls` where some streams say `stop` (googleapis/python-genai#2868)."""
    if raw == "stop" and has_tool_calls:
        return "tool_calls"
    return raw


def _arguments_text(arguments: object) -> str:
    return arguments if isinstance(arguments, str) else dumps_arguments(arguments)


def _exported_arguments(call: ToolCall) -> str:
    """A non-streaming reply carries valid arguments: the raw join when it is exactly that, else
    the recovered value (cumulative resends, O8) or `{}` for an empty join (A2)."""
    if call.error is not None:
        return call.arguments  # nothing parsed: keep what was streamed
    try:
        if json.loads(call.arguments) == call.parsed:
            return call.arguments
    except (ValueError, RecursionError):
        pass
    return dumps_arguments(call.parsed)


def may_hold_opaque(result: Result) -> bool:
    """Whether the stream sent what `opaque_values` reads (most chat streams send neither)."""
    native = result.native
    return isinstance(native, dict) and ("reasoning_details" in native or "tool_extras" in native)


def opaque_values(exported: dict[str, Any]) -> list[Opaque]:
    """OpenRouter's `reasoning_details` (each detail's `signature` and encrypted `data`) and the
    `thought_signature` in a tool call's `extra_content` (Gemini's OpenAI layer)."""
    found: list[Opaque] = []
    for choice in exported.get("choices") or ():
        message = choice.get("message") if type(choice) is dict else None
        if type(message) is not dict:
            continue
        index = choice.get("index") if type(choice.get("index")) is int else 0
        where = f"choices[{index}].message"
        for position, detail in enumerate(message.get("reasoning_details") or ()):
            for name, what in (("signature", "reasoning signature"), ("data", "encrypted reasoning")):
                if type(detail) is dict and type(value := detail.get(name)) is str and value:
                    found.append(Opaque(what, f"{where}.reasoning_details[{position}].{name}", value, (name,),
                                        choice=index))
        for position, call in enumerate(message.get("tool_calls") or ()):
            extra = call.get("extra_content") if type(call) is dict else None
            google = extra.get("google") if type(extra) is dict else None
            if type(google) is dict and type(signature := google.get("thought_signature")) is str and signature:
                found.append(Opaque("thought signature", f"{where}.tool_calls[{position}].extra_content.google"
                                    ".thought_signature", signature, ("thought_signature",), choice=index))
    return found
