"""Gemini as the replay server breaks it: the `{"error": {code, message, status}}` object it
sends inside a stream (O12) and as an HTTP body, and its end, which is no frame of its own but a
`finishReason` on each candidate (taken out for `no-terminal`). Gemini sends each function call's
arguments whole, so there is nothing to re-send cumulatively."""

from __future__ import annotations

import copy
from typing import Any

from .._replay import ErrorFrame, ReplayQuirks, Rewrite

__all__ = ["GEMINI_REPLAY", "GeminiReplay"]

#: status -> (status name, message), as the Gemini API answers them.
_HTTP_ERRORS: dict[int, tuple[str, str]] = {
    400: ("INVALID_ARGUMENT", "Request contains an invalid argument."),
    403: ("PERMISSION_DENIED", "The caller does not have permission."),
    404: ("NOT_FOUND", "Requested entity was not found."),
    429: ("RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
    500: ("INTERNAL", "An internal error has occurred."),
    503: ("UNAVAILABLE", "The model is overloaded. Please try again later."),
    504: ("DEADLINE_EXCEEDED", "Deadline expired before operation could complete."),
}


def _error(status: int) -> dict[str, Any]:
    name, message = _HTTP_ERRORS.get(status, ("INTERNAL" if status >= 500 else "INVALID_ARGUMENT", f"HTTP {status}"))
    return {"error": {"code": status, "message": message, "status": name}}


class GeminiReplay(ReplayQuirks):
    """The error object mid-stream and as a body; `finishReason` taken out for `no-terminal`."""

    no_fragments = "Gemini sends each function call's arguments whole, as one object: there are no fragments"

    def error_frame(self, previous: Any) -> ErrorFrame | None:
        return ErrorFrame(None, _error(500))

    def http_error(self, status: int) -> Any:
        return _error(status)

    def end_of_stream(self, event: str | None, data: str | None, payload: Any) -> Rewrite | str | None:
        candidates = payload.get("candidates") if type(payload) is dict else None
        if type(candidates) is not list or not any(type(c) is dict and "finishReason" in c for c in candidates):
            return None
        changed = copy.deepcopy(payload)
        for candidate in changed["candidates"]:
            if type(candidate) is dict:
                candidate.pop("finishReason", None)
        return Rewrite(changed)


GEMINI_REPLAY = GeminiReplay()
