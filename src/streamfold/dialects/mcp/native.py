"""The MCP export and its reverse: the JSON-RPC response a non-streaming (`application/json`) reply
to the POST would have been, taken from the native snapshot (the response arrives whole, in one
event, so nothing needs rebuilding). A stream cut before its response exports what the official
client hands its caller then: a JSON-RPC error with the SDK's CONNECTION_CLOSED code (-32000).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._base import compact_json

if TYPE_CHECKING:
    from ...result import Result

__all__ = ["CONNECTION_CLOSED", "export_message", "read_message", "summarize_message"]

#: The mcp SDK's code for "the connection closed before a response arrived" (never sent on the wire).
CONNECTION_CLOSED = -32000


def export_message(result: Result) -> dict[str, Any]:
    """The stream's JSON-RPC response (or error) message, as it came."""
    native = result.native or {}
    response = native.get("response")
    if isinstance(response, dict):
        return {"jsonrpc": "2.0", **{key: value for key, value in response.items() if key != "jsonrpc"}}
    return {"jsonrpc": "2.0", "id": None,
            "error": {"code": CONNECTION_CLOSED, "message": "the stream ended before the response arrived"}}


def read_message(value: object) -> dict[str, Any] | None:
    """The facts of a JSON-RPC response body: a `tools/call` result's text content, or an error."""
    if not (isinstance(value, dict) and value.get("jsonrpc") == "2.0" and ("result" in value or "error" in value)
            and "method" not in value):
        return None
    result = value.get("result")
    content = result.get("content") if isinstance(result, dict) else None
    texts = [item.get("text") for item in content or () if isinstance(item, dict) and item.get("type") == "text"]
    finish = None
    if isinstance(result, dict):
        finish = "input_required" if result.get("resultType") == "input_required" else \
            "isError" if result.get("isError") is True else "result"
    return {"content": "\n".join(text for text in texts if isinstance(text, str)), "reasoning": None,
            "tool_calls": [], "finish_reason": finish, "usage": None}


def summarize_message(value: object) -> str:
    """One line for a frame: the method and its gist, or the response's id and what it holds."""
    if isinstance(value, list):
        return f"batch of {len(value)}: " + "; ".join(summarize_message(item) for item in value[:3])
    if not isinstance(value, dict):
        return compact_json(value)
    method = value.get("method")
    given = value.get("params")
    params: dict[str, Any] = given if isinstance(given, dict) else {}
    if method == "notifications/progress":
        total = f"/{params.get('total')}" if params.get("total") is not None else ""
        message = f" {compact_json(params['message'], 60)}" if params.get("message") else ""
        return f"progress {params.get('progress')}{total}{message}"
    if method == "notifications/message":
        return f"log {params.get('level')}: {compact_json(params.get('data'), 80)}"
    if isinstance(method, str):
        kind = "request" if "id" in value else "notification"
        return f"{kind} {method}" + (f" (id {compact_json(value['id'])})" if "id" in value else "")
    where = f"response id {compact_json(value.get('id'))}"
    error = value.get("error")
    if error is not None:
        detail = error.get("message") if isinstance(error, dict) else error
        return f"{where}: error {compact_json(detail, 100)}"
    result = value.get("result")
    if isinstance(result, dict) and isinstance(result.get("content"), list):
        flags = ", isError" if result.get("isError") is True else ""
        structured = ", structuredContent" if "structuredContent" in result else ""
        return f"{where}: {len(result['content'])} content item(s){structured}{flags}"
    return f"{where}: result {compact_json(result, 100)}"
