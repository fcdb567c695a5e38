"""Shared helpers for the framing-layer tests (not a test module).

Besides the feeding helpers, this module holds two small *reference models*
written straight from the specification: `reference_sse` and
`reference_ndjson`. They parse a whole byte string at once (no incremental
state at all), so they are easy to check by eye against the WHATWG rules, and
the Hypothesis tests compare the real, incremental parsers against them.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from typing import Any

BOM = b"\xef\xbb\xbf"

# CR, LF and CRLF each end exactly one line (WHATWG: "end-of-line = ( cr lf / cr / lf )").
# The alternation tries CRLF first, so a CRLF is never counted as two line ends.
LINE_END = re.compile(rb"\r\n|\r|\n")

ASCII_DIGITS = frozenset("0123456789")


# --------------------------------------------------------------------------
# Feeding helpers
# --------------------------------------------------------------------------


def feed_all(parser_cls: type, chunks: Iterable[bytes], **kwargs: Any) -> list:
    """Feed `chunks` one by one into a fresh parser, then close it.

    Also checks the one invariant every result must satisfy: `index` counts
    0, 1, 2, ... in order of emission across the whole stream.
    """
    parser = parser_cls(**kwargs)
    frames: list = []
    for chunk in chunks:
        frames += parser.feed(chunk)
    frames += parser.close()
    assert [f.index for f in frames] == list(range(len(frames))), "index must count 0.. in emission order"
    return frames


def split_at(data: bytes, points: Iterable[int]) -> list[bytes]:
    """Cut `data` at the given byte positions (duplicates and 0/len are fine)."""
    cuts = sorted({p for p in points if 0 < p < len(data)})
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


def bytewise(data: bytes) -> list[bytes]:
    return [data[i : i + 1] for i in range(len(data))]


def codes(frame: Any) -> list[str]:
    return [issue.code for issue in frame.issues]


def line_number_at(data: bytes, offset: int) -> int:
    """1-based number of the line that starts at `offset` (CRLF counts once)."""
    return 1 + len(LINE_END.findall(data, 0, offset))


def assert_raw_is_slice_of_input(data: bytes, frames: Sequence[Any]) -> None:
    """Every frame's raw bytes sit at its offset, and frames never overlap."""
    end_of_previous = 0
    for f in frames:
        assert f.raw, f"frame {f.index} has empty raw"
        assert data[f.offset : f.offset + len(f.raw)] == f.raw, f"frame {f.index}: raw is not input[offset:...]"
        assert f.offset >= end_of_previous, f"frame {f.index} overlaps the previous frame"
        end_of_previous = f.offset + len(f.raw)


# --------------------------------------------------------------------------
# Projections used to compare a parser with a reference model
# --------------------------------------------------------------------------


def issue_projection(issues: Iterable[Any]) -> tuple[frozenset, tuple]:
    """Issues in a form that ignores what the spec leaves open.

    The spec fixes code, line and offset of every issue, but not whether one
    line with several bad UTF-8 sequences yields one `invalid-utf8` issue or
    several. So for invalid-utf8 we compare, per line, the offset of the first
    bad byte; every other issue is compared exactly as (code, line, offset).
    The free-text `message` is never compared.
    """
    others = set()
    first_bad: dict[int, int] = {}
    for i in issues:
        if i.code == "invalid-utf8":
            first_bad[i.line] = min(first_bad.get(i.line, i.offset), i.offset)
        else:
            others.add((i.code, i.line, i.offset))
    return frozenset(others), tuple(sorted(first_bad.items()))


def sse_projection(f: Any) -> tuple:
    return (
        f.index,
        f.offset,
        f.line,
        f.event,
        f.data,
        f.id,
        f.retry,
        tuple(f.comments),
        f.raw,
        f.terminated,
        issue_projection(f.issues),
    )


# --------------------------------------------------------------------------
# Reference model: SSE (whole input at once, straight from the spec)
# --------------------------------------------------------------------------


class _Issue:
    def __init__(self, code: str, offset: int, line: int) -> None:
        self.code, self.offset, self.line = code, offset, line


