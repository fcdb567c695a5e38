"""Ollama (`/api/chat`, `/api/generate`) as the replay server breaks it: the `{"error": "..."}`
line it writes mid-stream (B3) and as an HTTP body, and the `"done": true` line as the end. Ollama
sends each tool call whole, so there is nothing to re-send cumulatively. (Beside `fold.py`, which
is the fold and long enough.)"""

from __future__ import annotations

from typing import Any

from .._replay import DROP, ErrorFrame, ReplayQuirks, Rewrite

__all__ = ["OLLAMA_REPLAY", "OllamaReplay"]

_MESSAGES = {400: "invalid request", 404: 'model "llama3.2" not found, try pulling it first',
             429: "server busy, please try again.  maximum pending requests exceeded",
             500: "an error was encountered while running the model"}


class OllamaReplay(ReplayQuirks):
    """`{"error": ...}` mid-stream and as a body, the `done` line as the end."""

    no_fragments = "Ollama sends each tool call whole, with its arguments as one object: there are no fragments"

    def error_frame(self, previous: Any) -> ErrorFrame | None:
        return ErrorFrame(None, {"error": _MESSAGES[500]})

    def http_error(self, status: int) -> Any:
        return {"error": _MESSAGES.get(status, f"HTTP {status}")}

    def end_of_stream(self, event: str | None, data: str | None, payload: Any) -> Rewrite | str | None:
        return DROP if type(payload) is dict and payload.get("done") is True else None


OLLAMA_REPLAY = OllamaReplay()
