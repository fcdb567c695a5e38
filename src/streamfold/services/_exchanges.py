"""Files that hold several recorded HTTP exchanges: a HAR's entries (`_har.py`), a VCR cassette's
interactions (`_cassettes.py`), a claude-trace or claude-tap log's records (`_trace_logs.py`).

One way for all of them to say which exchange is folded and list the others (`choose`: the last
streamed one unless `--entry N|URL` picks, a failed request when nothing streamed, the same
wording with the file's own nouns), to tell a stream from an error body (`looks_streamed`,
`looks_failed`), and, for the formats that keep a body as it came off the wire (cassettes), to
undo its Content-Encoding through the bounded inflater (`Recorded`, `capture_of`).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from .._json import without_lone_surrogates
from ..findings import Code, Severity
from ._inflate import Inflater, can_inflate
from ._wrong_input import is_html
from .capture import Capture, EntryInfo, InputError, Note

__all__ = ["Exchange", "Kind", "Recorded", "capture_of", "choose", "looks_failed", "looks_streamed", "model_of"]

_STREAM_TYPES = ("text/event-stream", "application/x-ndjson", "application/jsonl", "application/vnd.amazon.eventstream",
                 "application/stream+json")
# An exchange's URL is listed with at most this many characters (a data: URL can be megabytes).
MAX_URL = 500


@dataclass(frozen=True, slots=True)
class Kind:
    """How a file of exchanges names itself and them, and the codes of its notes."""

    name: str  # "HAR", "cassette", "claude-trace log"
    one: str  # "entry", "interaction", "record"
    many: str
    source: str  # Capture.source
    entries_code: Code
    malformed_code: Code

    def count(self, number: int) -> str:
        return f"{number} {self.one if number == 1 else self.many}"


class Exchange(Protocol):
    index: int
    url: str
    method: str

    @property
    def streamed(self) -> bool: ...

    @property
    def failed(self) -> bool: ...

    def status(self) -> int | None: ...

    def body(self) -> bytes: ...

    def label(self) -> str: ...


E = TypeVar("E", bound=Exchange)


def looks_streamed(mime: str | None, text: str) -> bool:
    """A streamed response, by its Content-Type or, without one that says, its first bytes."""
    if mime and any(kind in mime.lower() for kind in _STREAM_TYPES):
        return True
    head = text[:2000]
    if head.startswith(("data:", "event:", ":")) or "\ndata:" in head:
        return True
    # NDJSON without a Content-Type that says so (a recorder that scrubbed the headers): JSON objects a line.
    lines = head.lstrip().split("\n", 2)
    return len(lines) > 2 and lines[0].rstrip().startswith("{") and lines[0].rstrip().endswith("}") and (
        lines[1].startswith("{"))


def looks_failed(status: Any, mime: str | None, text: str) -> bool:
    """A request that failed with a JSON error body (a 429, a 401, ...) or a proxy's HTML error page (a 502)."""
    json_body = text.lstrip()[:1] in ("{", "[") or bool(mime and "json" in mime.lower())
    json_body = json_body or is_html(text[:4096].encode("utf-8", "replace"))
    return (isinstance(status, int) and not isinstance(status, bool) and not 200 <= status < 400
            and status != 0 and bool(text) and json_body)


