"""WebSocket framing: a frame is one WebSocket message, with its direction and time.

A WebSocket has no byte framing a capture keeps (the browser has already cut
the socket into messages), so a capture of one is a list of messages. Its
canonical form, which `streamfold` reads and writes, is JSONL with one
message per line, each line exactly one element of a HAR entry's
`_webSocketMessages` (what Chrome and Firefox export):

    {"type": "receive", "time": 1764633600.25, "opcode": 1, "data": "{\\"type\\":\\"response.created\\",...}"}

so `offset` and `line` point into that text and `frames`/`show` work on it.
`jq -c '.log.entries[N]._webSocketMessages[]' x.har` gives the same lines.

- A received text message (opcode 1) is a frame whose `data` is the message.
- A sent message (the client's `response.create`, `session.update`) is context,
  not reply: its frame has `event` "send", no `data` (so the fold skips it, as
  it skips an SSE comment) and the message in `comments`.
- A binary message (opcode 2, base64 in `data`) whose bytes are a JSON object in UTF-8 is read as that
  text (Gemini Live sends every message as one); any other binary message (audio, an image) is not
  folded: an issue says so.
- Lanes. OpenAI's Responses WebSocket mode may multiplex responses on one
  socket, each event echoing its `response.create`'s `stream_id`. The fold
  follows one reply, so the frames of the first lane (or of the one asked for,
  `fold(..., lane=ID)`) are the reply and the
  other lanes' messages become data-less frames, with one `websocket-other-stream`
  issue at the first message of each (their text stays in `comments`).
  Messages without a `stream_id` belong to every lane.

Every frame's `headers` hold ("direction", "send" | "receive"), ("time", epoch
seconds) when known, ("opcode", n) and ("stream_id", ...) when present.
A line that is not such a message is a `websocket-bad-message` error frame.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from typing import Any

from .._json import loads, loads_noting, replacements
from ._records import FrameRecord, FramerOutput, new_record
from .frame import DEFAULT_MAX_FRAME_SIZE, FrameIssue
from .ndjson import NDJSONParser

__all__ = ["MESSAGE_KEYS", "WebSocketParser", "finite_seconds", "is_message", "message_line"]

#: The keys of a `_webSocketMessages` element; a line with others is not a message.
MESSAGE_KEYS = frozenset({"type", "time", "opcode", "data"})
_DIRECTIONS = ("send", "receive")


def is_message(value: object) -> bool:
    """Is this decoded line a WebSocket message record (a `_webSocketMessages` element)?"""
    return (type(value) is dict and value.get("type") in _DIRECTIONS and type(value.get("data")) is str
            and MESSAGE_KEYS.issuperset(value))


def message_line(direction: str, data: str, time: float | None = None, opcode: int = 1) -> bytes:
    """One message as its canonical JSONL line (with its LF): what the HAR reader writes for each
    element of `_webSocketMessages`, and what a test or a recorder writes by hand."""
    record: dict[str, Any] = {"type": direction}
    if time is not None:
        record["time"] = time
    record["opcode"] = opcode
    record["data"] = data
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass") + b"\n"


class WebSocketParser(NDJSONParser):
    """Incremental, sans-I/O reader of WebSocket messages (JSONL of message records) into frames."""

    def __init__(self, *, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE, lane: str | None = None) -> None:
        super().__init__(max_frame_size=max_frame_size)
        #: The `stream_id` asked for (None: the first one).
        self.lane = lane
        self.followed_lane: str | None = None
        #: Every `stream_id` received: -> the index of its first frame.
        self.lanes: dict[str, int] = {}

    def _take_line(self, line: bytes, terminator: bytes, frames: list[FramerOutput]) -> None:
        before = len(frames)
        super()._take_line(line, terminator, frames)
        if len(frames) > before:
            record = frames[-1]
            assert type(record) is tuple
            frames[-1] = self._message(record)

    def _message(self, line: FrameRecord) -> FrameRecord:
        """The line's record (its data the line's text) made into the message's frame."""
        index, offset, number, text, raw, terminated, issues = (line[0], line[1], line[2], line[4], line[8],
                                                                 line[9], line[10])
        if text is None:  # an oversized line: its issue says it all
            return line
        try:
            # The core's decoding: a lone surrogate escape in `data` (no text a socket can carry) becomes
            # U+FFFD and NaN null, as in any payload, so the frame's text is valid Unicode.
            value, replaced, surrogates = loads_noting(text)
        except ValueError:
            value, replaced, surrogates = None, (), 0
        if replaced or surrogates:
            issues = (*issues, FrameIssue(
                "non-strict-json", offset, number,
                f"line {number} (a WebSocket message record) is JSON only to lenient decoders: "
                f"{replacements(replaced, surrogates)}, so that the frame holds only strict JSON and valid text"))
        if not is_message(value):
            issue = FrameIssue("websocket-bad-message", offset, number,
                               f"line {number} is not a WebSocket message (an object with `type` send or receive "
                               "and `data` text, as in a HAR's `_webSocketMessages`); it was not folded", text[:200])
            return new_record(index, offset, number, None, None, None, None, (), raw, terminated,
                              (*issues, issue), ())
        direction, data, opcode, time = value["type"], value["data"], value.get("opcode", 1), value.get("time")
        headers: list[tuple[str, Any]] = [("direction", direction)]
        if (seconds := finite_seconds(time)) is not None:
            headers.append(("time", seconds))
        headers.append(("opcode", opcode))
        if opcode == 2:
            text = _json_text(data)
            if text is None:
                return self._binary(line, data, headers)
            data = text
        lane = _stream_id(data)
        if lane is not None:
            headers.append(("stream_id", lane))
        if direction == "send":
            return new_record(index, offset, number, "send", None, None, None, (data,), raw, terminated, issues,
                              tuple(headers))
        if lane is not None and lane not in self.lanes:
            self.lanes[lane] = index
            if self.followed_lane is None and (self.lane is None or lane == self.lane):
                self.followed_lane = lane
            else:
                followed = f"stream_id {self.followed_lane!r} (the first lane)" if self.lane is None \
                    else f"stream_id {self.lane!r} (the lane asked for)"
                issues = (*issues, FrameIssue(
                    "websocket-other-stream", offset, number,
                    f"messages of stream_id {lane!r} start here; the fold follows {followed}, so this lane's "
                    "messages are listed as frames but not folded"))
        if lane is not None and lane != self.followed_lane:
            return new_record(index, offset, number, None, None, None, None, (data,), raw, terminated, issues,
                              tuple(headers))
        return new_record(index, offset, number, None, data, None, None, (), raw, terminated, issues, tuple(headers))

    def _binary(self, line: FrameRecord, data: str, headers: list[tuple[str, Any]]) -> FrameRecord:
        index, offset, number, raw, terminated, issues = line[0], line[1], line[2], line[8], line[9], line[10]
        try:
            size = f"{len(base64.b64decode(data, validate=True))} bytes"
        except (binascii.Error, ValueError):
            size = "data that is not valid base64"
        issue = FrameIssue("websocket-binary", offset, number,
                           f"line {number} is a binary WebSocket message ({size}); only text messages are folded")
        return new_record(index, offset, number, headers[0][1] if headers[0][1] == "send" else None, None, None,
                          None, (), raw, terminated, (*issues, issue), tuple(headers))


def _json_text(data: str) -> str | None:
    """The text of a binary message whose bytes are a JSON object in UTF-8 (Gemini Live sends every message
    so, and its SDK reads bytes and text alike), or None for other bytes (audio, an image)."""
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    if not raw.lstrip(b" \t\r\n").startswith(b"{"):
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def finite_seconds(value: Any) -> float | None:
    """A message's `time` as epoch seconds, when it is a number a float holds (not NaN, not 10**400)."""
    if type(value) is float:
        return value if math.isfinite(value) else None
    if type(value) is int:
        try:
            return float(value)
        except OverflowError:
            return None
    return None


def _stream_id(data: str) -> str | None:
    """The `stream_id` of a Responses WebSocket event, when the message has one (read only when the
    text names it: most messages do not)."""
    if '"stream_id"' not in data:
        return None
    try:
        value = loads(data)
    except ValueError:
        return None
    lane = value.get("stream_id") if type(value) is dict else None
    return lane if type(lane) is str and lane else None

