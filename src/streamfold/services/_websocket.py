"""A HAR WebSocket entry's messages as a capture body (see `_har`).

Chrome and Firefox export a WebSocket as an entry (`_resourceType:
"websocket"`, the 101 upgrade as its response) with `_webSocketMessages`:
`[{type: "send" | "receive", time: <epoch seconds>, opcode: 1 | 2, data}]`.
The body is those messages in the canonical form of the `websocket` transport
(`framing.websocket`): one message record a line, so offsets and lines point
at something a person can open. Each line's time becomes its arrival time,
measured from the entry's `startedDateTime` (the handshake) when that is
known and not after the first message, else from the first message.
Elements that are not messages are left out, each said as a repair.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from ..framing.websocket import finite_seconds, is_message, message_line

__all__ = ["WebSocketBody", "message_reads", "websocket_body"]

#: (body, reads as (offset, seconds), whether the times start at the entry's start, repairs).
WebSocketBody = tuple[bytes, tuple[tuple[int, float], ...] | None, bool, list[str]]


def websocket_body(messages: list[Any], started: Any) -> WebSocketBody:
    """The canonical JSONL body of `_webSocketMessages`, their arrival times, and what was left out."""
    problems: list[str] = []
    lines: list[bytes] = []
    times: list[float | None] = []
    for position, message in enumerate(messages):
        where = f"_webSocketMessages[{position}]"
        if not isinstance(message, dict):
            problems.append(f"{where} is not an object: left out")
            continue
        direction, data, opcode, time = (message.get("type"), message.get("data"), message.get("opcode", 1),
                                         message.get("time"))
        if direction not in ("send", "receive") or not isinstance(data, str):
            problems.append(f"{where} has no `type` send/receive with `data` text: left out")
            continue
        if type(opcode) is not int:
            problems.append(f"{where} has opcode {opcode!r}, not a number: read as a text message")
            opcode = 1
        seconds = finite_seconds(time)
        lines.append(message_line(direction, data, seconds, opcode))
        times.append(seconds)
    body = b"".join(lines)
    known = [seconds for seconds in times if seconds is not None]
    if not known or len(known) < len(times):
        return body, None, False, problems
    opened = _epoch(started)
    from_start = opened is not None and opened <= known[0]
    origin = opened if from_start and opened is not None else known[0]
    offsets = [0]
    for line in lines[:-1]:
        offsets.append(offsets[-1] + len(line))
    return body, _relative(offsets, known, origin), from_start, problems


def message_reads(body: bytes) -> tuple[tuple[int, float], ...] | None:
    """The arrival times of a JSONL of WebSocket message records (the canonical body), from the first
    message's `time`: None unless every line is a message with a time."""
    offsets: list[int] = []
    times: list[float] = []
    offset = 0
    for line in body.splitlines(keepends=True):
        if line.strip():
            try:
                value = json.loads(line)
            except (ValueError, RecursionError):
                return None
            seconds = finite_seconds(value.get("time")) if is_message(value) else None
            if seconds is None:
                return None
            offsets.append(offset)
            times.append(seconds)
        offset += len(line)
    return _relative(offsets, times, times[0]) if times else None


def _relative(offsets: list[int], times: list[float], origin: float) -> tuple[tuple[int, float], ...]:
    reads: list[tuple[int, float]] = []
    latest = 0.0
    for offset, seconds in zip(offsets, times):
        latest = max(latest, round(seconds - origin, 6))  # a clock step back is held, never a negative gap
        reads.append((offset, latest))
    return tuple(reads)


def _epoch(value: Any) -> float | None:
    """A HAR `startedDateTime` (ISO 8601) as epoch seconds, or None."""
    if not isinstance(value, str):
        return None
    try:  # Python 3.10's fromisoformat takes no `Z` (browsers write one); 3.11 does
        moment = datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value)
    except ValueError:
        return None
    return moment.timestamp() if moment.tzinfo is not None else None
