"""A pasted Python `repr()` of SDK objects (`print(chunk)` in a loop, or a list
of them): `ChatCompletionChunk(id='chatcmpl-1', choices=[Choice(...)], ...)`,
Anthropic's `RawContentBlockDeltaEvent(delta=TextDelta(...), ...)`, one per
line or as `[..., ...]`. Read back into the chunks they print, as SSE.

Never evaluated: each line is parsed with `ast` and only literals, lists,
tuples, dicts, `None`/`True`/`False` and calls with keywords are read, a call
`Name(**fields)` becoming the dict of its fields. The SDKs' pydantic models
print every field under its wire name, so the dict is the chunk as sent.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from ..findings import Severity
from .capture import Note

__all__ = ["from_sdk_repr", "looks_like_sdk_repr"]

_START = re.compile(rb"\A(?:\xef\xbb\xbf)?\s*\[?\s*[A-Z][A-Za-z0-9_]*\([a-z_][a-z0-9_]*=")
_LINE = re.compile(r"\A[A-Z][A-Za-z0-9_]*\(")
# A line this long is not parsed (ast's memory grows with it); it is kept as it is.
_MAX_LINE = 4 * 1024 * 1024
_SHOWN = 5


class _NotALiteralError(ValueError):
    """A node the reader does not take (a name, an attribute, an operator, positional arguments)."""


def looks_like_sdk_repr(body: bytes) -> bool:
    return bool(_START.match(body[:4096]))


def from_sdk_repr(body: bytes) -> tuple[bytes, Note] | None:
    """The chunks a repr paste prints, as an SSE body (`event:` the chunk's `type` when it has one), and
    the note; None when no line of it reads as an SDK object."""
    text = body.decode("utf-8", "replace").lstrip("\ufeff")
    stripped = text.strip()
    chunks: list[tuple[int, object]] = []  # (line, the chunk as a dict) or (line, the text kept as it was)
    if stripped.startswith("["):
        values = _parse(stripped)
        if isinstance(values, list):
            chunks = [(1, value) for value in values]
    if not chunks:
        for number, line in enumerate(text.splitlines(), 1):
            bare = line.strip().removeprefix("[").rstrip().rstrip(",]").rstrip()
            if not bare:
                continue
            value = _parse(bare) if _LINE.match(bare) else None
            chunks.append((number, value if isinstance(value, dict) else line.strip()))
    read = sum(1 for _, value in chunks if isinstance(value, dict))
    if not read:
        return None
    out: list[str] = []
    kept: list[int] = []
    for number, value in chunks:
        if isinstance(value, dict):
            kind = value.get("type")
            event = f"event: {kind}\n" if isinstance(kind, str) and kind.isprintable() and kind.strip() else ""
            out.append(f"{event}data: {json.dumps(value, ensure_ascii=False)}\n\n")
        else:
            kept.append(number)
            out.append("".join(f"data: {part}\n" for part in str(value).splitlines()) + "\n")
    message = (f"the input is a Python repr() of {read} SDK object(s) (printed chunks), not the stream's bytes: "
               "each was read back into the JSON chunk it prints and framed as SSE, so lines and byte offsets in "
               "the findings refer to that rebuilt stream. An SDK does not hand out the end-of-stream marker "
               "(`data: [DONE]`), so whether the reply ended is read from its finish reasons")
    if kept:
        lines = ", ".join(str(n) for n in kept[:_SHOWN]) + (f" and {len(kept) - _SHOWN} more" if len(kept) > _SHOWN
                                                             else "")
        message += f"; line(s) {lines} did not read as an SDK object and were kept as they are"
    # A repr may hold a lone surrogate ('\\ud800'): its 3 bytes go as they are, as fold() of a str sends
    # them, and the fold says where (`invalid-utf8`) and reads U+FFFD.
    body = "".join(out).encode("utf-8", "surrogatepass")
    return body, Note("sdk-repr", message, Severity.WARNING if kept else Severity.INFO)


def _parse(source: str) -> Any:
    if len(source) > _MAX_LINE:
        return None
    try:
        return _value(ast.parse(source, mode="eval").body)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None


def _value(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool, type(None))):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)) \
            and isinstance(node.operand, ast.Constant) and isinstance(node.operand.value, (int, float)) \
            and not isinstance(node.operand.value, bool):
        number = node.operand.value
        return -number if isinstance(node.op, ast.USub) else number
    if isinstance(node, ast.Name) and node.id in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[node.id]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_value(item) for item in node.elts]
    if isinstance(node, ast.Dict):
        if any(key is None for key in node.keys):
            raise _NotALiteralError("a ** in a dict")
        return {str(_value(key)): _value(value) for key, value in zip(node.keys, node.values) if key is not None}
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args:
        if any(keyword.arg is None for keyword in node.keywords):
            raise _NotALiteralError("a ** in a call")
        return {str(keyword.arg): _value(keyword.value) for keyword in node.keywords}
    raise _NotALiteralError(type(node).__name__)
