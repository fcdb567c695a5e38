"""Cohere v2 chat (`POST /v2/chat`): the dialect (`fold`), its fast shapes (`fast`) and its spec."""

from __future__ import annotations

from ..spec import DialectSpec
from .fold import EVENT_TYPES, Cohere

__all__ = ["SPEC", "Cohere"]


SPEC = DialectSpec(
    "cohere", Cohere, title="Cohere v2 chat",
    discriminators={"type": EVENT_TYPES}, request_paths=("/v2/chat",), fast_path=f"{__name__}.fast")
