"""Reading a HAR file into a `Capture` (see `inputs.read_capture`).

HAR files come from browsers, proxies and hand edits, so nothing in one is
trusted to have the type the HAR spec gives it: an entry, request or
response that is not an object is left out, a status or header of the wrong
type is read when it can be and skipped when not, and each such repair is a
`har-malformed` note naming the entry and the field. Only a file with no
usable streamed body at all is an `InputError`. A WebSocket entry (Chrome's
and Firefox's `_webSocketMessages`) streamed if it received a message; its
messages become the body (`_websocket`).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from typing import Any

from .._json import without_lone_surrogates
from ..findings import Severity
from ._exchanges import MAX_URL, Kind, choose, looks_failed, looks_streamed, model_of
from ._exchanges import kind_of as _kind
from ._websocket import websocket_body
from .capture import Capture, EntryInfo, InputError, Note

__all__ = ["from_har"]

HAR = Kind("HAR", "entry", "entries", "har", "har-entries", "har-malformed")
# Past this a HAR time (milliseconds) is no time at all, and would not divide into a float.
_MAX_MILLISECONDS = 1e300
# Repairs listed in one note, per entry; more are counted.
_MAX_LISTED = 8


class _Entry:
    """One entry of the HAR, read defensively: `problems` says what had the wrong type."""

    def __init__(self, index: int, value: Any) -> None:
        self.index = index
        self.problems: list[str] = []
        self.valid = isinstance(value, dict)
        entry = value if isinstance(value, dict) else {}
        self.request = self._object(entry, "request")
        self.response = self._object(entry, "response")
        self.content = self._object(self.response, "content", "response.")
        self.url = self._string(self.request, "url", "request.")
        self.method = self._string(self.request, "method", "request.")
        text = self.content.get("text")
        self.text = text if isinstance(text, str) else None
        self.time = entry.get("time")
        timings = entry.get("timings")
        self.timings: dict[str, Any] = timings if isinstance(timings, dict) else {}
        self.reads = entry.get("_reads")  # [[offset, seconds], ...]: streamfold's export (captures export --format har)
        self.started = entry.get("startedDateTime")
        messages = entry.get("_webSocketMessages")
        self.messages: list[Any] | None = messages if isinstance(messages, list) else None
        if messages is not None and self.messages is None:
            self.problems.append(f"_webSocketMessages is {_kind(messages)}, not a list: left out")

    def _object(self, parent: dict[str, Any], key: str, path: str = "") -> dict[str, Any]:
        value = parent.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.problems.append(f"{path}{key} is {_kind(value)}, not an object: left out")
            return {}
        return value

    def _string(self, parent: dict[str, Any], key: str, path: str) -> str:
        value = parent.get(key)
        if value is None:
            return ""
        if not isinstance(value, str):
            self.problems.append(f"{path}{key} is {_kind(value)}, not text: left out")
            return ""
        return value

    @property
    def preflight(self) -> bool:
        """A CORS preflight (OPTIONS): never the streamed request, whatever its response says."""
        return self.method.upper() == "OPTIONS"

    @property
    def failed(self) -> bool:
        """A request that failed with a JSON error body (a 429, a 401, ...) or a proxy's HTML error page (a 502):
        the finding when nothing streamed."""
        mime = self.content.get("mimeType")
        return not self.preflight and looks_failed(self.response.get("status"), mime if isinstance(mime, str) else None,
                                                   self.text or "")

    @property
    def streamed(self) -> bool:
        if self.messages is not None:
            return any(isinstance(message, dict) and message.get("type") == "receive" for message in self.messages)
        mime = self.content.get("mimeType")
        return not self.preflight and looks_streamed(mime if isinstance(mime, str) else None, self.text or "")

    def info(self) -> EntryInfo:
        """What a picker lists of this entry (no repair is noted: `status()` does that for the one used)."""
        status = self.response.get("status")
        mime = self.content.get("mimeType")
        known = isinstance(status, int) and not isinstance(status, bool) and 0 <= status <= 999
        shown = "websocket" if self.messages is not None else mime[:100] if isinstance(mime, str) else ""
        return EntryInfo(self.index, self.method[:20], self.url[:MAX_URL], status if known else None,
                         shown, self.streamed, self.failed)

    def label(self) -> str:
        return f"[{self.index}] {self.method} {self.url}"[:120]

    def model(self) -> str | None:
        posted = self.request.get("postData")
        return model_of(posted.get("text")) if isinstance(posted, dict) else None

    def status(self) -> int | None:
        value = self.response.get("status")
        if value is None or (isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 999):
            return value
        if isinstance(value, float) and value.is_integer() and 0 <= value <= 999:
            return int(value)
        if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit() and len(value.strip()) <= 3:
            self.problems.append(f"response.status is text ({value!r}), not a number: read as {int(value)}")
            return int(value)
        self.problems.append(f"response.status is {_kind(value)} ({_short(value)}), not a status code: left out")
        return None

    def headers(self, side: str) -> tuple[tuple[str, str], ...]:
        parent = self.request if side == "request" else self.response
        listed = parent.get("headers")
        if listed is None:
            return ()
        if not isinstance(listed, list):
            self.problems.append(f"{side}.headers is {_kind(listed)}, not a list: left out")
            return ()
        headers = []
        for position, header in enumerate(listed):
            where = f"{side}.headers[{position}]"
            if not isinstance(header, dict):
                self.problems.append(f"{where} is {_kind(header)}, not an object: left out")
                continue
            name, value = header.get("name"), header.get("value", "")
            if not isinstance(name, str) or not name:
                self.problems.append(f"{where} has no name ({_short(name)}): left out")
                continue
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                self.problems.append(f"{where} ({name}) has a number for its value: read as {_short(value)}")
                value = json.dumps(value)
            elif not isinstance(value, str):
                self.problems.append(f"{where} ({name}) has {_kind(value)} for its value: left out")
                continue
            headers.append((name, value))
        return tuple(headers)

    def body(self) -> bytes:
        """The response body (a WebSocket entry's: its messages, `_websocket`); `InputError` when there is none."""
        if self.messages is not None:
            return self.websocket()[0]
        text = self.content.get("text")
        if text is None:
            raise InputError(f"HAR entry {self.index} has no response body (browsers leave streamed bodies out of "
                             "some HARs; export with content, or capture with curl -N)")
        if not isinstance(text, str):
            raise InputError(f"HAR entry {self.index}: response.content.text is {_kind(text)}, not text: there is "
                             "no body to read")
        if self.content.get("encoding") == "base64":
            try:
                chunks = _polly_chunks(text)
                return b"".join(map(base64.b64decode, chunks)) if chunks is not None else base64.b64decode(text)
            except (binascii.Error, ValueError) as exc:
                raise InputError(f"HAR entry {self.index}: the base64 body does not decode: {exc}") from None
        return text.encode("utf-8", "surrogatepass")

    def websocket(self) -> tuple[bytes, tuple[tuple[int, float], ...] | None, bool]:
        """A WebSocket entry's body, its arrival times, and whether they count from the entry's start."""
        assert self.messages is not None
        body, reads, from_start, problems = websocket_body(self.messages, self.started)
        if problems and not any(problem in self.problems for problem in problems):
            self.problems.extend(problems)
        return body, reads, from_start

    def timing(self) -> tuple[tuple[str, float], ...]:
        """The entry's own times, in seconds (a HAR gives milliseconds, -1 for unknown; values that are not
        numbers are left out): what `Capture.entry_timing` holds."""
        def seconds(value: Any) -> float | None:
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            # (An integer past a float's range is no time either: dividing it would raise.)
            return round(value / 1000, 6) if number and 0 <= value < _MAX_MILLISECONDS else None
        before = [seconds(self.timings.get(name)) for name in ("blocked", "dns", "connect", "send", "wait")]
        wait, receive, total = before[-1], seconds(self.timings.get("receive")), seconds(self.time)
        found = [("total", total), ("first_byte", round(sum(t for t in before if t is not None), 6)
                                    if wait is not None else None), ("receive", receive)]
        return tuple((name, value) for name, value in found if value is not None)

    def note(self) -> Note | None:
        if not self.problems:
            return None
        listed = "; ".join(self.problems[:_MAX_LISTED])
        more = f"; and {len(self.problems) - _MAX_LISTED} more" if len(self.problems) > _MAX_LISTED else ""
        return Note("har-malformed", f"HAR entry {self.index} has values of the wrong type: {listed}{more}",
                    Severity.WARNING)


def from_har(data: bytes, entry: str | None) -> Capture:
    try:
        har = json.loads(data, parse_int=_integer)
    except RecursionError:
        raise InputError("this looks like a HAR file but is nested too deeply to read") from None
    except ValueError as exc:
        raise InputError(f"this looks like a HAR file but is not JSON: {exc}") from None
    if _NOT_TEXT.search(data):
        _replace_lone_surrogates(har)
    log = har.get("log") if isinstance(har, dict) else None
    listed = log.get("entries") if isinstance(log, dict) else None
    if not isinstance(listed, list):
        where = "log" if not isinstance(log, dict) else "log.entries"
        found = log if not isinstance(log, dict) else listed
        raise InputError(f"this looks like a HAR file but is not one: {where} is {_kind(found)}, "
                         f"not {'an object' if where == 'log' else 'a list of entries'}")
    if not listed:
        raise InputError("this HAR holds no requests (its log.entries is empty): was 'Preserve log' on in the "
                         "browser's Network panel, and was the export made after the request? Record it again, "
                         "let the reply finish, then export")
    entries = [_Entry(index, value) for index, value in enumerate(listed)]
    notes: list[Note] = []
    skipped = [item.index for item in entries if not item.valid]
    if skipped:
        notes.append(Note("har-malformed", f"HAR entries {_numbers(skipped)} are not objects: left out"
                          if len(skipped) > 1 else f"HAR entry {skipped[0]} is not an object: left out",
                          Severity.WARNING))
    entries = [item for item in entries if item.valid]
    chosen_entry, body, chose = choose(entries, entry, HAR, len(listed))
    notes.extend(chose)
    status = chosen_entry.status()
    response_headers, request_headers = chosen_entry.headers("response"), chosen_entry.headers("request")
    reads, started = _reads(chosen_entry.reads, len(body)), None
    if chosen_entry.messages is not None:
        _, reads, from_start = chosen_entry.websocket()
        started = 0.0 if from_start else None
        notes.append(Note("websocket-messages", f"HAR entry {chosen_entry.index} is a WebSocket: its "
                                                f"{len(chosen_entry.messages)} messages are the capture, one JSONL "
                                                "record a line (sent ones are context, not folded)"))
    elif reads:
        started = 0.0
    repaired = chosen_entry.note()
    return Capture(
        body, "har", reads=reads, status=status, response_headers=response_headers, request_headers=request_headers,
        url=chosen_entry.url or None, entry_timing=chosen_entry.timing(), started=started,
        entries=tuple(item.info() for item in entries), entry=chosen_entry.index,
        notes=(Note("input-har", f"read HAR entry {chosen_entry.index}: {chosen_entry.method} {chosen_entry.url}"
                                 + (f" (model {model})" if (model := chosen_entry.model()) else "")),
               *notes, *((repaired,) if repaired is not None else ())),
    )


def _polly_chunks(text: str) -> list[str] | None:
    """Polly.js records a body sent with a Content-Encoding as a JSON list of its chunks, each base64
    (`@pollyjs/adapter-node-http`, getBodyFromChunks): the compressed bytes, inflated as any other."""
    if not text.startswith("["):
        return None
    try:
        chunks = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return chunks if isinstance(chunks, list) and all(isinstance(chunk, str) for chunk in chunks) else None


def _reads(value: Any, size: int) -> tuple[tuple[int, float], ...] | None:
    """The per-read arrival times streamfold's HAR export keeps in `_reads`, when they fit the body."""
    if not isinstance(value, list) or not value or not all(
            isinstance(item, list) and len(item) == 2 and type(item[0]) is int and type(item[1]) in (int, float)
            and math.isfinite(item[1]) and item[1] >= 0 for item in value):
        return None
    offsets = [item[0] for item in value]
    if offsets[0] != 0 or offsets != sorted(offsets) or offsets[-1] >= max(size, 1):
        return None
    return tuple((item[0], float(item[1])) for item in value)


# A lone surrogate escape (`"\\ud800"`), or the bytes of a surrogate (no UTF-8 has them; json.loads reads
# them as one): what makes the HAR hold a string no UTF-8 encoder writes.
_NOT_TEXT = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")


def _replace_lone_surrogates(har: Any) -> None:
    """Lone surrogates in the HAR's strings (URLs, headers, names: they reach notes and the entry list)
    become U+FFFD, except in bodies and WebSocket messages: those are kept as the bytes the fold reads,
    which reports each at its offset (`invalid-utf8`)."""
    log = har.get("log") if isinstance(har, dict) else None
    listed = log.get("entries") if isinstance(log, dict) else None
    kept: list[tuple[dict[str, Any], str, Any]] = []
    for entry in listed if isinstance(listed, list) else ():
        response = entry.get("response") if isinstance(entry, dict) else None
        content = response.get("content") if isinstance(response, dict) else None
        if isinstance(content, dict) and "text" in content:
            kept.append((content, "text", content["text"]))
        messages = entry.get("_webSocketMessages") if isinstance(entry, dict) else None
        for message in messages if isinstance(messages, list) else ():
            if isinstance(message, dict) and "data" in message:
                kept.append((message, "data", message["data"]))
    without_lone_surrogates(har)
    for holder, key, value in kept:
        holder[key] = value


def _integer(digits: str) -> int | float:
    """A JSON integer; one too long for `int()` (over 4300 digits) is read as a float (it is no HAR field)."""
    return int(digits) if len(digits) <= 4000 else float(digits)


def _numbers(indexes: list[int]) -> str:
    return ", ".join(str(index) for index in indexes[:10]) + ("…" if len(indexes) > 10 else "")


def _short(value: Any) -> str:
    text = repr(value) if not isinstance(value, (dict, list)) else _kind(value)
    return text if len(text) <= 40 else text[:39] + "…"
