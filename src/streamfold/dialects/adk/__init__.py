"""Google ADK's `/run_sse` (`adk api_server`): the dialect (`fold`), its lanes and export (`native`) and how
the replay server breaks it (`replay`)."""

from __future__ import annotations

from ...findings import Severity
from ..spec import DialectSpec, vendor_codes
from .fold import ADK
from .native import export, read_events
from .replay import ADK_REPLAY

__all__ = ["ADK", "SPEC"]


SPEC = DialectSpec(
    "adk", ADK, title="Google ADK agent runs (`adk api_server`'s `/run_sse`: partial events, then their aggregate)",
    export=export, read_response=read_events, replay=ADK_REPLAY,
    # No `type`: an event is known by its author and invocation; the endpoint's error line by its details.
    keys=frozenset({"invocationId", "error_details"}), request_paths=("/run_sse",), stream_paths=("/run_sse",),
    codes=vendor_codes(
        "adk",
        ("adk-aggregate-differs", Severity.WARNING,
         "ADK: an aggregate event repeats its partial events' text differently; the aggregate's is kept"),
        ("adk-no-aggregate", Severity.WARNING,
         "ADK: partial events never followed by their aggregate (the stream was cut inside a model call)"),
        ("adk-other-lanes", Severity.INFO,
         "ADK: events of agents other than the followed one (sub-agents, parallel branches): listed, not folded")))
