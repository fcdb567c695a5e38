"""What OpenAI-shaped streams carry beyond the reply's text: OpenRouter's
`reasoning_details` and the `extra_content` of Gemini's OpenAI layer on a tool call,
which a client must send back, and each choice's `logprobs`, token by token.

Both are opaque state a client must send back (a reasoning model's signature, its
encrypted reasoning; Gemini's `thought_signature`, iOfficeAI/aionrs#93), so the
export carries them where a non-streaming reply has them. `reasoning_details`
merge KEYED by each detail's `index` (by `type` and `id` when it has none):
`text` and `summary` APPEND, `signature`, `id` and `format` REPLACE, and
anything else (`data`, an encrypted detail's whole value) as last sent
(reference §4.1, OpenRouter row). A tool call's `extra_content` is REPLACED:
Gemini's layer sends each call whole.

A choice's `logprobs` EXTEND: each chunk's lists (`content[]` and `refusal[]` of a chat
choice, `tokens`, `token_logprobs`, `top_logprobs`, `text_offset` of a legacy completion)
are appended to the choice's, so the export's `logprobs` is the non-streaming reply's (O17).
The openai SDK does the same (openai 3.57 `lib/streaming/chat/_completions.py`,
ChatCompletionStreamState: the first non-null `logprobs` is taken, later `content` and
`refusal` lists extend it); a null or an absent `logprobs` changes nothing.
"""

from __future__ import annotations

from typing import Any

__all__ = ["StreamExtras"]

_APPENDED = ("text", "summary")


class StreamExtras:
    """The reasoning details of each choice and the extra content of each tool call, as JSON values."""

    __slots__ = ("_details", "_logprobs", "_tool_extras")

    def __init__(self) -> None:
        self._details: dict[int, dict[Any, dict[str, Any]]] = {}
        self._tool_extras: dict[int, dict[int, Any]] = {}
        self._logprobs: dict[int, dict[str, Any]] = {}

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

    def logprobs(self, choice: int, logprobs: object) -> None:
        """Merge one chunk's `logprobs` object into choice `choice`'s: lists EXTEND, other values REPLACE
        when not null (a null list is no tokens)."""
        if type(logprobs) is not dict:
            return
        held = self._logprobs.get(choice)
        if held is None:
            self._logprobs[choice] = {name: list(value) if type(value) is list else value
                                      for name, value in logprobs.items()}
            return
        for name, value in logprobs.items():
            if type(value) is list:
                if value:
                    kept = held.get(name)
                    if type(kept) is list:
                        kept.extend(value)
                    else:
                        held[name] = list(value)
            elif value is not None:
                held[name] = value

    def snapshot(self) -> dict[str, Any]:
        """The native snapshot's part: {"reasoning_details": {"CHOICE": [...]}, "tool_extras": {"CHOICE":
        {"KEY": extra}}, "logprobs": {"CHOICE": {...}}}, each only when the stream sent some (string keys:
        the snapshot is JSON)."""
        out: dict[str, Any] = {}
        details = {str(choice): list(held.values()) for choice, held in sorted(self._details.items()) if held}
        if details:
            out["reasoning_details"] = details
        extras = {str(choice): {str(key): extra for key, extra in sorted(held.items())}
                  for choice, held in sorted(self._tool_extras.items()) if held}
        if extras:
            out["tool_extras"] = extras
        if self._logprobs:
            out["logprobs"] = {str(choice): held for choice, held in sorted(self._logprobs.items())}
        return out
