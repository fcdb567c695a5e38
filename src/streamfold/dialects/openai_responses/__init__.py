"""OpenAI Responses API (`POST /v1/responses`, `stream: true`): reference §4.2,
traps R1-R4 and U1. The dialect is `fold.OpenAIResponses`; `items` and
`events` keep the output items and fold their events, `fast` holds the hot
payload shapes, `native` the export, `summary` the frames table's line.
"""

from __future__ import annotations

from .fold import OpenAIResponses

__all__ = ["OpenAIResponses"]
