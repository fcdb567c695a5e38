"""LM Studio native `POST /api/v1/chat`: the dialect (`fold`) and its spec."""

from __future__ import annotations

from ..spec import DialectSpec
from .fold import EVENT_TYPES, LMStudio

__all__ = ["SPEC", "LMStudio"]


SPEC = DialectSpec(
    "lmstudio", LMStudio, title="LM Studio native REST API `/api/v1/chat`",
    discriminators={"type": EVENT_TYPES}, request_paths=("/api/v1/chat",))
