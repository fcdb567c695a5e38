"""streamfold: a debugger and reference implementation for streamed LLM API replies.

    >>> import streamfold
    >>> result = streamfold.fold(open("capture.sse", "rb").read())
    >>> result.choices[0].content, result.diagnostics

The pipeline, each layer usable on its own: framing (`SSEParser`,
`NDJSONParser`, `JSONArrayParser`, `sniff`) -> decoding (`decode_frame`) ->
dialects -> merge -> `Result`. `Folder` runs it incrementally.
"""

from __future__ import annotations

from ._decode import Payload, PayloadKind, decode_frame
from ._eventstream import EventStreamParser
from ._events import Event, FinishReason, Finding, TextDelta, ToolCallDelta, ToolCallDone, UsageUpdate
from ._folder import Folder, fold
from ._frames import DEFAULT_MAX_FRAME_SIZE, Frame, FrameIssue
from ._json import FAST_DECODER
from ._jsonarray import JSONArrayParser
from ._ndjson import NDJSONParser
from ._report import Diagnostic, StreamError
from ._result import Block, Choice, Result, ToolCall, Usage
from ._sniff import sniff
from ._sse import SSEParser
from .dialects import DIALECTS

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_MAX_FRAME_SIZE",
    "DIALECTS",
    "FAST_DECODER",
    "Block",
    "Choice",
    "Diagnostic",
    "Event",
    "EventStreamParser",
    "FinishReason",
    "Finding",
    "Folder",
    "Frame",
    "FrameIssue",
    "JSONArrayParser",
    "NDJSONParser",
    "Payload",
    "PayloadKind",
    "Result",
    "SSEParser",
    "StreamError",
    "TextDelta",
    "ToolCall",
    "ToolCallDelta",
    "ToolCallDone",
    "Usage",
    "UsageUpdate",
    "decode_frame",
    "fold",
    "sniff",
]
