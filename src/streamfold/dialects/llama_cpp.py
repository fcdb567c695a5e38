"""LlamaCpp streams (reference/dialects.md). Not written yet: claims nothing."""

from __future__ import annotations

from typing import Any

from ._base import Dialect

__all__ = ["LlamaCpp"]


class LlamaCpp(Dialect):
    name = "llama-cpp"

    @classmethod
    def claims(cls, value: Any) -> bool:
        return False
