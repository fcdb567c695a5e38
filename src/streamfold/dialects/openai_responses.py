"""OpenAIResponses streams (reference/dialects.md). Not written yet: claims nothing."""

from __future__ import annotations

from typing import Any

from ._base import Dialect

__all__ = ["OpenAIResponses"]


class OpenAIResponses(Dialect):
    name = "openai-responses"

    @classmethod
    def claims(cls, value: Any) -> bool:
        return False