def choose(exchanges: Sequence[E], entry: str | None, kind: Kind, total: int) -> tuple[E, bytes, list[Note]]:
    """The exchange to fold, its body, and the notes on the choice: the one `entry` names (its index, or a
    part of its URL), else the last streamed one with a body, else the last that failed (its error body is
    the finding). Raises `InputError` listing the exchanges when none can be used."""
    notes: list[Note] = []
    streamed = [item for item in exchanges if item.streamed]
    if entry is not None:
        number = entry.strip()
        if number.isascii() and number.isdigit():
            chosen = [item for item in exchanges if str(item.index) == (number.lstrip("0") or "0")]
        else:
            chosen = [item for item in exchanges if entry in item.url]
        if not chosen:
            raise InputError(f"no {kind.name} {kind.one} matches {entry[:80]!r}; streamed {kind.many}: "
                             f"{listing(streamed or exchanges)}")
        # Of those a URL part matches, the streams that succeeded: a 429 around the retry that streamed is not it.
        streams = [item for item in chosen if item.streamed]
        streamed = [item for item in streams if (item.status() or 200) < 400] or streams or chosen
        if len(streamed) < len(chosen):
            left = listing([item for item in chosen if item not in streamed])
            notes.append(Note(kind.entries_code, f"--entry {entry[:80]!r} also matches {kind.many} that did not "
                                                 f"stream or failed: {left}"))
    failed = [item for item in exchanges if item.failed]
    if not streamed and failed:
        # No stream came: the request that failed (a 429, a 401) and its error body are the finding.
        streamed = failed[-1:]
        also_failed = f" (others failed too: {listing(failed[:-1])})" if len(failed) > 1 else ""
        notes.append(Note(kind.entries_code, f"the {kind.name} holds no streamed response; {kind.one} "
                                             f"{failed[-1].index} failed, so its error body is shown{also_failed}"))
    if not streamed:
        raise InputError(f"the {kind.name} has {kind.count(total)} and none is a streamed response; "
                         f"pick one with --entry N: {listing(exchanges)}")
    failures: list[InputError] = []
    for picked in reversed(streamed):
        try:
            body = picked.body()
            break
        except InputError as exc:  # the last exchange with a body is used; the ones after it are said
            failures.append(exc)
    else:
        raise failures[0]
    if len(streamed) > 1:
        others = [item for item in streamed if item is not picked]
        notes.append(Note(kind.entries_code, f"the {kind.name} has {len(streamed)} streamed {kind.many}; using "
                                             f"{kind.one} {picked.index} (the last{' with a body' if failures else ''})"
                                             f". Others: {listing(others)}. Pick with --entry"))
    notes.extend(Note(kind.malformed_code, str(failure), Severity.WARNING) for failure in failures)
    return picked, body, notes


def listing(exchanges: Sequence[Exchange]) -> str:
    return "; ".join(item.label() for item in exchanges[:10])


