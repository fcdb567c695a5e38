"""Dialects: one small module per vendor, registered by name.

`DIALECTS` maps a name to its class; `detect()` returns the first dialect
that claims a decoded payload (reference §3 order), or None.
"""

from __future__ import annotations

from typing import Any

from ._base import Dialect
from .openai_chat import OpenAIChat
from .openai_completions import OpenAICompletions
from .unknown import Unknown

__all__ = ["DIALECTS", "Dialect", "detect"]

DIALECTS: dict[str, type[Dialect]] = {
    OpenAIChat.name: OpenAIChat,
    OpenAICompletions.name: OpenAICompletions,
    Unknown.name: Unknown,
}

_DETECTION_ORDER: tuple[type[Dialect], ...] = (OpenAIChat, OpenAICompletions)


def detect(value: Any) -> type[Dialect] | None:
    for dialect in _DETECTION_ORDER:
        if dialect.claims(value):
            return dialect
    return None
