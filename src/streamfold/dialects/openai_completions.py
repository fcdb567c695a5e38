"""Legacy OpenAI completions (`text_completion`), reference §4.8.

`choices[].text` appends per choice index; the rest (usage, errors, finish
reasons, `[DONE]`, the native snapshot) is the chat dialect's, so this is the
chat dialect with a different text path and a different export.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .openai_chat import OpenAIChat
from .openai_chat.native import export_completion, read_completion

if TYPE_CHECKING:
    from ..result import Result

__all__ = ["OpenAICompletions"]


class OpenAICompletions(OpenAIChat):
    name = "openai-completions"

    @classmethod
    def claims(cls, value: object) -> bool:
        if not isinstance(value, dict):
            return False
        if value.get("object") in ("text_completion", "completion.chunk"):
            return True
        choices = value.get("choices")
        return (bool(choices) and isinstance(choices, list) and isinstance(choices[0], dict)
                and "text" in choices[0] and "delta" not in choices[0])

    def _choice(self, choice: dict[str, Any], frame: int) -> None:
        text = choice.get("text")
        if type(text) is str:
            # Together also sends `delta.content` with the same text: `text` is the one read.
            choice = {**choice, "delta": {"content": text}}
        super()._choice(choice, frame)

    @classmethod
    def export(cls, result: Result) -> dict[str, Any]:
        """The `Completion` (`text_completion`) a non-streaming request would have returned."""
        return export_completion(result)

    @classmethod
    def read_response(cls, value: object) -> dict[str, Any] | None:
        """A legacy `Completion` (`text_completion`)."""
        return read_completion(value)
