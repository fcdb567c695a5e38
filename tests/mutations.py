"""Mutations of the real captures, for the mutation fuzzer (tests/folding/test_mutation_fuzz*.py).
Not a test module.

    data = draw(mutated())          # a capture under tests/captures or examples/, mutated 1-4 times
    check_result(result)            # the invariants every Result keeps, whatever bytes made it

Byte mutations (flip, insert, delete), line mutations (delete, duplicate, drop blank lines, insert CR),
splicing two captures, and JSON-aware ones: a frame's JSON payload decoded, one value anywhere in it
replaced by a hostile one (null, [], {}, 10**30, a negative, a float, NaN text, a string, deep nesting),
re-encoded (AWS event-stream messages get their CRCs recomputed, Bedrock's base64 `bytes` are opened).

Every run draws the same inputs (tests/conftest.py derandomizes Hypothesis), 150 per test. New inputs
come only from a long run, which draws the same cases (tests/fuzz_runs.py `CASES`) from fresh seeds:

    python tests/fuzz_long.py 1000000 --report finds.jsonl    # plain random draws on every core: fast
    python tests/fuzz_runs.py keep finds.jsonl                 # each failing input kept as a test

`tests/fuzz_long.py` skips Hypothesis's engine, which costs more per input than the fold. The fuzz tests
themselves also run long under Hypothesis with `STREAMFOLD_FUZZ_LONG=1` (fresh seeds, 200,000 inputs a
test, or `STREAMFOLD_FUZZ_EXAMPLES`), where `STREAMFOLD_FUZZ_REPORT=FILE` records every exception as a
JSON line (type, innermost streamfold frame, the input) instead of stopping at the first. A kept input
lives under tests/folding/fuzz_finds/, where tests/folding/test_kept_fuzz_finds.py runs it the way the
fuzzer did, on every run from then on.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import struct
import traceback
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from streamfold import Result
from streamfold.services.rows import frame_rows

__all__ = ["CAPTURES", "FUZZ", "INPUTS", "check_result", "guarded", "json_mutated", "mutated"]

ROOT = Path(__file__).resolve().parents[1]
CAPTURES: dict[str, bytes] = {
    str(path.relative_to(ROOT)): path.read_bytes()
    for path in sorted([*(ROOT / "tests" / "captures").rglob("*"), *(ROOT / "examples").glob("*")])
    if path.is_file() and not path.name.endswith((".expect.json", ".md"))}
INPUTS: dict[str, bytes] = {str(path.relative_to(ROOT)): path.read_bytes()
                            for path in sorted((ROOT / "tests" / "inputs").iterdir()) if path.is_file()}

LONG = bool(os.environ.get("STREAMFOLD_FUZZ_LONG"))
FUZZ = settings(max_examples=int(os.environ.get("STREAMFOLD_FUZZ_EXAMPLES", "200000" if LONG else "150")),
                deadline=None, print_blob=True, derandomize=not LONG, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# -- byte and line mutations ---------------------------------------------------------------

PIECES = [b"\r", b"\n", b"\r\n", b"\n\n", b"data: ", b"data:", b"event: ", b"id: ", b"retry: 1\n", b": ping\n",
          b"[DONE]", b"{", b"}", b"[", b"]", b'"', b",", b":", b"\\", b"\x00", b"\xff", b"\xef\xbb\xbf", b"\xe2\x82",
          b"\xf0\x9f\x98\x80", b"null", b"NaN", b"1e999", b"-", b"\\ud800", b"\x00\x00\x00\x10"]


@st.composite
def _byte_mutation(draw: st.DrawFn, data: bytes) -> bytes:
    op = draw(st.sampled_from(["flip", "insert", "delete", "delete line", "duplicate line", "drop blank lines",
                               "insert CR", "LF to CR", "truncate", "splice", "move frame", "swap frames",
                               "rename event"]))
    at = draw(st.integers(0, len(data)))
    if op == "flip" and data:
        at = min(at, len(data) - 1)
        return data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1:]
    if op == "insert":
        return data[:at] + draw(st.one_of(st.sampled_from(PIECES), st.binary(min_size=1, max_size=8))) + data[at:]
    if op == "delete":
        return data[:at] + data[at + draw(st.integers(1, 64)):]
    if op == "insert CR":
        return data[:at] + b"\r" + data[at:]
    if op == "LF to CR":
        return data.replace(b"\n", b"\r", draw(st.integers(1, 50)))
    if op in ("move frame", "swap frames"):  # frames out of order: SSE blocks, NDJSON lines
        sep = b"\n\n" if b"\n\n" in data else b"\n"
        blocks = data.split(sep)
        i, j = draw(st.integers(0, len(blocks) - 1)), draw(st.integers(0, len(blocks) - 1))
        if op == "swap frames":
            blocks[i], blocks[j] = blocks[j], blocks[i]
        else:
            blocks.insert(j, blocks.pop(i))
        return sep.join(blocks)
    if op == "rename event":  # an SSE `event:` line names another event
        lines = data.splitlines(keepends=True)
        events = [i for i, line in enumerate(lines) if line.startswith(b"event:")]
        if events:
            i = events[draw(st.integers(0, len(events) - 1))]
            lines[i] = b"event: " + draw(st.sampled_from(NAMES)).encode() + b"\n"
        return b"".join(lines)
    if op == "truncate":
        return data[:at]
    if op == "splice":
        other = draw(st.sampled_from(sorted(CAPTURES)))
        return data[:at] + CAPTURES[other][draw(st.integers(0, len(CAPTURES[other]))):]
    lines = data.splitlines(keepends=True)
    if not lines:
        return data
    if op == "drop blank lines":
        keep = draw(st.integers(0, 3))  # 0: drop them all, else every `keep+1`-th one
        blanks = 0
        out = []
        for line in lines:
            if line.strip(b"\r\n") == b"":
                blanks += 1
                if keep == 0 or blanks % (keep + 1) == 0:
                    continue
            out.append(line)
        return b"".join(out)
    line = draw(st.integers(0, len(lines) - 1))
    if op == "delete line":
        del lines[line]
    else:
        lines.insert(line, lines[line])
    return b"".join(lines)


# -- JSON mutations ------------------------------------------------------------------------

_SENTINEL = "\x00streamfold-mutation\x00"
HOSTILE = ["null", "[]", "{}", "true", "false", "0", "-1", "-7", str(10**30), str(-10**30), "1.5", "-0.0", "1e999",
           "NaN", "Infinity", "-Infinity", '""', '"x"', '"\\ud800"', '"0"', '"-1"', "[null]", "[[1, 2], [3]]",
           '{"": {}}', '[{"index": null}]', '"\\u0000"', "1e-400", str(2**63), str(2**64 + 1)]




def _names_in_captures() -> list[str]:
    """Every event type, object and role the captures hold: swapped in, they make a frame another
    kind of event (a block delta before its start, a known event with an unknown item)."""
    names: set[str] = set()
    for data in CAPTURES.values():
        for line in data.splitlines():
            line = line.removeprefix(b"data:").strip()
            if line[:1] == b"{":
                try:
                    value = json.loads(line)
                except ValueError:
                    continue
                for _, item in _items(value):
                    if isinstance(item, dict):
                        names.update(v for k, v in item.items() if k in ("type", "object", "role", "event") and
                                     isinstance(v, str))
    return sorted(names)


def _items(value: Any) -> Iterator[tuple[tuple[Any, ...], Any]]:
    stack: list[tuple[tuple[Any, ...], Any]] = [((), value)]
    while stack:
        path, item = stack.pop()
        yield path, item
        if isinstance(item, dict):
            stack.extend(((*path, k), v) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend(((*path, i), v) for i, v in enumerate(item))


NAMES = _names_in_captures()


@st.composite
def _hostile_text(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["fixed", "fixed", "fixed", "name", "name", "string", "number", "deep list",
                                 "deep object"]))
    if kind == "fixed":
        return draw(st.sampled_from(HOSTILE))
    if kind == "name":
        return json.dumps(draw(st.sampled_from(NAMES)))
    if kind == "string":
        return json.dumps(draw(st.text(max_size=20)))
    if kind == "number":
        return json.dumps(draw(st.one_of(st.integers(), st.floats(allow_nan=False, allow_infinity=False))))
    depth = draw(st.sampled_from([3, 40, 200, 2000, 100_000]))
    return "[" * depth + "]" * depth if kind == "deep list" else '{"a":' * depth + "1" + "}" * depth


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*path, index))


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replace(value[head], rest, new)}
    return [*value[:head], _replace(value[head], rest, new), *value[head + 1:]]


@st.composite
def _mutate_json_text(draw: st.DrawFn, text: bytes) -> bytes | None:
    """`text` (a JSON document) with one value replaced by hostile JSON text; None if it is not JSON."""
    try:
        value = json.loads(text)
        paths = list(_paths(value))
    except (ValueError, RecursionError):  # not JSON, or nested too deep to walk
        return None
    if isinstance(value, dict) and isinstance(value.get("bytes"), str) and draw(st.booleans()):
        # Bedrock InvokeModel: the vendor's event is base64 JSON inside.
        try:
            inner = base64.b64decode(value["bytes"], validate=True)
        except (binascii.Error, ValueError):
            inner = b""
        mutated = draw(_mutate_json_text(inner)) if inner else None
        if mutated is not None:
            return json.dumps({**value, "bytes": base64.b64encode(mutated).decode()}).encode()
    path = paths[draw(st.integers(0, len(paths) - 1))]
    encoded = json.dumps(_replace(value, path, _SENTINEL))
    return encoded.replace(json.dumps(_SENTINEL), draw(_hostile_text()), 1).encode()


def _eventstream_messages(data: bytes) -> list[tuple[bytes, bytes]] | None:
    """(headers block, payload) of each message, if `data` is well-formed AWS event-stream bytes."""
    out, at = [], 0
    while at + 16 <= len(data):
        total, header_length = struct.unpack(">II", data[at:at + 8])
        if total < 16 or at + total > len(data):
            return None
        out.append((data[at + 12:at + 12 + header_length], data[at + 12 + header_length:at + total - 4]))
        at += total
    return out if at == len(data) and out else None


def _eventstream_message(headers: bytes, payload: bytes) -> bytes:
    prelude = struct.pack(">II", 16 + len(headers) + len(payload), len(headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + headers + payload
    return body + struct.pack(">I", zlib.crc32(body))


@st.composite
def _json_mutation(draw: st.DrawFn, data: bytes) -> bytes:
    messages = _eventstream_messages(data)
    if messages is not None:
        which = draw(st.integers(0, len(messages) - 1))
        headers, payload = messages[which]
        new = draw(_mutate_json_text(payload))
        if new is not None:
            messages[which] = (headers, new)
        return b"".join(_eventstream_message(h, p) for h, p in messages)
    stripped = data.strip()
    if stripped[:1] in (b"[", b"{") and draw(st.booleans()):
        whole = draw(_mutate_json_text(stripped))  # a streamed JSON array, a HAR file
        if whole is not None:
            return whole
    lines = data.splitlines(keepends=True)
    candidates = [i for i, line in enumerate(lines) if line.lstrip()[:1] in (b"{", b"[") or line.startswith(b"data:")]
    if not candidates:
        return data
    index = candidates[draw(st.integers(0, len(candidates) - 1))]
    line = lines[index]
    body = line.rstrip(b"\r\n")
    end = line[len(body):]
    prefix = b""
    if body.startswith(b"data:"):
        prefix, body = b"data:", body[5:]
        if body.startswith(b" "):
            prefix, body = b"data: ", body[1:]
    body = body.rstrip(b",")  # an element line of a JSON array
    new = draw(_mutate_json_text(body))
    if new is None:
        return data
    lines[index] = prefix + new + line[len(prefix) + len(body):len(line) - len(end)] + end
    return b"".join(lines)


@st.composite
def mutated(draw: st.DrawFn, sources: dict[str, bytes] | None = None, *, json_only: bool = False) -> bytes:
    """One capture (or one of `sources`) with 1-4 mutations, JSON-aware or on bytes and lines."""
    pool = CAPTURES if sources is None else sources
    data = pool[draw(st.sampled_from(sorted(pool)))]
    for _ in range(draw(st.integers(1, 4))):
        if json_only or draw(st.integers(0, 2)) == 0:
            data = draw(_json_mutation(data))
        else:
            data = draw(_byte_mutation(data))
    return data


def json_mutated() -> st.SearchStrategy[bytes]:
    return mutated(json_only=True)


# -- invariants ----------------------------------------------------------------------------

def strict_json(value: Any) -> str:
    """`value` as JSON a strict reader accepts: no NaN or Infinity, encodable as UTF-8."""
    text = json.dumps(value, allow_nan=False, ensure_ascii=False)
    text.encode("utf-8")
    return text


def _export(result: Result) -> Any:
    try:
        exported = result.export()
    except NotImplementedError as exc:  # a documented refusal, for dialects that cannot export
        return NotImplementedError, str(exc)
    return strict_json(exported)


def check_result(result: Result) -> None:
    """What every Result keeps: strict JSON that reads back to the same Result, an export (or the
    refusal) the same before and after, a row for every frame, provenance for every character."""
    text = strict_json(result.to_dict())
    back = Result.from_dict(json.loads(text))
    assert back == result, "read back from its JSON, the Result differs"
    assert _export(back) == _export(result), "read back from its JSON, the Result exports differently"
    assert len(list(frame_rows(result))) == len(result.frames)
    for choice in result.choices:
        for field in ("content", "reasoning", "refusal", *(f"tool:{k}" for k in range(len(choice.tool_calls)))):
            result.text_runs(choice=choice.index, field=field)
        if choice.content:
            assert result.frame_producing_char(len(choice.content) - 1, choice=choice.index) is not None


# -- the long run's report -----------------------------------------------------------------

_REPORT = os.environ.get("STREAMFOLD_FUZZ_REPORT")


def _innermost_streamfold_frame(exc: BaseException) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if f"{os.sep}streamfold{os.sep}" in f.filename or f.filename == __file__]
    f = (frames or traceback.extract_tb(exc.__traceback__))[-1]
    return f"{Path(f.filename).name if f.filename == __file__ else f.filename.rsplit(os.sep + 'streamfold' + os.sep, 1)[-1]}:{f.lineno} {f.name}"


def guarded(name: str, data: bytes, run: Callable[[], None], **options: Any) -> None:
    """Run one fuzz example; with STREAMFOLD_FUZZ_REPORT set, record a failure there and go on."""
    if _REPORT is None:
        run()
        return
    try:
        run()
    except Exception as exc:  # the long run records every failure
        record = {"test": name, "type": type(exc).__name__, "where": _innermost_streamfold_frame(exc),
                  "message": str(exc)[:300], "options": options, "size": len(data),
                  "input": base64.b64encode(data).decode() if len(data) < 200_000 else None}
        with open(_REPORT, "a") as handle:
            handle.write(json.dumps(record) + "\n")
