"""Framing: bytes in, `Frame`s out. One incremental, sans-I/O framer per transport.

    sse          the WHATWG event-stream interpretation, exactly
    ndjson       one JSON document per line
    jsonarray    a streamed JSON array, elements cut as they complete
    eventstream  AWS binary event-stream messages, CRCs checked
    websocket    WebSocket messages, one JSON record a line (a HAR's `_webSocketMessages`)
    sniff        which of the five a capture is, from its first bytes

Every framer has `feed(bytes) -> list[Frame]` and `close() -> list[Frame]`
(`framer.Framer`). `_records` and `_runs` are how the fold reads frames
without making them; nothing outside framing and the fold needs them.
"""

from __future__ import annotations

from ._records import FrameView
from .eventstream import EventStreamParser
from .frame import DEFAULT_MAX_FRAME_SIZE, Frame, FrameIssue
from .framer import Framer
from .jsonarray import JSONArrayParser
from .ndjson import NDJSONParser
from .sniff import TRANSPORTS, sniff
from .sse import SSEParser
from .websocket import WebSocketParser

__all__ = ["DEFAULT_MAX_FRAME_SIZE", "TRANSPORTS", "EventStreamParser", "Frame", "FrameIssue", "FrameView", "Framer",
           "JSONArrayParser", "NDJSONParser", "SSEParser", "WebSocketParser", "sniff"]
