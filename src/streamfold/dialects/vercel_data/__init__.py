"""The Vercel AI SDK data stream (`T:JSON` lines, ai 3.x and 4.x): the dialect and its framing hint
(`fold`) and its spec."""

from __future__ import annotations

from ..spec import DialectSpec
from .fold import LINES, Prefixed, VercelData
from .replay import DATA_STREAM_REPLAY

__all__ = ["SPEC", "Prefixed", "VercelData"]


SPEC = DialectSpec(
    "vercel-data", VercelData, title="Vercel AI SDK data stream (`T:JSON` lines, ai 3 and 4)",
    keyless=True, line_format=LINES, replay=DATA_STREAM_REPLAY)
