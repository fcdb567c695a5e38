"""Which capture answers a request, when the server serves several. In this order:

1. the request header `x-streamfold-capture: NAME` (or its index in the list, from 0);
2. a path that begins `/@NAME/` (a client's base URL `http://127.0.0.1:PORT/@NAME/v1`): the rest
   of the path is the request's path;
3. the one capture, when there is one;
4. the first capture whose recorded request path (a HAR, a store, curl -v output say it) is the
   request's path;
5. the first capture of the dialect the path belongs to, by the request paths each dialect's spec
   declares (`/v1/chat/completions` -> openai-chat, `/v1/messages` -> anthropic, `/v1/responses` ->
   openai-responses, `…:streamGenerateContent` -> gemini, `/api/chat` and `/api/generate` -> ollama,
   ...: `registry.request_path_dialect`).

Anything else is a miss: the server answers 404 with the list of names.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..dialects.registry import request_path_dialect
from ..dialects.spec import DialectSpec
from ..fronts.serving import shorten
from .plan import Recording

__all__ = ["CAPTURE_HEADER", "choose"]

CAPTURE_HEADER = "x-streamfold-capture"


def _matches_dialect(recording: Recording, spec: DialectSpec) -> bool:
    if spec.transports:  # Claude through Bedrock folds as anthropic: the transport says Bedrock
        return recording.transport in spec.transports
    return recording.dialect == spec.name


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
    spec = request_path_dialect(bare)
    if spec is not None:
        found = next((r for r in recordings if _matches_dialect(r, spec)), None)
        if found is not None:
            return found, path, f"dialect {spec.name}"
        return None, path, f"no capture is of the {spec.name} dialect that {shorten(bare)} belongs to"
    return None, path, f"no capture was recorded at {shorten(bare)} and the path names no dialect"
