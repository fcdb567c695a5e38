"""The Gemini Live API (`BidiGenerateContent` server messages over a WebSocket): the dialect (`fold`), the
message fields it reads (`events`) and how the replay server breaks it (`replay`). It exports nothing: the
Live API has no non-streaming form, its server messages are the only shape a reply takes."""

from __future__ import annotations

from ...findings import Severity
from ..spec import DialectSpec, vendor_codes
from .events import LIVE_ONLY_FIELDS, summarize
from .fold import GeminiLive
from .replay import LIVE_REPLAY

__all__ = ["SPEC", "GeminiLive"]


SPEC = DialectSpec(
    "gemini-live", GeminiLive, title="Gemini Live API server messages (`BidiGenerateContent`)", replay=LIVE_REPLAY,
    summary=summarize, keys=LIVE_ONLY_FIELDS, request_paths=("BidiGenerateContent",),
    codes=vendor_codes(
        "gemini-live",
        ("live-other-turns", Severity.INFO, "the session holds more turns than the one folded (the first, unless "
         "another lane is chosen); the others are listed with their first frame"),
        ("live-call-cancelled", Severity.INFO, "the server cancelled a tool call it had asked for "
         "(`toolCallCancellation`): it stays in the tool calls, marked cancelled in `native`"),
        ("live-go-away", Severity.WARNING, "the server announced it would disconnect (`goAway`) and the turn never "
         "completed")))
