"""streamfold: a debugger and reference implementation for streamed LLM API replies.

    >>> import streamfold
    >>> result = streamfold.fold(open("capture.sse", "rb").read())
    >>> result.choices[0].content, result.diagnostics

The pipeline, each layer usable on its own: framing (`SSEParser`,
`NDJSONParser`, `JSONArrayParser`, `sniff`) -> decoding (`decode_frame`) ->
dialects -> merge -> `Result`. `Folder` runs it incrementally.
"""

from __future__ import annotations

from ._json import FAST_DECODER
from .decoding import Payload, PayloadKind, decode_frame
from .dialects import DIALECTS
from .events import Event, Finding, FinishReason, TextDelta, ToolCallDelta, ToolCallDone, UsageUpdate
from .findings import Diagnostic, Severity, StreamError
from .folding import Events, Folder, Phase, fold
from .framing import (
                      DEFAULT_MAX_FRAME_SIZE,
                      EventStreamParser,
                      Frame,
                      FrameIssue,
                      JSONArrayParser,
                      NDJSONParser,
                      SSEParser,
                      sniff,
)
from .result import Block, Choice, Lane, Result, ToolCall, Usage
from .trace import Trace

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
                      "Events",
                      "Finding",
                      "FinishReason",
                      "Folder",
                      "Frame",
                      "FrameIssue",
                      "JSONArrayParser",
                      "Lane",
                      "NDJSONParser",
                      "Payload",
                      "PayloadKind",
                      "Phase",
                      "Result",
                      "SSEParser",
                      "Severity",
                      "StreamError",
                      "TextDelta",
                      "ToolCall",
                      "ToolCallDelta",
                      "ToolCallDone",
                      "Trace",
                      "Usage",
                      "UsageUpdate",
                      "decode_frame",
                      "fold",
                      "sniff",
]
