"""Cohere streams (reference/dialects.md). Not written yet: claims nothing."""

from __future__ import annotations

from typing import Any

from ._base import Dialect

__all__ = ["Cohere"]


class Cohere(Dialect):
    name = "cohere"

    @classmethod
    def claims(cls, value: Any) -> bool:
        return False
