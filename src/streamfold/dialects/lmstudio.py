"""LMStudio streams (reference/dialects.md). Not written yet: claims nothing."""

from __future__ import annotations

from typing import Any

from ._base import Dialect

__all__ = ["LMStudio"]


class LMStudio(Dialect):
    name = "lmstudio"

    @classmethod
    def claims(cls, value: Any) -> bool:
        return False