def kind_of(value: Any) -> str:
    """What a value of the wrong type is, in words."""
    names = {dict: "an object", list: "a list", str: "text", bool: "a boolean", int: "a number", float: "a number",
             bytes: "binary"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


# -- exchanges recorded with their body as it came off the wire (cassettes, trace logs) ----------------


@dataclass(slots=True)
class Recorded:
    """One recorded exchange, its fields already read into the right types; `problems` says what was not."""

    kind: Kind
    index: int
    method: str = ""
    url: str = ""
    status_code: int | None = None
    request_headers: tuple[tuple[str, str], ...] = ()
    response_headers: tuple[tuple[str, str], ...] = ()
    #: The response body as recorded (still compressed when its Content-Encoding says so), or why there is none.
    raw: bytes | None = None
    missing: str = "it has no response body"
    #: The request's body, parsed when it is JSON: where the model is read from.
    request_body: Any = None
    problems: list[str] = field(default_factory=list)
    #: How the body was rebuilt, when the recorder kept parsed events, not bytes (claude-tap).
    rebuilt: str | None = None

    def header(self, name: str, side: str = "response") -> str | None:
        headers = self.response_headers if side == "response" else self.request_headers
        return next((value for key, value in reversed(headers) if key.lower() == name), None)

    @property
    def _text(self) -> str:
        return (self.raw or b"")[:4096].decode("utf-8", "replace")

    @property
    def streamed(self) -> bool:
        return self.method.upper() != "OPTIONS" and self.raw is not None and (
            looks_streamed(self.header("content-type"), self._text))

    @property
    def failed(self) -> bool:
        return self.method.upper() != "OPTIONS" and looks_failed(self.status_code, self.header("content-type"),
                                                                self._text)

    def status(self) -> int | None:
        return self.status_code

    def body(self) -> bytes:
        if self.raw is None:
            raise InputError(f"{self.kind.name} {self.kind.one} {self.index}: {self.missing}")
        return self.raw

    def label(self) -> str:
        return f"[{self.index}] {self.method} {self.url}"[:120]

    def info(self) -> EntryInfo:
        mime = self.header("content-type") or ""
        return EntryInfo(self.index, self.method[:20], self.url[:MAX_URL], self.status_code, mime[:100],
                         self.streamed, self.failed)

    def model(self) -> str | None:
        return model_of(self.request_body)

    def make_text(self) -> None:
        """Lone surrogates (a JSON `\\ud800`) in what is shown of the exchange become U+FFFD, so every
        output stays strict UTF-8; the body keeps them, for the fold to report at their offset."""
        shown = [self.method, self.url, self.missing, self.request_headers, self.response_headers, self.problems]
        self.method, self.url, self.missing, request, response, self.problems = without_lone_surrogates(
            [[list(pair) for pair in item] if isinstance(item, tuple) else item for item in shown])[0]
        self.request_headers = tuple(tuple(pair) for pair in request)
        self.response_headers = tuple(tuple(pair) for pair in response)


def model_of(request_body: Any) -> str | None:
    """The model a request asked for, from its body (JSON text, or already parsed), when it says."""
    body = request_body
    if isinstance(body, (str, bytes)) and body.lstrip()[:1] in ("{", b"{"):
        try:
            body = json.loads(body)
        except (ValueError, RecursionError):
            return None
    model = body.get("model") if isinstance(body, dict) else None
    return without_lone_surrogates(model[:100])[0] if isinstance(model, str) else None


def capture_of(exchanges: Sequence[Recorded], entry: str | None, kind: Kind, *, total: int, how: str,
               max_inflated: int, refuse_larger: bool, notes: Sequence[Note] = ()) -> Capture:
    """The `Capture` of the exchange `choose` picks: its body inflated when its Content-Encoding says
    it was compressed (and it was), the request it answered said in the first note."""
    for exchange in exchanges:
        exchange.make_text()
    picked, body, chose = choose(exchanges, entry, kind, total)
    model = picked.model()
    read = f"read {kind.name} {kind.one} {picked.index} ({how}): {picked.method} {picked.url}"[:600]
    read += (f" (model {model})" if model else "") + (f"; {picked.rebuilt}" if picked.rebuilt else "")
    said = [Note("input-recording", read), *notes, *chose]
    body, inflated = _decode(body, picked.header("content-encoding"), max_inflated, refuse_larger)
    said.extend(inflated)
    if picked.problems:
        listed = "; ".join(picked.problems[:8]) + (f"; and {len(picked.problems) - 8} more"
                                                   if len(picked.problems) > 8 else "")
        said.append(Note(kind.malformed_code, f"{kind.name} {kind.one} {picked.index} has values of the wrong "
                                              f"type: {listed}", Severity.WARNING))
    return Capture(body, kind.source, status=picked.status_code, response_headers=picked.response_headers,
                   request_headers=picked.request_headers, url=picked.url or None,
                   entries=tuple(item.info() for item in exchanges), entry=picked.index, notes=tuple(said))


def _decode(body: bytes, header: str | None, limit: int, refuse_larger: bool) -> tuple[bytes, list[Note]]:
    """`body` inflated as its Content-Encoding says, when the bytes are so compressed: a recorder that
    kept the header but stored the body decoded (vcrpy's old httpx format, `decode_compressed_response`
    done by hand) is said, and the body read as it is."""
    encoding = (header or "").split(",")[-1].strip().lower()
    if encoding in ("", "identity", "none") or not body:
        return body, []
    head = body[:2000].decode("utf-8", "replace")
    if looks_streamed(None, head) or head.lstrip()[:1] in ("{", "["):
        return body, [Note("gzip-body", f"the response says Content-Encoding {encoding!r} but its recorded body is "
                                        "plain text: the recorder kept it decoded; read as it is")]
    if encoding in ("gzip", "x-gzip") and body[:2] != b"\x1f\x8b":
        return body, [Note("gzip-body", f"the response says Content-Encoding {encoding!r} but its recorded body "
                                        "is not gzip (no gzip header): read as it is", Severity.WARNING)]
    if not can_inflate(encoding):
        known = "brotli (br), which needs the `brotli` package (1.2 or later)" if encoding == "br" else repr(encoding)
        return body, [Note("gzip-body", f"the body was recorded with Content-Encoding {known}, which streamfold "
                                        "cannot decode here: it is folded as recorded", Severity.WARNING)]
    inflater = Inflater(encoding, limit, body[:2])
    try:
        inflater.feed(body)
    except zlib.error as exc:
        return body, [Note("gzip-body", f"the response says Content-Encoding {encoding!r} but its recorded body "
                                        f"does not decompress ({exc}): read as it is", Severity.WARNING)]
    if inflater.over and refuse_larger:
        raise inflater.refusal()
    notes = [inflater.note()]
    if inflater.over:
        notes.append(inflater.limit_note())
    return inflater.body(), notes
