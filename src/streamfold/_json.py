"""The JSON decoder of the core: msgspec when installed, else the standard library.

msgspec was measured against orjson on chat chunks (benchmarks/README.md):
0.68 µs against 0.88 µs per chunk, and orjson silently turns integers above
64 bits into floats where `json` keeps them exact, which would make a result
depend on what is installed. Results must not depend on it, so a document
msgspec rejects is tried again with `json` (msgspec refuses NaN, Infinity and
lone surrogates, which `json` accepts), and error messages always come from
`json`, whose wording and positions are stable. What only `json` accepts is
made safe to write out again: NaN, Infinity and numbers beyond a double's
range become None (strict JSON has no such numbers), and a lone surrogate
escape (`"\\ud800"`) becomes U+FFFD (no UTF-8 encoder writes it); the fold
reports both on the frame.

Nesting is capped at `MAX_DEPTH` levels: both decoders recurse, so without a
cap a document of a thousand `[` raises RecursionError, and a value that just
fits would make whatever walks it later (comparison, `json.dumps`, a copy)
depend on how deep the caller's stack already is. A deeper document is not
one this core takes: `loads` says so as a JSONDecodeError at the first `[` or
`{` over the cap, like any other invalid document.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from itertools import accumulate, chain, tee
from operator import sub
from typing import Any

__all__ = ["COMPLETE_SHALLOW", "FAST_DECODER", "LENIENT_DECODER", "MAX_DEPTH", "TOO_DEEP", "copy_json", "dumps_strict",
           "is_blank", "iter_documents", "loads", "loads_noting", "loads_utf8", "nesting_error", "raw_decode",
           "replacements", "too_deep_bytes", "without_lone_surrogates"]

#: The deepest nesting of arrays and objects a document may have (real payloads nest under 20).
MAX_DEPTH = 256
TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep"
#: Shorter than this, a document that decoded cannot nest deeper than `MAX_DEPTH`: it would need
#: MAX_DEPTH + 1 opening brackets and as many closing ones. So the common payload pays one len().
COMPLETE_SHALLOW = 2 * MAX_DEPTH + 2
# A string whole (so brackets inside it do not count), or one bracket.
_NESTING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')

_std_loads: Callable[[str], Any] = json.loads
_INFINITY = float("inf")
# The escape of a UTF-16 surrogate: one without its pair decodes to a code point no encoder writes.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _null(literal: str) -> None:
    return None


def _finite(literal: str) -> float | None:
    value = float(literal)
    return None if value in (_INFINITY, -_INFINITY) else value


#: The standard library's decoder as the fallback uses it, for callers that split documents.
LENIENT_DECODER = json.JSONDecoder(parse_constant=_null, parse_float=_finite)


def iter_documents(text: str, *, data_prefix: bool = False) -> Iterator[tuple[Any, int, int]]:
    """The JSON documents back to back in `text`, each as (value, start, stop), one at a time (a caller
    that only compares them need not hold a value per document); they stop where the rest is not a
    document (or nests too deep), and are all of `text` when `is_blank(text, stop of the last one)`.
    With `data_prefix`, a document may stand behind `data:` (an SSE line glued into another's data).
    Each document is looked at once, so the cost is linear in the text however many it holds."""
    pos, end = 0, len(text)
    while True:
        while pos < end and text[pos] in " \t\r\n":
            pos += 1
        if pos >= end:
            return
        if data_prefix and text.startswith("data:", pos):
            pos += 6 if text.startswith(" ", pos + 5) else 5
        try:
            value, stop = raw_decode(text, pos)
        except ValueError:
            return
        yield value, pos, stop
        pos = stop


def raw_decode(text: str, pos: int) -> tuple[Any, int]:
    """The document that starts at `pos` in `text` (more may follow it), and where it stops: decoded
    as `loads` decodes (NaN null, lone surrogates U+FFFD); ValueError when none is there or it nests
    deeper than `MAX_DEPTH`."""
    try:
        value, stop = LENIENT_DECODER.raw_decode(text, pos)
    except RecursionError:
        raise json.JSONDecodeError(TOO_DEEP, text, pos) from None
    if (position := nesting_error(text, pos, stop)) is not None:
        raise json.JSONDecodeError(TOO_DEEP, text, position)
    if text.find("\\u", pos, stop) >= 0:  # this document's escapes only: the text may hold thousands
        value = without_lone_surrogates(value)[0]
    return value, stop


def is_blank(text: str, start: int) -> bool:
    """Only JSON whitespace from `start` on."""
    return not text[start:].strip(" \t\r\n")


try:
    import msgspec

    _fast_loads: Callable[[str], Any] = msgspec.json.Decoder().decode
    #: Decode JSON from UTF-8 bytes without making their text first. Raises
    #: ValueError for anything `loads` would not return as is (invalid UTF-8,
    #: NaN, ...): callers then take their general path, which explains it.
    loads_utf8: Callable[[bytes], Any] = msgspec.json.Decoder().decode
    _fast_dumps: Callable[[Any], bytes] | None = msgspec.json.Encoder().encode
    FAST_DECODER = "msgspec"
except ImportError:  # exercised by test_results_do_not_depend_on_the_fast_decoder
    FAST_DECODER = "json"
    _fast_dumps = None

    def _fast_loads(text: str) -> Any:
        # As strict as msgspec, so the fallback's replacements happen the same way without it.
        value, replaced, surrogates = _lenient(text)
        if replaced or surrogates:
            raise ValueError("not strict JSON")
        return value

    def loads_utf8(data: bytes) -> Any:
        return _fast_loads(data.decode())


def loads(text: str) -> Any:
    """Decode one JSON document; raise `json.JSONDecodeError` if it is not one (or nests deeper
    than `MAX_DEPTH`). NaN, Infinity and numbers out of a double's range become None, lone
    surrogates U+FFFD (see `loads_noting`)."""
    return loads_noting(text)[0]


def loads_noting(text: str) -> tuple[Any, tuple[str, ...], int]:
    """`loads`, and what it replaced to keep the value strict JSON and valid text: the
    non-finite number literals (each now None) and the count of lone surrogates (each now
    U+FFFD). Results never hold a NaN or a string no UTF-8 encoder can write."""
    try:
        value = _fast_loads(text)
        replaced: tuple[str, ...] = ()
        surrogates = 0
    except (ValueError, RecursionError):
        try:
            value, replaced, surrogates = _lenient(text)
        except RecursionError:
            raise json.JSONDecodeError(TOO_DEEP, text, nesting_error(text) or 0) from None
        except json.JSONDecodeError as exc:
            raise _as_on_every_python(exc) from None
    if len(text) >= COMPLETE_SHALLOW and (position := nesting_error(text)) is not None:
        raise json.JSONDecodeError(TOO_DEEP, text, position)
    return value, replaced, surrogates


#: What Python 3.13 says of a comma before a closing bracket, by the message older Pythons give at the bracket.
_TRAILING_COMMA = {("Expecting value", "]"): "Illegal trailing comma before end of array",
                   ("Expecting property name enclosed in double quotes", "}"):
                       "Illegal trailing comma before end of object"}


def _as_on_every_python(exc: json.JSONDecodeError) -> json.JSONDecodeError:
    """`exc` as Python 3.13 and later word it, on every Python: a Result must not depend on the one it was
    folded on. Before 3.13 a trailing comma was reported at the closing bracket as a missing value or
    name; 3.13 names the comma, at the comma."""
    text, pos = exc.doc, exc.pos
    message = _TRAILING_COMMA.get((exc.msg, text[pos:pos + 1]))
    if message is None:
        return exc
    comma = len(text[:pos].rstrip(" \t\r\n")) - 1
    if comma < 0 or text[comma] != ",":
        return exc
    return json.JSONDecodeError(message, text, comma)


def replacements(numbers: tuple[str, ...], surrogates: int) -> str:
    """What the decoding replaced, in words."""
    said = []
    if numbers:
        shown = ", ".join(dict.fromkeys(numbers))
        said.append(f"{len(numbers)} number(s) strict JSON does not have ({shown}) became null")
    if surrogates:
        said.append(f"{surrogates} lone surrogate escape(s) (half of a UTF-16 pair, not text) became U+FFFD")
    return "; ".join(said)


def copy_json(value: Any) -> Any:
    """A copy of a JSON value whose containers (dicts and lists) are new, the rest shared (they cannot
    change): what `copy.deepcopy` gives for one, several times faster, with no memo to keep."""
    if type(value) is dict:
        return {key: copy_json(item) if type(item) in _CONTAINERS else item for key, item in value.items()}
    if type(value) is list:
        return [copy_json(item) if type(item) in _CONTAINERS else item for item in value]
    return value


_CONTAINERS = (dict, list)


def dumps_strict(value: Any, *, ensure_ascii: bool = False, indent: int | None = None,
                 separators: tuple[str, str] | None = None, default: Callable[[Any], Any] | None = None) -> str:
    """JSON text as the fronts write it (the CLI, the page, the servers, the store): strict JSON, UTF-8
    kept. NaN and Infinity (which only Python's parser reads) raise ValueError instead of being
    written: no Result holds them (`loads`), so one here is a bug to fix where it came in."""
    return json.dumps(value, ensure_ascii=ensure_ascii, allow_nan=False, indent=indent, separators=separators,
                      default=default)


_COMPACT = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def dumps_compact(value: Any) -> str:
    """Compact JSON text, UTF-8 kept, for values stored as text (the tables' `json` columns): msgspec's
    encoder, seven times the standard library's on a reply's `native`. Its spelling differs from `json`'s
    only in how a float is spelled (`1e16` and `0.00001`, not `1e+16` and `1e-05`); a value it refuses (a
    lone surrogate, which no Result holds: `loads`) is written by `json`."""
    if _fast_dumps is not None:
        try:
            return _fast_dumps(value).decode()
        except (TypeError, ValueError, OverflowError):  # UnicodeEncodeError is a ValueError
            pass
    return _COMPACT.encode(value)


def _lenient(text: str) -> tuple[Any, tuple[str, ...], int]:
    """The standard library's decoding, with what `loads_noting` replaces replaced."""
    replaced: list[str] = []

    def constant(literal: str) -> None:
        replaced.append(literal)

    def number(literal: str) -> float | None:
        value = _finite(literal)
        if value is None:
            replaced.append(literal)
        return value

    value = json.JSONDecoder(parse_constant=constant, parse_float=number).decode(text)
    surrogates = 0
    if _SURROGATE_ESCAPE.search(text):
        value, surrogates = without_lone_surrogates(value)
    return value, tuple(replaced), surrogates


def without_lone_surrogates(value: Any) -> tuple[Any, int]:
    """`value` with every lone surrogate in its strings (keys too) made U+FFFD, and how many."""
    count = 0

    def clean(text: str) -> str:
        nonlocal count
        fixed, n = _LONE_SURROGATE.subn("\ufffd", text)
        count += n
        return fixed

    if type(value) is str:
        return clean(value), count
    if type(value) is not dict and type(value) is not list:
        return value, count
    # Iterative, depth-first: containers are rebuilt in place (they were just decoded, nobody holds them).
    stack: list[Any] = [value]
    while stack:
        container = stack.pop()
        if type(container) is list:
            for i, item in enumerate(container):
                if type(item) is str:
                    container[i] = clean(item)
                elif type(item) is dict or type(item) is list:
                    stack.append(item)
        else:
            for key in list(container):
                item = container[key]
                if type(key) is str and _LONE_SURROGATE.search(key):
                    del container[key]
                    key = clean(key)
                if type(item) is str:
                    item = clean(item)
                elif type(item) is dict or type(item) is list:
                    stack.append(item)
                container[key] = item
    return value, count


def nesting_error(text: str, start: int = 0, end: int | None = None) -> int | None:
    """The position of the first `[` or `{` of `text[start:end]` nested deeper than `MAX_DEPTH`
    (brackets inside strings do not count), or None."""
    stop = len(text) if end is None else end
    if stop - start <= MAX_DEPTH or text.count("[", start, stop) + text.count("{", start, stop) <= MAX_DEPTH:
        return None
    if not _deeper_than_max(text[start:stop]):
        return None  # the common case, in C; the loop below only finds the position
    depth = 0
    for match in _NESTING.finditer(text, start, stop):
        bracket = text[match.start()]
        if bracket == "[" or bracket == "{":
            depth += 1
            if depth > MAX_DEPTH:
                return match.start()
        elif bracket == "]" or bracket == "}":
            depth = max(depth - 1, 0)
    return None


# For `_deeper_than_max`: every byte but brackets and quotes, and each bracket's step in depth.
_NOT_STRUCTURE = bytes(sorted(set(range(256)) - set(b'[]{}"')))
_ESCAPE = re.compile(rb"\\.", re.DOTALL)
# `_outside_strings` splits this much at a time: a split of the whole cost 40 bytes a string.
_WINDOW = 64 * 1024
_STEP = [0] * 256
for _bracket, _step in ((b"[", 1), (b"{", 1), (b"]", -1), (b"}", -1)):
    _STEP[_bracket[0]] = _step


def _deeper_than_max(segment: str) -> bool:
    """Whether `segment` nests deeper than `MAX_DEPTH` as `nesting_error`'s loop counts it (strings
    skipped, a stray closing bracket never below 0), in steps that run in C: escapes dropped, only
    brackets and quotes kept, what lies between a pair of quotes dropped; then the depth after each
    bracket is its running sum less the lowest the sum has been before it. Exact on JSON documents
    (what its callers ask about; tests/folding/test_json_depth.py); outside strings, where JSON has no
    backslash, it takes one for an escape as it would inside."""
    return _utf8_deeper_than_max(segment.encode("utf-8", "surrogatepass"))


def _utf8_deeper_than_max(data: bytes) -> bool:
    """`_deeper_than_max` of the UTF-8 bytes of a text (brackets, quotes and backslashes are the same bytes)."""
    if b"\\" in data:
        data = _ESCAPE.sub(b"", data)
    brackets = _outside_strings(data.translate(None, _NOT_STRUCTURE))
    # The running sums are read twice, in step (tee keeps only the one between): a list of them
    # was an int object per bracket, 36 bytes for each byte of a deeply nested document.
    sums, lagging = tee(accumulate(map(_STEP.__getitem__, brackets)))
    return max(map(sub, sums, accumulate(chain((0,), lagging), min)), default=0) > MAX_DEPTH


def _outside_strings(structure: bytes) -> bytes:
    """The brackets of `structure` (brackets and quotes only) outside strings: what lies between a
    pair of quotes goes; after a quote that no quote closes, the rest is outside too."""
    kept: list[bytes] = []
    inside = False
    for start in range(0, len(structure), _WINDOW):
        parts = structure[start : start + _WINDOW].split(b'"')
        kept.append(b"".join(parts[1::2] if inside else parts[::2]))
        inside ^= len(parts) % 2 == 0  # an odd number of quotes in the window
    if inside:
        kept.append(structure[structure.rfind(b'"') + 1 :])
    return b"".join(kept)


def too_deep_bytes(data: bytes) -> bool:
    """`data` (UTF-8 JSON, one document that decoded) nests deeper than `MAX_DEPTH`."""
    return (len(data) >= COMPLETE_SHALLOW and data.count(b"[") + data.count(b"{") > MAX_DEPTH
            and _utf8_deeper_than_max(data))

