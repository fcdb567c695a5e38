"""OpenAI Realtime API (`gpt-realtime`, server events over a WebSocket): the
dialect is `fold.OpenAIRealtime`; `native` holds the `realtime.response`
export, its reader and the frames table's line.
"""

from __future__ import annotations

from .fold import OpenAIRealtime

__all__ = ["OpenAIRealtime"]
