"""AG-UI: agent events over SSE or NDJSON (see `fold`)."""

from __future__ import annotations

from .fold import AGUI

__all__ = ["AGUI"]