class _Frame:
    """Plain record with the same attribute names as streamfold.Frame."""

    def __init__(self, **kw: Any) -> None:
        self.__dict__.update(kw)


def iter_lines(data: bytes, start: int) -> Iterable[tuple[int, bytes, int, bool]]:
    """Yield (offset, content, end, has_terminator) for every line.

    At end of input a final CR is a complete line terminator (no LF can
    follow any more); bytes after the last terminator form a last line
    without terminator.
    """
    pos = start
    while pos < len(data):
        m = LINE_END.search(data, pos)
        if m is None:
            yield pos, data[pos:], len(data), False
            return
        yield pos, data[pos : m.start()], m.end(), True
        pos = m.end()


def _decode(content: bytes, offset: int, lineno: int, issues: list) -> str:
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError as exc:
        issues.append(_Issue("invalid-utf8", offset + exc.start, lineno))
        return content.decode("utf-8", "replace")


def reference_sse(data: bytes) -> list[_Frame]:
    """The SSE framing rules of the brief, for a complete input (feed + close)."""
    start = len(BOM) if data.startswith(BOM) else 0
    frames: list[_Frame] = []
    block: dict | None = None
    lineno = 0

    def finish(end: int, terminated: bool) -> None:
        assert block is not None
        frames.append(
            _Frame(
                index=len(frames),
                offset=block["offset"],
                line=block["line"],
                event=block["event"],
                data="\n".join(block["data"]) if block["data"] else None,
                id=block["id"],
                retry=block["retry"],
                comments=tuple(block["comments"]),
                raw=data[block["offset"] : end],
                terminated=terminated,
                issues=tuple(block["issues"]),
            )
        )

    last_end = start
    for offset, content, end, has_term in iter_lines(data, start):
        if not has_term:
            # "Once the end of the file is reached, any pending data must be discarded":
            # the final line without a line end is not interpreted and is in no frame.
            break
        last_end = end
        lineno += 1
        if not content:  # blank line (content can only be empty when a terminator follows)
            if block is not None:
                finish(end, True)
                block = None
            continue
        if block is None:
            block = {"offset": offset, "line": lineno, "event": None, "data": [], "id": None, "retry": None, "comments": [], "issues": []}
        text = _decode(content, offset, lineno, block["issues"])
        if text.startswith(":"):
            comment = text[1:]
            block["comments"].append(comment[1:] if comment.startswith(" ") else comment)
            continue
        name, _, value = text.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            block["data"].append(value)
        elif name == "event":
            block["event"] = value
        elif name == "id":
            if "\x00" in value:
                block["issues"].append(_Issue("invalid-id", offset, lineno))
            else:
                block["id"] = value
        elif name == "retry":
            if value and set(value) <= ASCII_DIGITS:
                block["retry"] = int(value)
            else:
                block["issues"].append(_Issue("invalid-retry", offset, lineno))
        else:
            block["issues"].append(_Issue("unknown-field", offset, lineno))
    if block is not None:
        finish(last_end, False)
    return frames


# --------------------------------------------------------------------------
# Reference model: NDJSON
# --------------------------------------------------------------------------


def reference_ndjson(data: bytes) -> list[_Frame]:
    """Lines split on LF only; a trailing CR is dropped from the text;
    blank and whitespace-only lines produce no frame."""
    pos = len(BOM) if data.startswith(BOM) else 0
    frames: list[_Frame] = []
    while pos < len(data):
        nl = data.find(b"\n", pos)
        end = len(data) if nl < 0 else nl + 1
        content = data[pos:end].rstrip(b"\n")
        if content.endswith(b"\r"):
            content = content[:-1]
        issues: list = []
        lineno = line_number_at(data, pos)
        text = _decode(content, pos, lineno, issues)
        if text.strip(" \t\r\n"):
            frames.append(
                _Frame(
                    index=len(frames),
                    offset=pos,
                    line=lineno,
                    event=None,
                    data=text,
                    id=None,
                    retry=None,
                    comments=(),
                    raw=data[pos:end],
                    terminated=nl >= 0,
                    issues=tuple(issues),
                )
            )
        pos = end
    return frames
