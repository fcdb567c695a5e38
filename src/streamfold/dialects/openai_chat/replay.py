"""OpenAI Chat Completions as the replay server breaks it: the error object OpenAI (and the
compatible servers) send inside a stream and as an HTTP body, `data: [DONE]` as the end, and each
`delta.tool_calls[].function.arguments` fragment for the cumulative re-send some gateways make (O8)."""

from __future__ import annotations

import copy
from typing import Any

from .._replay import DROP, ArgumentsRewriter, ErrorFrame, ReplayQuirks, Rewrite, accumulate

__all__ = ["OPENAI_CHAT_REPLAY", "OpenAIReplay", "openai_error"]

#: status -> (type, code, message), as OpenAI's API answers them.
_HTTP_ERRORS: dict[int, tuple[str, str | None, str]] = {
    400: ("invalid_request_error", None, "Invalid request."),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    403: ("invalid_request_error", "unsupported_country_region_territory", "Country, region, or territory not "
          "supported."),
    404: ("invalid_request_error", "model_not_found", "The model does not exist or you do not have access to it."),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached for requests. Please try again in 20s."),
    500: ("server_error", None, "The server had an error while processing your request. Sorry about that!"),
    503: ("server_error", None, "The engine is currently overloaded, please try again later."),
}


def openai_error(status: int) -> dict[str, Any]:
    """OpenAI's `{"error": {...}}` body for an HTTP status (shared by the Responses API)."""
    kind, code, message = _HTTP_ERRORS.get(status, ("server_error" if status >= 500 else "invalid_request_error",
                                                    None, f"HTTP {status}"))
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


class OpenAIReplay(ReplayQuirks):
    """`data: {"error": {...}}` mid-stream, `[DONE]` as the end, argument fragments per (choice, index)."""

    def error_frame(self, previous: Any) -> ErrorFrame | None:
        return ErrorFrame(None, openai_error(500))

    def http_error(self, status: int) -> Any:
        return openai_error(status)

    def end_of_stream(self, event: str | None, data: str | None, payload: Any) -> Rewrite | str | None:
        return DROP if data is not None and data.strip() == "[DONE]" else None

    def cumulative_arguments(self) -> ArgumentsRewriter | None:
        sent: dict[Any, str] = {}

        def rewrite(event: str | None, payload: Any) -> Any:
            if type(payload) is not dict or type(payload.get("choices")) is not list:
                return None
            changed = copy.deepcopy(payload)
            touched = False
            for position, choice in enumerate(changed["choices"]):
                delta = choice.get("delta") if type(choice) is dict else None
                calls = delta.get("tool_calls") if type(delta) is dict else None
                for order, call in enumerate(calls if type(calls) is list else ()):
                    function = call.get("function") if type(call) is dict else None
                    if type(function) is not dict:
                        continue
                    key = (choice.get("index", position), call.get("index", order))
                    joined = accumulate(sent, key, function.get("arguments"))
                    if joined is not None and joined != function["arguments"]:
                        function["arguments"] = joined
                        touched = True
            return changed if touched else None

        return rewrite


OPENAI_CHAT_REPLAY = OpenAIReplay()
