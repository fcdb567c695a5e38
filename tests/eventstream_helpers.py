"""Build AWS event-stream messages (reference §2.3) for tests: the encoder
streamfold itself does not need."""

from __future__ import annotations

import json
import struct
import uuid
import zlib
from typing import Any


def header(name: str, value: Any) -> bytes:
    encoded = name.encode()
    out = bytes([len(encoded)]) + encoded
    if value is True:
        return out + b"\x00"
    if value is False:
        return out + b"\x01"
    if isinstance(value, uuid.UUID):
        return out + b"\x09" + value.bytes
    if isinstance(value, int):
        return out + b"\x05" + struct.pack(">q", value)
    if isinstance(value, bytes):
        return out + b"\x06" + struct.pack(">H", len(value)) + value
    text = str(value).encode()
    return out + b"\x07" + struct.pack(">H", len(text)) + text


def message(headers: dict[str, Any], payload: bytes | dict[str, Any] | str) -> bytes:
    if isinstance(payload, dict):
        payload = json.dumps(payload).encode()
    elif isinstance(payload, str):
        payload = payload.encode()
    block = b"".join(header(name, value) for name, value in headers.items())
    total = 12 + len(block) + len(payload) + 4
    prelude = struct.pack(">II", total, len(block))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + block + payload
    return body + struct.pack(">I", zlib.crc32(body))


def event(event_type: str, payload: dict[str, Any]) -> bytes:
    return message({":message-type": "event", ":event-type": event_type, ":content-type": "application/json"}, payload)


def exception(exception_type: str, text: str) -> bytes:
    return message({":message-type": "exception", ":exception-type": exception_type,
                    ":content-type": "application/json"}, {"message": text})
