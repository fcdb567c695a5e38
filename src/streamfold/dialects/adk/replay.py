"""ADK runs as the replay server breaks them: the line `/run_sse` sends when the run raises (`error` and
`error_details`, no event), FastAPI's error body, and the final responses as the end of the run."""

from __future__ import annotations

from typing import Any

from .._replay import DROP, ErrorFrame, ReplayQuirks, Rewrite
from .fold import claims_event, is_final_response

__all__ = ["ADK_REPLAY"]


class ADKReplay(ReplayQuirks):
    no_fragments = "ADK events carry each function call whole, so there are no argument fragments to re-send"

    def error_frame(self, previous: Any) -> ErrorFrame | None:
        message = ("500 INTERNAL. {'error': {'code': 500, 'message': 'Internal error encountered.', "
                   "'status': 'INTERNAL'}}")
        return ErrorFrame(None, {"error": f"ServerError: {message}", "error_details": {
            "error_type": "ServerError", "error_message": message, "timestamp": 1796650971.27}})

    def http_error(self, status: int) -> Any:
        return {"detail": "Session not found" if status == 404 else "Internal Server Error"}

    def end_of_stream(self, event: str | None, data: str | None, payload: Any) -> Rewrite | str | None:
        """A run says it is over with its final responses: without them it is cut inside the last model call."""
        if claims_event(payload) and "author" in payload and is_final_response(payload):
            return DROP
        return None


ADK_REPLAY = ADKReplay()
