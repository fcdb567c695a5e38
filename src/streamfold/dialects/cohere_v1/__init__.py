"""Cohere v1 chat (legacy `POST /v1/chat`): the dialect (`fold`) and its spec."""

from __future__ import annotations

from ..spec import DialectSpec
from .fold import EVENT_TYPES, CohereV1

__all__ = ["SPEC", "CohereV1"]


SPEC = DialectSpec(
    "cohere-v1", CohereV1, title="Cohere v1 chat (the legacy NDJSON stream)",
    discriminators={"event_type": EVENT_TYPES}, request_paths=("/v1/chat",))
