"""Legacy OpenAI completions (`text_completion`), reference §4.8.

`choices[].text` appends per choice index; the rest (usage, errors, finish
reasons, `[DONE]`) is the chat dialect's, so this is the chat dialect with a
different text path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .openai_chat import OpenAIChat

if TYPE_CHECKING:
    from ..result import Result

__all__ = ["OpenAICompletions"]


class OpenAICompletions(OpenAIChat):
    name = "openai-completions"

    @classmethod
    def claims(cls, value: Any) -> bool:
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

    def export(self, result: Result) -> dict[str, Any]:
        """The `Completion` (`text_completion`) a non-streaming request would have returned."""
        choices = [{"index": choice.index, "text": choice.content, "logprobs": None,
                    "finish_reason": choice.finish_reason_raw} for choice in result.choices]
        return self._envelope("text_completion", result, choices)

    @classmethod
    def read_response(cls, value: Any) -> dict[str, Any] | None:
        """A legacy `Completion` (`text_completion`)."""
        choices = value.get("choices") if isinstance(value, dict) else None
        if not (isinstance(choices, list) and choices and isinstance(choices[0], dict) and "text" in choices[0]):
            return None
        return {"content": choices[0].get("text") or "", "reasoning": None, "tool_calls": None,
                "finish_reason": choices[0].get("finish_reason"),
                "usage": value.get("usage")}
