"""Bedrock streams (reference/dialects.md). Not written yet: claims nothing."""

from __future__ import annotations

from typing import Any

from ._base import Dialect

__all__ = ["Bedrock"]


class Bedrock(Dialect):
    name = "bedrock"

    @classmethod
    def claims(cls, value: Any) -> bool:
        return False
