"""MCP (Streamable HTTP) as the replay server breaks it: a JSON-RPC error response (`-32603`) where the
server fails, to the id of the request the stream answers (the last response's, when the stream had one
before the break; else null), the response as the end (the notifications before it stay), and JSON-RPC's
error body for an HTTP error. MCP sends a tool's result whole: there are no argument fragments."""

from __future__ import annotations

from typing import Any

from .._replay import DROP, ErrorFrame, ReplayQuirks, Rewrite

__all__ = ["MCP_REPLAY"]

#: JSON-RPC's codes for what an HTTP status says (the MCP SDKs' servers answer a bad request with -32600).
_CODES = {400: (-32600, "Bad Request"), 404: (-32001, "Session not found"), 405: (-32000, "Method not allowed")}


def _error(ident: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}


def _is_response(payload: Any) -> bool:
    return type(payload) is dict and "id" in payload and "method" not in payload and (
        "result" in payload or "error" in payload)


class MCPReplay(ReplayQuirks):
    no_fragments = "MCP sends each tool result and request whole: there are no argument fragments"

    def error_frame(self, previous: Any) -> ErrorFrame | None:
        ident = previous.get("id") if _is_response(previous) else None
        return ErrorFrame("message", _error(ident, -32603, "Internal error"))

    def http_error(self, status: int) -> Any:
        code, message = _CODES.get(status, (-32603, "Internal error"))
        return _error(None, code, message)

    def end_of_stream(self, event: str | None, data: str | None, payload: Any) -> Rewrite | str | None:
        return DROP if _is_response(payload) else None


MCP_REPLAY = MCPReplay()
