"""The framer the fold uses for each transport: the plain parser, with runs where the transport
has them (`_runs` for SSE and NDJSON, `_eventstream_runs`, `_websocket_runs`). Each gives the
frames its plain parser gives, however the bytes arrive."""

from __future__ import annotations

from ._eventstream_runs import EventStreamRunParser
from ._runs import NDJSONRunParser, SSERunParser
from .framer import Framer
from .jsonarray import JSONArrayParser
from .websocket import WebSocketParser

__all__ = ["FOLD_FRAMERS"]

_websocket: type[Framer]
try:
    from ._websocket_runs import WebSocketRunParser

    _websocket = WebSocketRunParser
except ImportError:  # without msgspec (its Structs decode the runs): the plain parser
    _websocket = WebSocketParser

#: transport -> the framer class the fold uses.
FOLD_FRAMERS: dict[str, type[Framer]] = {
    "sse": SSERunParser, "ndjson": NDJSONRunParser, "json-array": JSONArrayParser,
    "aws-eventstream": EventStreamRunParser, "websocket": _websocket}
