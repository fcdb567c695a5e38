"""OpenAI Realtime API (`gpt-realtime`, server events over a WebSocket): the
dialect is `fold.OpenAIRealtime`; `native` holds the `realtime.response`
export, its reader and the frames table's line.
"""

from __future__ import annotations

from ...findings import Severity
from ..spec import DialectSpec, vendor_codes
from .fold import OpenAIRealtime
from .native import export, read_response, summarize
from .replay import REALTIME_REPLAY

__all__ = ["SPEC", "OpenAIRealtime"]


SPEC = DialectSpec(
    "openai-realtime", OpenAIRealtime, title="OpenAI Realtime API server events",
    export=export, read_response=read_response, summary=summarize, replay=REALTIME_REPLAY,
    keys=frozenset({"event_id"}), request_paths=("/realtime",), fast_path=f"{__name__}.fast",
    codes=vendor_codes(
        "openai-realtime",
        ("realtime-other-responses", Severity.INFO, "the session holds more responses than the one folded (the "
         "first, or the one asked for); the others are listed with their ids")))
