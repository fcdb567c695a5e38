"""Gemini Interactions API (`/v1beta/interactions`): the dialect (`fold`) and its spec."""

from __future__ import annotations

from ..spec import DialectSpec
from .fold import EVENT_TYPES, GeminiInteractions
from .replay import INTERACTIONS_REPLAY

__all__ = ["SPEC", "GeminiInteractions"]


SPEC = DialectSpec(
    "gemini-interactions", GeminiInteractions, title="Gemini Interactions API",
    discriminators={"event_type": EVENT_TYPES}, request_paths=("/interactions",),
    replay=INTERACTIONS_REPLAY)
