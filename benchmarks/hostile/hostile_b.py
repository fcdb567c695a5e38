"""Hostile cases of issue 20, part 3, group B (text, JSON and framing core), for bench_hostile.py:

  b-utf8-line              one NDJSON line of N runs of invalid UTF-8 (`\\xffa` each)
  b-utf8-element-lines     one JSON array element of N lines, each an invalid byte
  b-args-copies            one tool call whose arguments are `{}` N times, in 1000-byte fragments
  b-glued-documents        one SSE frame of N `{}` documents back to back
  b-array-deep             one JSON array element nested N levels (`[[[...]]]`)
  b-array-deep-objects     one JSON array element of N nested objects (`{"a":{"a":...}}`)
  b-sse-comments           a stream of only N comment lines (`: x`), no blank line
  b-sse-empty-data-lines   one SSE event of N `data:` lines
  b-sse-data-documents     one SSE event of N `data: 1` lines (glued documents)
  b-sse-bad-lines          one SSE event of N `Data: x` lines (an unknown field each)

Each ran past 30 s (the first four: quadratic) or peaked at 20-80x its size before issue 20.
"""

from __future__ import annotations

import json
from collections.abc import Callable

Generator = Callable[[int], bytes]


def utf8_line(n: int) -> bytes:
    return b'{"model":"q","message":{"role":"assistant","content":"' + b"\xffa" * n + b'"},"done":true}\n'


def utf8_element_lines(n: int) -> bytes:
    return b'[{"candidates":[{"content":{"parts":[{"text":"' + b"\xff\n" * n + b'"}]}}]}]'


def args_copies(n: int) -> bytes:
    arguments = "{}" * n
    chunks = [{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                                                  "function": {"name": "f", "arguments": ""}}]}}]}]
    chunks += [{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {
        "arguments": arguments[at : at + 1000]}}]}}]} for at in range(0, len(arguments), 1000)]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    return b"".join(b"data: " + json.dumps(chunk).encode() + b"\n\n" for chunk in chunks) + b"data: [DONE]\n\n"


def glued_documents(n: int) -> bytes:
    return b"data: " + b"{}" * n + b"\n\n"


def array_deep(n: int) -> bytes:
    return b"[" + b"[" * n + b"]" * n + b"]"


def array_deep_objects(n: int) -> bytes:
    return b"[" + b'{"a":' * n + b"1" + b"}" * n + b"]"


def sse_comments(n: int) -> bytes:
    return b": x\n" * n


def sse_empty_data_lines(n: int) -> bytes:
    return b"data:\n" * n + b"\n"


def sse_data_documents(n: int) -> bytes:
    return b"data: 1\n" * n + b"\n"


def sse_bad_lines(n: int) -> bytes:
    return b"Data: x\n" * n + b"\n"


_LINES = {"small": [250_000, 1_000_000], "default": [250_000, 1_000_000, 4_000_000],
          "large": [1_000_000, 4_000_000, 16_000_000]}

#: name -> (generator, what a unit is, sizes per scale): each folded with `streamfold.fold(data)`.
CASES: dict[str, tuple[Generator, str, dict[str, list[int]]]] = {
    "b-utf8-line": (utf8_line, "run", {
        "small": [20_000, 100_000], "default": [100_000, 400_000, 2_000_000], "large": [2_000_000, 8_000_000]}),
    "b-utf8-element-lines": (utf8_element_lines, "line", {
        "small": [20_000, 100_000], "default": [100_000, 400_000, 2_000_000], "large": [2_000_000, 8_000_000]}),
    "b-args-copies": (args_copies, "document", {
        "small": [50_000, 200_000], "default": [200_000, 1_000_000, 4_000_000], "large": [4_000_000, 16_000_000]}),
    "b-glued-documents": (glued_documents, "document", {
        "small": [20_000, 100_000], "default": [100_000, 400_000, 1_000_000], "large": [1_000_000, 4_000_000]}),
    "b-array-deep": (array_deep, "level", {
        "small": [250_000, 1_000_000], "default": [250_000, 1_000_000, 2_000_000],
        "large": [2_000_000, 8_000_000]}),
    "b-array-deep-objects": (array_deep_objects, "level", {
        "small": [100_000, 500_000], "default": [100_000, 500_000, 1_000_000], "large": [1_000_000, 4_000_000]}),
    "b-sse-comments": (sse_comments, "line", _LINES),
    "b-sse-empty-data-lines": (sse_empty_data_lines, "line", _LINES),
    "b-sse-data-documents": (sse_data_documents, "line", {
        "small": [100_000, 500_000], "default": [100_000, 500_000, 1_000_000], "large": [1_000_000, 4_000_000]}),
    "b-sse-bad-lines": (sse_bad_lines, "line", {
        "small": [100_000, 500_000], "default": [100_000, 500_000, 1_000_000], "large": [1_000_000, 4_000_000]}),
}
