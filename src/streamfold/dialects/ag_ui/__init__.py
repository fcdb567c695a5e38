"""AG-UI: agent events over SSE or NDJSON (see `fold`)."""

from __future__ import annotations

from ...findings import Severity
from ..spec import DialectSpec, vendor_codes
from .fold import AGUI, EVENT_TYPES
from .native import export_run, read_run, summarize_event
from .replay import AG_UI_REPLAY

__all__ = ["AGUI", "SPEC"]


SPEC = DialectSpec(
    "ag-ui", AGUI, title="AG-UI agent events",
    export=export_run, read_response=read_run, summary=summarize_event, replay=AG_UI_REPLAY,
    discriminators={"type": EVENT_TYPES}, fast_path=f"{__name__}.fast",
    codes=vendor_codes(
        "ag-ui",
        ("event-before-start", Severity.WARNING, "content, arguments or an end for a message, tool call or run "
         "that never started (the AG-UI verifier rejects it); folded"),
        ("event-after-end", Severity.WARNING, "content or arguments after their message's or tool call's end (the "
         "AG-UI verifier rejects it): not folded"),
        ("never-ended", Severity.WARNING, "a message, tool call, reasoning or step that started and never ended"),
        ("state-patch-failed", Severity.WARNING, "a `STATE_DELTA` JSON Patch that does not apply: the state stays "
         "as it was before it (patches are atomic)"),
        ("state-capped", Severity.WARNING, "a `STATE_DELTA` that would copy (or move deeper) more JSON values than "
         "the stream's state events carried, or nest the state deeper than a `STATE_SNAPSHOT` can: not applied, "
         "the state stays as it was"),
        ("unknown-ag-ui-event", Severity.INFO, "an AG-UI event type streamfold does not know; ignored")))
