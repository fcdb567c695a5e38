"""Legacy OpenAI completions (`text_completion`), reference §4.8.

`choices[].text` appends per choice index; the rest (usage, errors, finish
reasons, `[DONE]`, the native snapshot) is the chat dialect's, so this is the
chat dialect with a different text path and a different export.
"""

from __future__ import annotations

from typing import Any

from ..openai_chat import OpenAIChat

__all__ = ["OpenAICompletions"]


class OpenAICompletions(OpenAIChat):
    name = "openai-completions"

    @classmethod
    def claims(cls, value: object) -> bool:
        if not isinstance(value, dict):
            return False
        choices = value.get("choices")
        first = choices[0] if bool(choices) and isinstance(choices, list) and isinstance(choices[0], dict) else None
        kind = value.get("object")
        if kind in ("text_completion", "completion.chunk"):
            # Older TGI chat chunks say `text_completion` too: a `delta` without `text` is a chat chunk.
            return first is None or "text" in first or "delta" not in first
        if kind == "chat.completion.chunk" or (kind == "" and ("prompt_filter_results" in value
                                                               or "prompt_annotations" in value)):
            return False  # a chat stream's chunk or Azure's prelude to one, whatever its choices hold
        return first is not None and "text" in first and "delta" not in first

    def _choice(self, choice: dict[str, Any], frame: int) -> None:
        text = choice.get("text")
        if type(text) is str:
            # Together also sends `delta.content` with the same text: `text` is the one read.
            choice = {**choice, "delta": {"content": text}}
        super()._choice(choice, frame)
