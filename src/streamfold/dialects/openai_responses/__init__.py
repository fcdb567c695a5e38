"""OpenAI Responses API (`POST /v1/responses`, `stream: true`): reference §4.2,
traps R1-R4 and U1. The dialect is `fold.OpenAIResponses`; `items` and
`events` keep the output items and fold their events, `fast` holds the hot
payload shapes, `native` the export, `summary` the frames table's line.
"""

from __future__ import annotations

from ...findings import Severity
from ..spec import DialectSpec, vendor_codes
from .fold import OpenAIResponses
from .native import export, may_hold_opaque, opaque_values, read_response
from .replay import RESPONSES_REPLAY
from .summary import summarize

__all__ = ["SPEC", "OpenAIResponses"]


SPEC = DialectSpec(
    "openai-responses", OpenAIResponses, replay=RESPONSES_REPLAY, title="OpenAI Responses API, over SSE or WebSocket",
    export=export, opaque_state=opaque_values, may_hold_opaque=may_hold_opaque, read_response=read_response,
    summary=summarize,
    discriminators={"type": frozenset({"response.*"})}, keyless=True,
    request_paths=("/responses",), fast_path=f"{__name__}.fast",
    codes=vendor_codes(
        "openai-responses",
        ("done-mismatch", Severity.WARNING, "a `.done` value differs from what the deltas built; the final value "
         "is kept"),
        ("done-without-deltas", Severity.WARNING, "a `.done` value for a part no delta streamed"),
        ("output-from-terminal", Severity.WARNING, "the reply came only in the terminal `response.output`"),
        ("empty-terminal-output", Severity.WARNING, "the terminal response has an empty `output` next to streamed "
         "items"),
        ("sequence-gap", Severity.WARNING, "`sequence_number` skips or goes back: events were lost or reordered"),
        ("annotation-out-of-order", Severity.INFO, "annotations arrived out of their index order"),
        ("missing-added-event", Severity.WARNING, "deltas for an item or part whose `.added` event never came"),
        ("event-name-mismatch", Severity.INFO, "the SSE event name differs from the JSON `type`"),
        ("unknown-event", Severity.INFO, "an event type streamfold does not fold; ignored"),
        ("response-id-changed", Severity.WARNING, "the response id changed within one stream"),
        ("no-final-response", Severity.WARNING, "the stream ended with `[DONE]` and no final response event"),
        ("nonstandard-terminal", Severity.INFO, "a gateway's `response.done` instead of `response.completed`"),
        ("responses-other-agents", Severity.INFO, "a multi-agent response: events of agents other than the followed "
         "one (the root, by default); listed, not folded"),
        ("responses-inject-failed", Severity.WARNING, "WebSocket: input the client injected into a response was "
         "not committed (`response.inject.failed`)")))
