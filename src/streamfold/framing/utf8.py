"""The one place where stream bytes become text.

Framers split on ASCII bytes only (CR, LF, brackets), which never occur inside
a multi-byte UTF-8 sequence, and hand complete units (a line, an element) to
`decode`. A code point split across network reads is therefore whole by the
time it gets here, and the text does not depend on how bytes arrived.
Invalid bytes become U+FFFD (WHATWG: "decode" with replacement) and each
maximal invalid run is reported with its stream offset.
"""

from __future__ import annotations

import re

from .frame import FrameIssue

__all__ = ["decode", "decode_reporting"]


def decode(raw: bytes, offset: int, line: int) -> tuple[str, tuple[FrameIssue, ...]]:
    """Decode one unit (a line, an element) that starts at stream `offset`, on `line`.

    Returns the text and an `invalid-utf8` issue per invalid run (none for
    valid input, the common case, which costs one `bytes.decode`).
    """
    try:
        return raw.decode("utf-8"), ()
    except UnicodeDecodeError:
        pass
    text, bad = decode_reporting(raw, offset)
    issues = tuple(
        FrameIssue(
            "invalid-utf8",
            at,
            line + _line_ends(raw, at - offset),
            f"bytes {run.hex(' ')} at offset {at} are not valid UTF-8; they were replaced with U+FFFD",
            text,
        )
        for at, run in bad
    )
    return text, issues


def _line_ends(raw: bytes, stop: int) -> int:
    """Line terminators (CR, LF, CRLF each count once) in raw[:stop]."""
    return raw.count(b"\n", 0, stop) + raw.count(b"\r", 0, stop) - raw.count(b"\r\n", 0, stop)


def decode_reporting(raw: bytes, offset: int) -> tuple[str, list[tuple[int, bytes]]]:
    """Decode with replacement; also return (stream offset, bad bytes) per invalid run.

    One linear pass: surrogateescape maps each invalid byte to a lone surrogate,
    so the runs are found with a regex and their byte offsets by re-encoding
    the valid text between them.
    """
    text = raw.decode("utf-8", "replace")
    escaped = raw.decode("utf-8", "surrogateescape")
    bad: list[tuple[int, bytes]] = []
    byte_pos = char_pos = 0
    for run in _ESCAPED_BYTES.finditer(escaped):
        byte_pos += len(escaped[char_pos : run.start()].encode("utf-8"))
        run_bytes = run.group().encode("utf-8", "surrogateescape")
        bad.append((offset + byte_pos, run_bytes))
        byte_pos += len(run_bytes)
        char_pos = run.end()
    return text, bad


_ESCAPED_BYTES = re.compile(r"[\udc80-\udcff]+")
