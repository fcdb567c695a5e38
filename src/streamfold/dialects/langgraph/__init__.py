"""LangGraph / LangSmith Agent Server run streams: the dialect (`fold`), LangChain's chunk merge
(`merge`), the context modes (`context`), the export (`native`) and how the replay server breaks it
(`replay`)."""

from __future__ import annotations

from ...findings import Severity
from ..spec import DialectSpec, vendor_codes
from .fold import LangGraph
from .native import export, read_response, summarize
from .replay import LANGGRAPH_REPLAY

__all__ = ["SPEC", "LangGraph"]


SPEC = DialectSpec(
    "langgraph", LangGraph, title="LangGraph / LangSmith Agent Server run streams",
    export=export, read_response=read_response, summary=summarize, replay=LANGGRAPH_REPLAY,
    # The `metadata` event's `{run_id, attempt}`; a `messages` event is a [message, metadata] list, which
    # no key names: asked after the table.
    keys=frozenset({"run_id"}), keyless=True, request_paths=("/runs/stream", "/runs/wait"),
    codes=vendor_codes(
        "langgraph",
        ("langgraph-other-lanes", Severity.INFO, "messages of graph namespaces (subgraphs) other than the one "
         "folded; listed with their first frame"),
        ("langgraph-merge-conflict", Severity.WARNING, "a message chunk LangChain's chunk addition raises on (a "
         "key whose JSON type changes): its text and calls folded, the merged message kept as it was"),
        ("langgraph-partial-rewritten", Severity.WARNING, "a legacy `messages/partial` whose text is not the text "
         "so far with more after it")))
