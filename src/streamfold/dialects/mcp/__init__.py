"""MCP Streamable HTTP: JSON-RPC 2.0 messages in SSE (see `fold`), its notifications' fast shape (`fast`)."""

from __future__ import annotations

from ...findings import Severity
from ..spec import DialectSpec, vendor_codes
from .fold import MCP
from .native import export_message, read_message, summarize_message
from .replay import MCP_REPLAY

__all__ = ["MCP", "SPEC"]


SPEC = DialectSpec(
    "mcp", MCP, title="MCP Streamable HTTP (JSON-RPC 2.0 in SSE)",
    export=export_message, read_response=read_message, summary=summarize_message, replay=MCP_REPLAY,
    keys=frozenset({"jsonrpc"}), keyless=True, request_paths=("/mcp",), fast_path=f"{__name__}.fast",
    codes=vendor_codes(
        "mcp",
        ("jsonrpc-missing", Severity.WARNING, "a JSON-RPC message without `\"jsonrpc\": \"2.0\"` (the official client "
         "rejects it); folded as if it had it"),
        ("response-to-unknown-id", Severity.WARNING, "a response to an id that is not the request's: a second "
         "response (not folded), or one to a request the server itself sent"),
        ("batch-not-allowed", Severity.WARNING, "a JSON-RPC batch (an array of messages), removed from MCP in "
         "2025-06-18; each message is folded"),
        ("event-ignored-by-sdk", Severity.WARNING, "an SSE event named other than `message`, which the mcp SDK's "
         "reader skips"),
        ("tool-result-error", Severity.INFO, "the tool result has `isError: true`: its text is the error, for the "
         "model; the finish reason is `error`"),
        ("resumable-cut", Severity.INFO, "the stream ended before its response, and the last `id:` says where a "
         "client resumes (`Last-Event-ID`)"),
        ("not-resumable", Severity.INFO, "a 2026-07-28 stream ended before its response: no stream resumes there, "
         "so the client sends the request again (a listen stream: listens again)"),
        ("request-on-stream", Severity.WARNING, "a request from the server (sampling, elicitation) on a 2026-07-28 "
         "stream, where servers answer an InputRequiredResult instead"),
        ("input-required", Severity.INFO, "the response is an InputRequiredResult (2026-07-28): the server needs "
         "the client's answers before it gives the result; the finish reason is `input_required`"),
        ("mcp-header-missing", Severity.WARNING, "a 2026-07-28 request without the `Mcp-Method` header (or, for "
         "tools/call, resources/read and prompts/get, `Mcp-Name`), which servers must refuse (400, -32020); this one "
         "streamed an answer anyway")))
