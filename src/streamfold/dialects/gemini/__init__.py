"""Google Gemini `streamGenerateContent` (AI Studio and Vertex AI): the dialect
is `fold.Gemini`."""

from __future__ import annotations

from ...findings import Severity
from ..spec import DialectSpec, vendor_codes
from .fold import Gemini
from .native import export, may_hold_opaque, opaque_values, read_response
from .replay import GEMINI_REPLAY
from .summary import summarize

__all__ = ["SPEC", "Gemini"]


SPEC = DialectSpec(
    "gemini", Gemini, replay=GEMINI_REPLAY, title="Gemini `streamGenerateContent` (AI Studio and Vertex AI)",
    export=export, opaque_state=opaque_values, may_hold_opaque=may_hold_opaque, read_response=read_response,
    summary=summarize,
    keys=frozenset({"candidates", "usageMetadata", "promptFeedback"}), keyless=True,
    request_paths=(":streamGenerateContent", ":generateContent"), stream_paths=(":streamGenerateContent",),
    fast_path=f"{__name__}.fast",
    codes=vendor_codes(
        "gemini",
        ("prompt-blocked", Severity.WARNING, "the prompt was blocked before any candidate"),
        ("reply-continues", Severity.INFO, "a `CONTINUATION` finish: the reply goes on in another request"),
        ("streamed-call-unfinished", Severity.WARNING, "a streamed function call whose arguments never finished"),
        ("data-without-space", Severity.INFO, "`data:` without the space, which google-genai does not read"),
        ("parts-capped", Severity.WARNING, "a candidate with more parts than the fold lists (1000): its further "
         "text and thought extend its last text and thought parts, its further whole parts are left out")))
