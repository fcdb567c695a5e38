"""The one place where stream bytes become text.

Framers split on ASCII bytes only (CR, LF, brackets), which never occur inside
a multi-byte UTF-8 sequence, and hand complete units (a line, an element) to
`decode`. A code point split across network reads is therefore whole by the
time it gets here, and the text does not depend on how bytes arrived.
Invalid bytes become U+FFFD (WHATWG: "decode" with replacement) and each
maximal invalid run is reported with its stream offset, up to
`MAX_LISTED_ISSUES` per unit: past that, one more issue counts the rest, so a
unit of alternating bad and good bytes costs time and memory in proportion to
its size, not an issue object per byte.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .frame import MAX_LISTED_ISSUES, FrameIssue

__all__ = ["decode"]


def decode(raw: bytes, offset: int, line: int) -> tuple[str, tuple[FrameIssue, ...]]:
    """Decode one unit (a line, an element) that starts at stream `offset`, on `line`.

    Returns the text and an `invalid-utf8` issue per invalid run (none for
    valid input, the common case, which costs one `bytes.decode`).
    """
    try:
        return raw.decode("utf-8"), ()
    except UnicodeDecodeError:
        pass
    text = raw.decode("utf-8", "replace")
    # surrogateescape maps each invalid byte to a lone surrogate: the runs are found with a regex,
    # their byte positions by re-encoding the valid text between them, in one pass.
    escaped = raw.decode("utf-8", "surrogateescape")
    runs = _ESCAPED_BYTES.finditer(escaped)
    issues: list[FrameIssue] = []
    lines = _LineCounter(raw)
    byte_pos = char_pos = 0
    for run in runs:
        byte_pos += len(escaped[char_pos : run.start()].encode("utf-8"))
        run_bytes = run.group().encode("utf-8", "surrogateescape")
        at = offset + byte_pos
        if len(issues) == MAX_LISTED_ISSUES:
            issues.append(_rest(run, runs, at, line + lines.before(byte_pos), text))
            break
        issues.append(FrameIssue(
            "invalid-utf8", at, line + lines.before(byte_pos),
            f"bytes {run_bytes.hex(' ')} at offset {at} are not valid UTF-8; they were replaced with U+FFFD", text))
        byte_pos += len(run_bytes)
        char_pos = run.end()
    return text, tuple(issues)


def _rest(first: re.Match[str], runs: Iterator[re.Match[str]], at: int, line: int, text: str) -> FrameIssue:
    """The one issue for the invalid runs of a unit past `MAX_LISTED_ISSUES`, from `first` on."""
    more, bad_bytes = 1, first.end() - first.start()
    for run in runs:
        more += 1
        bad_bytes += run.end() - run.start()
    return FrameIssue(
        "invalid-utf8", at, line,
        f"{more} more runs of invalid UTF-8 ({bad_bytes} bytes) from offset {at} to the end of this unit were "
        f"replaced with U+FFFD; past the first {MAX_LISTED_ISSUES} runs of a line or element they are counted, "
        "not listed one by one", text)


class _LineCounter:
    """Line terminators (CR, LF, CRLF each count once) before a byte position of `raw`, for positions
    asked in increasing order: each byte is counted once, however many positions are asked."""

    __slots__ = ("_counted", "_lines", "_raw")

    def __init__(self, raw: bytes) -> None:
        self._raw = raw
        self._counted = 0
        self._lines = 0

    def before(self, stop: int) -> int:
        # The positions asked start invalid runs, never a CR or LF: no CRLF straddles `_counted`.
        raw, start = self._raw, self._counted
        self._lines += raw.count(b"\n", start, stop) + raw.count(b"\r", start, stop) - raw.count(b"\r\n", start, stop)
        self._counted = stop
        return self._lines


_ESCAPED_BYTES = re.compile(r"[\udc80-\udcff]+")
