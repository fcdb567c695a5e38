"""Google Gemini `streamGenerateContent` (AI Studio and Vertex AI): the dialect
is `fold.Gemini`."""

from __future__ import annotations

from .fold import Gemini

__all__ = ["Gemini"]
