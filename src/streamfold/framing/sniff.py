"""Choose the transport from the first bytes of a capture (reference §3)."""

from __future__ import annotations

import json

from .eventstream import looks_like_eventstream
from .hints import line_formats
from .websocket import is_message

__all__ = ["TRANSPORTS", "sniff"]

TRANSPORTS = ("sse", "ndjson", "json-array", "aws-eventstream", "websocket")

_BOM = b"\xef\xbb\xbf"
_SSE_STARTS = (b"data:", b"data\n", b"data\r", b"event:", b"id:", b"retry:", b":")
# Enough to see past a long first NDJSON line; past it we stop waiting.
_SNIFF_LIMIT = 64 * 1024


def sniff(head: bytes, final: bool = False) -> str | None:
    """Return "sse", "ndjson", "json-array", "aws-eventstream" or "websocket" for a capture starting with `head`.

    "websocket" is JSONL whose first line is a WebSocket message record (`framing.websocket`):
    no vendor's NDJSON payload is an object of only `type` send/receive, `data` text, `time`, `opcode`.

    None means "feed more bytes" and only happens while `final` is False.
    """
    if looks_like_eventstream(head):
        return "aws-eventstream"
    if not final and len(head) < 12 and head[:1] == b"\x00":
        return None  # could be a binary prelude (its length's high byte is 0)
    if not final and len(head) < 3 and _BOM.startswith(head):
        return None  # could still be a BOM
    text = head[3:] if head.startswith(_BOM) else head
    text = text.lstrip(b" \t\r\n")
    if not text:
        return "sse" if final else None
    first = text[:1]
    if first == b"[":
        return "json-array"
    if first == b"{":
        newline = min((at for at in (text.find(b"\n"), text.find(b"\r")) if at >= 0), default=-1)
        if newline < 0 and not final and len(head) < _SNIFF_LIMIT:
            return None
        line = text if newline < 0 else text[:newline]
        try:
            # Decoded leniently: a bad byte in a string does not make the line less of a document.
            first_document = json.loads(line.decode("utf-8", "replace"))
        except RecursionError:
            # Too deep to parse here; a line that closes its object is one document.
            return "ndjson" if line.rstrip().endswith(b"}") else "json-array"
        except ValueError:
            # A pretty-printed object (or a cut one): frame it by brackets.
            return "ndjson" if newline < 0 and final else "json-array"
        return "websocket" if is_message(first_document) else "ndjson"
    if text.startswith(_SSE_STARTS):
        return "sse"
    for line_format in line_formats():
        # A dialect's own line format (framing.hints): framed as its hint says.
        verdict = line_format.sniff(text, final)
        if verdict is None:
            return None
        if verdict:
            return line_format.transport
    if not final and len(text) < 6 and any(s.startswith(text) for s in _SSE_STARTS):
        return None
    return "sse"
