"""What OpenAI-shaped streams carry for the next request beyond the reply: OpenRouter's
`reasoning_details` and the `extra_content` of Gemini's OpenAI layer on a tool call.

Both are opaque state a client must send back (a reasoning model's signature, its
encrypted reasoning; Gemini's `thought_signature`, iOfficeAI/aionrs#93), so the
export carries them where a non-streaming reply has them. `reasoning_details`
merge KEYED by each detail's `index` (by `type` and `id` when it has none):
`text` and `summary` APPEND, `signature`, `id` and `format` REPLACE, and
anything else (`data`, an encrypted detail's whole value) as last sent
(reference §4.1, OpenRouter row). A tool call's `extra_content` is REPLACED:
Gemini's layer sends each call whole.
"""

from __future__ import annotations

from typing import Any

__all__ = ["StreamExtras"]

_APPENDED = ("text", "summary")


class StreamExtras:
    """The reasoning details of each choice and the extra content of each tool call, as JSON values."""

    __slots__ = ("_details", "_tool_extras")

    def __init__(self) -> None:
        self._details: dict[int, dict[Any, dict[str, Any]]] = {}
        self._tool_extras: dict[int, dict[int, Any]] = {}

    def reasoning_details(self, choice: int, details: object) -> None:
        """Merge one delta's `reasoning_details` list into choice `choice`'s."""
        held = self._details.setdefault(choice, {})
        for detail in details if type(details) is list else ():
            if type(detail) is not dict:
                continue
            position = detail.get("index")
            key: Any = position if type(position) is int else (str(detail.get("type")), str(detail.get("id")))
            merged = held.get(key)
            if merged is None:
                held[key] = dict(detail)
                continue
            for name, value in detail.items():
                if name in _APPENDED and type(value) is str and type(merged.get(name)) is str:
                    merged[name] += value
                elif value is not None:
                    merged[name] = value

    def tool_extra(self, choice: int, key: int, extra: object) -> None:
        """A tool call's `extra_content` (the last one sent)."""
        if extra is not None:
            self._tool_extras.setdefault(choice, {})[key] = extra

    def snapshot(self) -> dict[str, Any]:
        """The native snapshot's part: {"reasoning_details": {"CHOICE": [...]}, "tool_extras": {"CHOICE":
        {"KEY": extra}}}, each only when the stream sent some (string keys: the snapshot is JSON)."""
        out: dict[str, Any] = {}
        details = {str(choice): list(held.values()) for choice, held in sorted(self._details.items()) if held}
        if details:
            out["reasoning_details"] = details
        extras = {str(choice): {str(key): extra for key, extra in sorted(held.items())}
                  for choice, held in sorted(self._tool_extras.items()) if held}
        if extras:
            out["tool_extras"] = extras
        return out
