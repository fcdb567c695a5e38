"""Cloudflare streams (reference/dialects.md). Not written yet: claims nothing."""

from __future__ import annotations

from typing import Any

from ._base import Dialect

__all__ = ["Cloudflare"]


class Cloudflare(Dialect):
    name = "cloudflare"

    @classmethod
    def claims(cls, value: Any) -> bool:
        return False
