"""LangGraph run streams as the replay server breaks them: the `error` event the Agent Server sends
when the run raises, its `{"detail": ...}` HTTP error body, and each tool call chunk's `args` of a
`messages` event for a cumulative re-send. There is no end sign to drop: the server closes the stream."""

from __future__ import annotations

from typing import Any

from .._replay import ArgumentsRewriter, ErrorFrame, ReplayQuirks
from .context import is_metadata_tuple

__all__ = ["LANGGRAPH_REPLAY"]

_DETAILS = {400: "Bad Request", 401: "Unauthorized", 404: "Thread not found", 409: "Thread is busy",
            422: "Unprocessable Entity", 429: "Too Many Requests", 500: "Internal Server Error",
            503: "Service Unavailable"}


class LangGraphReplay(ReplayQuirks):
    no_end_sign = ("a LangGraph run stream has no end sign to drop: the Agent Server closes the stream when the run "
                   "is done (cut it between two events with `cut:N:0` to see what a client cannot tell apart)")

    def error_frame(self, previous: Any) -> ErrorFrame | None:
        return ErrorFrame("error", {"error": "InternalServerError", "message": "The run raised an exception"})

    def http_error(self, status: int) -> Any:
        return {"detail": _DETAILS.get(status, f"HTTP {status}")}

    def cumulative_arguments(self) -> ArgumentsRewriter | None:
        sent: dict[Any, str] = {}

        def rewrite(event: str | None, payload: Any) -> Any:
            if not is_metadata_tuple(payload) or not payload[0].get("tool_call_chunks"):
                return None
            message, metadata = payload
            calls, changed = [], False
            for call in message["tool_call_chunks"]:
                fragment = call.get("args") if type(call) is dict else None
                if type(fragment) is not str:
                    calls.append(call)
                    continue
                key = (message.get("id"), call.get("index"))
                sent[key] = sent.get(key, "") + fragment
                changed |= sent[key] != fragment
                calls.append({**call, "args": sent[key]})
            return [{**message, "tool_call_chunks": calls}, metadata] if changed else None

        return rewrite


LANGGRAPH_REPLAY = LangGraphReplay()
