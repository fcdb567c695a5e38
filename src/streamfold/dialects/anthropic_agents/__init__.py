"""Anthropic Managed Agents' session event stream: the dialect (`fold`), its event types and previews
(`events`), the events list page it exports (`native`) and how the replay server breaks it (`replay`)."""

from __future__ import annotations

from ...findings import Severity
from ..spec import DialectSpec, vendor_codes
from .events import BUFFERED_TYPES, PREVIEW_TYPES, claims_event, summarize
from .fold import AnthropicAgents
from .native import export, read_events_page
from .replay import AGENTS_REPLAY

__all__ = ["SPEC", "AnthropicAgents"]


SPEC = DialectSpec(
    "anthropic-agents", AnthropicAgents, title="Anthropic Managed Agents session event stream (beta)",
    claims=claims_event, export=export, read_response=read_events_page, summary=summarize, replay=AGENTS_REPLAY,
    discriminators={"type": BUFFERED_TYPES | PREVIEW_TYPES},
    request_paths=("/events/stream",), stream_paths=("/events/stream",),
    codes=vendor_codes(
        "anthropic-agents",
        ("agents-preview-unreconciled", Severity.WARNING, "a preview (`event_start`/`event_delta`) no buffered event "
         "with its id concluded: the stream was cut mid-event, or the model request ended without it"),
        ("agents-preview-differs", Severity.INFO, "a preview's text is not the beginning of the event that "
         "concluded it: the deltas showed other words"),
        ("agents-error-retried", Severity.WARNING, "a `session.error` the server retries: the turn goes on"),
        ("agents-other-lanes", Severity.INFO, "the stream holds threads (sub-agents) besides the one folded; "
         "they are listed with their first frame"),
        ("agents-later-turns", Severity.INFO, "the session went on after the first turn, which is the one folded; "
         "the later events are listed")))
