"""Text that is not UTF-8 but UTF-16 or UTF-32 (what PowerShell's `>` and
Windows editors write): recognised by its byte-order mark, or without one by
the NUL bytes of mostly-ASCII text, and decoded to UTF-8 before anything else
reads it, with a note saying which encoding was read (the locations in the
findings then refer to the decoded text)."""

from __future__ import annotations

import codecs

from ..findings import Severity
from .capture import Note

__all__ = ["decode_wide_text"]

# Longest first: UTF-32LE's mark begins with UTF-16LE's.
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32LE"), (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32BE"),
         (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16LE"), (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16BE"))
# How much of the start is looked at without a mark, and how regular its NULs must be.
_SAMPLE = 4096
_MIN_SAMPLE = 8
_NUL_SHARE = 0.9


def decode_wide_text(data: bytes) -> tuple[bytes, Note] | None:
    """`data` decoded from UTF-16/UTF-32 and encoded as UTF-8, with the note; None when it is not such text."""
    found = _by_bom(data) or _by_nuls(data)
    if found is None:
        return None
    codec, name, skip, how = found
    body = data[skip:]
    width = 4 if "32" in codec else 2
    cut = len(body) % width
    text = body[: len(body) - cut].decode(codec, "replace")
    bad = text.count("\ufffd")
    utf8 = text.encode("utf-8", "replace")
    message = (f"the input is {name} text ({how}), not UTF-8; it was decoded to UTF-8 before reading, so the "
               "lines and byte offsets in the findings refer to the decoded text")
    if bad or cut:
        message += (f"; {bad} character(s) could not be decoded and became U+FFFD" if bad else "") + (
            f"; its last {cut} byte(s) were not a whole character and were dropped" if cut else "")
    return utf8, Note("text-encoding", message, Severity.WARNING if bad or cut else Severity.INFO)


def _by_bom(data: bytes) -> tuple[str, str, int, str] | None:
    for bom, codec, name in _BOMS:
        if data.startswith(bom):
            if codec == "utf-32-le" and not _is_utf32(data[len(bom):], little=True):
                continue  # FF FE 00 00 may be UTF-16LE's mark and a NUL character: rare, but not UTF-32
            return codec, name, len(bom), "it starts with that byte-order mark"
    return None


def _by_nuls(data: bytes) -> tuple[str, str, int, str] | None:
    sample = data[:_SAMPLE]
    if len(sample) < _MIN_SAMPLE or not _may_be_wide(sample):
        return None
    how = "no byte-order mark; recognised by the NUL bytes of its ASCII characters"
    if _is_utf32(sample, little=True):
        return "utf-32-le", "UTF-32LE", 0, how
    if _is_utf32(sample, little=False):
        return "utf-32-be", "UTF-32BE", 0, how
    sample = sample[: len(sample) // 2 * 2]
    even, odd = sample[0::2], sample[1::2]
    if _mostly_nul(odd) and _mostly_not_nul(even):
        return "utf-16-le", "UTF-16LE", 0, how
    if _mostly_nul(even) and _mostly_not_nul(odd):
        return "utf-16-be", "UTF-16BE", 0, how
    return None


def _may_be_wide(sample: bytes) -> bool:
    """Whether the sample has a NUL: each wide encoding read here needs a part of it mostly NUL, and UTF-8
    text, which has none, is told by this one scan."""
    return b"\0" in sample


def _is_utf32(sample: bytes, *, little: bool) -> bool:
    sample = sample[: len(sample) // 4 * 4]
    if len(sample) < _MIN_SAMPLE:
        return False
    low = sample[0::4] if little else sample[3::4]
    high = [sample[i::4] for i in ((1, 2, 3) if little else (0, 1, 2))]
    return _mostly_not_nul(low) and all(_mostly_nul(part) for part in high)


def _mostly_nul(part: bytes) -> bool:
    return part.count(0) >= _NUL_SHARE * len(part)


def _mostly_not_nul(part: bytes) -> bool:
    return part.count(0) <= (1 - _NUL_SHARE) * len(part)
