"""Which capture answers a request, when the server serves several. In this order:

1. the request header `x-streamfold-capture: NAME` (or its index in the list, from 0);
2. a path that begins `/@NAME/` (a client's base URL `http://127.0.0.1:PORT/@NAME/v1`): the rest
   of the path is the request's path;
3. the one capture, when there is one;
4. the first capture whose recorded request path (a HAR, a store, curl -v output say it) is the
   request's path;
5. the first capture of the dialect the path belongs to (`/v1/chat/completions` -> openai-chat,
   `/v1/messages` -> anthropic, `/v1/responses` -> openai-responses, `…:streamGenerateContent` ->
   gemini, `/api/chat` and `/api/generate` -> ollama, ...).

Anything else is a miss: the server answers 404 with the list of names.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..fronts.serving import shorten
from .plan import Recording

__all__ = ["CAPTURE_HEADER", "PATH_DIALECTS", "choose"]

CAPTURE_HEADER = "x-streamfold-capture"

#: (a path ends with or holds this, the dialect), first match wins.
PATH_DIALECTS: tuple[tuple[str, str], ...] = (
    ("/chat/completions", "openai-chat"), ("/completions", "openai-completions"), ("/messages", "anthropic"),
    ("/responses", "openai-responses"), (":streamGenerateContent", "gemini"), (":generateContent", "gemini"),
    ("/api/chat", "ollama"), ("/api/generate", "ollama"), ("/converse-stream", "bedrock"),
    ("/invoke-with-response-stream", "bedrock"), ("/v2/chat", "cohere"), ("/generate_stream", "tgi"),
    ("/completion", "llama-cpp"), ("/api/v1/chat", "lmstudio"), ("/ai/run/", "cloudflare"))


def _dialect_of(path: str) -> str | None:
    return next((dialect for marker, dialect in PATH_DIALECTS if marker in path), None)


def _matches_dialect(recording: Recording, dialect: str) -> bool:
    if dialect == "bedrock":  # Claude through Bedrock folds as anthropic: the transport says Bedrock
        return recording.transport == "aws-eventstream"
    return recording.dialect == dialect


def choose(recordings: Sequence[Recording], path: str, named: str | None) -> tuple[Recording | None, str, str]:
    """(the capture, the request path it answers, how it was chosen); the capture is None on a miss,
    and the third item then says why."""
    if named is not None:
        wanted = named.strip()
        by_name = next((r for r in recordings if r.name == wanted), None)
        if by_name is None and wanted.isascii() and wanted.isdigit() and int(wanted) < len(recordings):
            by_name = recordings[int(wanted)]
        if by_name is None:
            return None, path, f"no capture is named {shorten(wanted)!r} (header {CAPTURE_HEADER})"
        return by_name, path, "header"
    if path.startswith("/@"):
        for recording in sorted(recordings, key=lambda r: -len(r.name)):
            prefix = f"/@{recording.name}"
            if path == prefix or path.startswith(prefix + "/"):
                return recording, path[len(prefix):] or "/", "path prefix"
        return None, path, f"no capture is named {shorten(path[2:].split('/')[0])!r} (the path's /@NAME/ prefix)"
    if len(recordings) == 1:
        return recordings[0], path, "the only capture"
    bare = path.split("?")[0]
    recorded = next((r for r in recordings if r.path is not None and r.path == bare), None)
    if recorded is not None:
        return recorded, path, "recorded path"
    dialect = _dialect_of(bare)
    if dialect is not None:
        found = next((r for r in recordings if _matches_dialect(r, dialect)), None)
        if found is not None:
            return found, path, f"dialect {dialect}"
        return None, path, f"no capture is of the {dialect} dialect that {shorten(bare)} belongs to"
    return None, path, f"no capture was recorded at {shorten(bare)} and the path names no dialect"
