"""The registry of every finding code: what it is (an error or a diagnostic,
or a note on the input), how severe it is by default, one line on what it
means, and the vendor it belongs to. The docs' findings page is generated from
it (`code_tables`, put in place by docs/hooks.py; tests/project/test_docs.py checks the built page).

The codes any stream can have are listed here, and `Code` lists them as a type. A vendor's own codes
are in its dialect's spec (`DialectSpec.codes`), which the dialect registry adds here when it loads
the dialect (`register_codes`); tests/project/test_findings_registry.py holds every code a finding
is made with to one of the two.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Literal

__all__ = ["CODES", "Code", "CodeInfo", "Kind", "Severity", "code_tables", "register_codes"]


class Severity(str, enum.Enum):
    """How much a finding matters. A `str`, so it compares equal to its value."""

    #: Bytes were lost or damaged, or the reply is wrong as a client would build it.
    ERROR = "error"
    #: Suspicious: a client may well get this wrong.
    WARNING = "warning"
    #: Worth knowing; nothing is wrong with the reply.
    INFO = "info"

    def __str__(self) -> str:
        return self.value


class Kind(str, enum.Enum):
    """Where a finding goes in the result."""

    #: `errors`: a frame that failed to decode, or an error the server sent.
    ERROR = "error"
    #: `diagnostics`: suspicious but decodable.
    DIAGNOSTIC = "diagnostic"
    #: `diagnostics` too, from the input readers and transport checks (not from the stream's frames).
    NOTE = "note"


Code = Literal[
    # errors
    "invalid-json", "in-stream-error", "frame-too-large", "crc-mismatch", "bad-prelude", "truncated-message",
    "bad-headers", "websocket-bad-message",
    # diagnostics of every dialect
    "glued-frames", "unterminated-final-frame", "unterminated-final-line", "missing-terminal", "frame-after-terminal",
    "unknown-field",
    "invalid-utf8", "invalid-retry", "invalid-id", "empty-data", "tool-args-invalid", "cumulative-resend",
    "tool-call-identity-changed", "tool-call-missing-index", "tool-call-repeated", "reasoning-in-content",
    "finish-reason-conflict", "content-after-finish", "unknown-dialect", "unexpected-payload", "stall",
    "findings-collapsed", "choices-capped", "tool-calls-capped",
    "non-strict-json", "websocket-binary", "websocket-other-stream", "lane-not-found",
    "final-text-mismatch",
    # notes on the input and the transport
    "input-har", "har-entries", "har-malformed", "input-recording", "recording-entries", "recording-malformed",
    "input-curl", "input-curl-trace", "trace-ascii", "trace-ascii-lossy",
    "trace-malformed", "skipped-responses", "input-log", "log-lines-skipped", "clock-rollover", "clock-backwards",
    "gzip-body", "inflated-too-large", "chunked-transfer-encoding", "http-status", "content-type", "content-encoding",
    "buffered-response", "proxy-buffering", "text-encoding", "sdk-repr", "input-devtools", "empty-input", "html-page",
    "not-text", "not-a-stream", "error-response", "input-store", "store-unfinished", "websocket-messages",
]


@dataclass(frozen=True, slots=True)
class CodeInfo:
    code: str
    kind: Kind
    severity: Severity
    #: One line on what the finding means (the docs' findings tables).
    doc: str
    #: The dialect it belongs to (whose spec lists it); None for findings any stream can have.
    vendor: str | None = None


_E, _D, _N = Kind.ERROR, Kind.DIAGNOSTIC, Kind.NOTE
_ERR, _WARN, _INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

_ALL = (
    CodeInfo("invalid-json", _E, _ERR, "a frame's data is not JSON; kept with the parser's message and position, "
             "the rest folds"),
    CodeInfo("in-stream-error", _E, _ERR, "the server sent an error inside the 200 stream (`{\"error\":…}`, vLLM "
             "`{\"object\":\"error\"}`, OpenRouter, Anthropic `error`, Responses `response.failed`/`error`, Gemini and "
             "Ollama error elements, Cohere `ERROR`, Bedrock exception messages, a llama.cpp `error:` field); the "
             "affected choice ends with `error`"),
    CodeInfo("frame-too-large", _E, _ERR, "a frame exceeded `max_frame_size`; its head is kept, the rest dropped"),
    CodeInfo("crc-mismatch", _E, _ERR, "AWS event-stream: a message's bytes were damaged (its CRC32 does not match)"),
    CodeInfo("bad-prelude", _E, _ERR, "AWS event-stream: sync was lost; framing resumes at the next valid message"),
    CodeInfo("truncated-message", _E, _ERR, "AWS event-stream: the stream ended inside a message"),
    CodeInfo("bad-headers", _E, _ERR, "AWS event-stream: a message's headers are malformed"),
    CodeInfo("websocket-bad-message", _E, _ERR, "WebSocket: a line of the capture is not a message record "
             "(`type` send/receive, `data` text, as in a HAR's `_webSocketMessages`); not folded"),
    CodeInfo("websocket-binary", _D, _INFO, "WebSocket: a binary message (opcode 2); only text messages are folded"),
    CodeInfo("websocket-other-stream", _D, _INFO, "WebSocket: messages of a second `stream_id` lane (Responses "
             "WebSocket mode multiplexes responses); the fold follows the first lane (or the one asked for), the "
             "others are listed"),
    CodeInfo("lane-not-found", _D, _WARN, "the lane asked for (`--lane`, `fold(..., lane=)`) is none of the "
             "capture's lanes (stream_ids, responses, agents): they are listed"),
    CodeInfo("glued-frames", _D, _WARN, "a lost blank line left 2+ JSON documents in one frame; each is folded "
             "(`details`: the first 100 documents and the `count` of all)"),
    CodeInfo("unterminated-final-frame", _D, _WARN, "the stream ended inside its last frame (spec-exact clients "
             "drop it; streamfold folds it)"),
    CodeInfo("unterminated-final-line", _D, _WARN, "SSE: the stream ended in the middle of a line; as the spec "
             "says, that line is discarded (nothing of it is folded) and its bytes are shown"),
    CodeInfo("missing-terminal", _D, _WARN, "the stream never said it was over: probably cut"),
    CodeInfo("frame-after-terminal", _D, _WARN, "data after the terminal frame: listed, not folded (clients stop "
             "there)"),
    CodeInfo("unknown-field", _D, _WARN, "`Data:`, `data :`, `date:`… ignored by SSE clients, with \"did you mean "
             "`data:`?\""),
    CodeInfo("invalid-utf8", _D, _WARN, "bytes that are not UTF-8 (replaced by U+FFFD), with their byte offset"),
    CodeInfo("invalid-retry", _D, _INFO, "a `retry` that is not digits (ignored per spec)"),
    CodeInfo("invalid-id", _D, _INFO, "an `id` with NUL (ignored per spec)"),
    CodeInfo("empty-data", _D, _INFO, "an empty `data:` field (clients that JSON-parse it fail)"),
    CodeInfo("tool-args-invalid", _D, _ERR, "the joined arguments do not parse: message, position, and the frame "
             "that sent that character"),
    CodeInfo("cumulative-resend", _D, _WARN, "fragments repeat earlier ones or the whole arguments; says what was "
             "recovered into `parsed`"),
    CodeInfo("tool-call-identity-changed", _D, _WARN, "a tool call's id or name changed; says whether it was kept "
             "as one call or split"),
    CodeInfo("tool-call-missing-index", _D, _WARN, "a tool-call fragment without `index`, and which call it was "
             "given to"),
    CodeInfo("tool-call-repeated", _D, _WARN, "a whole tool call sent again (Gemini, Ollama): kept once"),
    CodeInfo("reasoning-in-content", _D, _WARN, "`<think>` (or `<thought>`) inside the reply text"),
    CodeInfo("finish-reason-conflict", _D, _WARN, "a later, different finish reason"),
    CodeInfo("content-after-finish", _D, _WARN, "text or arguments after the choice's finish reason"),
    CodeInfo("unknown-dialect", _D, _WARN, "no dialect recognised the payloads; lists the top-level keys seen"),
    CodeInfo("unexpected-payload", _D, _WARN, "a payload of the wrong shape for its dialect, or a value of the "
             "wrong JSON type (text that is a number, an id that is an array): ignored"),
    CodeInfo("stall", _D, _WARN, "with arrival times: a gap between frames over the `--stall` threshold"),
    CodeInfo("findings-collapsed", _D, _INFO, "more findings of one code than `max_findings_per_code`: the first "
             "are kept, this one counts them all and lists their frames as ranges"),
    CodeInfo("choices-capped", _D, _WARN, "more choices than `max_choices`: the further choices' deltas were dropped"),
    CodeInfo("tool-calls-capped", _D, _WARN, "more tool calls in a choice than `max_tool_calls`: the further calls "
             "were dropped"),
    CodeInfo("non-strict-json", _D, _WARN, "NaN, Infinity, a number beyond a double's range or a lone surrogate "
             "escape (`\\ud800`): the frame is folded with null or U+FFFD in their place, so every output stays "
             "strict JSON and UTF-8"),
    CodeInfo("final-text-mismatch", _D, _WARN, "the server's final text differs from the streamed join; the final "
             "text is kept"),
    CodeInfo("input-har", _N, _INFO, "the body was read from a HAR entry"),
    CodeInfo("har-entries", _N, _INFO, "which HAR entry was used: the last of several streamed ones, or a failed "
             "request when none streamed"),
    CodeInfo("har-malformed", _N, _WARN, "HAR entries or fields of the wrong type, read when they can be and left "
             "out when not"),
    CodeInfo("input-recording", _N, _INFO, "the body was read from a VCR cassette's interaction or a claude-trace or "
             "claude-tap log's record; the request it answered (method, URL, model) is said"),
    CodeInfo("recording-entries", _N, _INFO, "which interaction or record was used: the last of several streamed "
             "ones, or a failed request when none streamed"),
    CodeInfo("recording-malformed", _N, _WARN, "interactions or records, or fields of them, of the wrong type: read "
             "when they can be and left out when not"),
    CodeInfo("websocket-messages", _N, _INFO, "a HAR WebSocket entry: its `_webSocketMessages` became the "
             "capture, one JSONL message record a line, their times kept as arrival times"),
    CodeInfo("input-curl", _N, _INFO, "the body was read from `curl -v` or `-i` output"),
    CodeInfo("input-curl-trace", _N, _INFO, "the body was read from a `curl --trace` dump"),
    CodeInfo("trace-ascii", _N, _INFO, "a `--trace-ascii` dump: control bytes were printed as '.'"),
    CodeInfo("trace-ascii-lossy", _N, _WARN, "a `--trace-ascii` dump lost bytes the stream needs"),
    CodeInfo("trace-malformed", _N, _WARN, "rows or block headers of a `curl --trace` dump that could not be read "
             "were left out"),
    CodeInfo("skipped-responses", _N, _INFO, "curl printed responses before the reply (`100 Continue`, a proxy's "
             "reply to CONNECT, a redirect): they were skipped"),
    CodeInfo("input-log", _N, _INFO, "a log: the logged stream data is the body, its timestamps the arrival times"),
    CodeInfo("log-lines-skipped", _N, _INFO, "log lines holding no stream data (other messages) were skipped"),
    CodeInfo("clock-rollover", _N, _INFO, "the timestamps passed midnight: the later ones are the next day's"),
    CodeInfo("clock-backwards", _N, _WARN, "a timestamp earlier than the one before it: held at the earlier time, "
             "so no gap is negative"),
    CodeInfo("input-store", _N, _INFO, "the body and its arrival times were read from the capture store"),
    CodeInfo("store-unfinished", _N, _WARN, "the stored exchange did not end normally: still in flight, cut by the "
             "client or the upstream, or failed"),
    CodeInfo("gzip-body", _N, _WARN, "the body was gzip-compressed"),
    CodeInfo("inflated-too-large", _N, _ERR, "a compressed body inflates past the limit (256 MiB, `--max-inflated`): "
             "what fits is folded, the rest dropped; `offset` is where the body was cut"),
    CodeInfo("chunked-transfer-encoding", _N, _WARN, "the body was still in chunked transfer-encoding"),
    CodeInfo("http-status", _N, _ERR, "the response status was not 200"),
    CodeInfo("content-type", _N, _WARN, "the Content-Type is not a streaming one"),
    CodeInfo("content-encoding", _N, _WARN, "the stream was compressed, which makes proxies and clients buffer it"),
    CodeInfo("buffered-response", _N, _WARN, "the response had a Content-Length: it was sent whole"),
    CodeInfo("proxy-buffering", _N, _INFO, "nginx without `X-Accel-Buffering: no` buffers the stream"),
    CodeInfo("text-encoding", _N, _INFO, "the input was UTF-16 or UTF-32 text (PowerShell's `>` writes UTF-16), "
             "with or without a byte-order mark: decoded to UTF-8 first, so locations refer to the decoded text"),
    CodeInfo("sdk-repr", _N, _INFO, "a pasted Python `repr()` of SDK objects (`ChatCompletionChunk(...)`, "
             "`RawContentBlockDeltaEvent(...)`): read back into the chunks they print (parsed, never evaluated)"),
    CodeInfo("input-devtools", _N, _INFO, "rows copied from Chrome DevTools' EventStream tab (type, data, time "
             "separated by tabs): rebuilt as SSE, their times kept as arrival times"),
    CodeInfo("empty-input", _N, _WARN, "there was nothing to fold: the body is empty or only whitespace"),
    CodeInfo("html-page", _N, _ERR, "the body is an HTML page (a proxy's error page, a login page), with its "
             "title: not a stream, nothing was folded"),
    CodeInfo("not-text", _N, _ERR, "the body is neither text nor AWS event-stream nor gzip: a file of a "
             "well-known format is named (a PDF, an image, an archive, an executable, a media file), else the share "
             "of bytes that are not UTF-8 text is given; nothing was folded"),
    CodeInfo("error-response", _N, _ERR, "the body is an API's error response, not a stream (OpenAI's "
             "`{\"error\": {…}}`, Anthropic's `{\"type\": \"error\", …}`, Google's, a bare `{\"error\": \"…\"}`, "
             "AWS's `{\"message\": …}`): the vendor's error type and message in one line; nothing was folded"),
    CodeInfo("not-a-stream", _N, _INFO, "the input is one non-streaming reply (a ChatCompletion, a Message, a "
             "Responses object, `streamfold export`'s output, ...): read by its dialect's reader as the reply"),
)

#: Every code: those above, then each loaded dialect's own (`register_codes`).
CODES: dict[str, CodeInfo] = {info.code: info for info in _ALL}


def register_codes(infos: tuple[CodeInfo, ...]) -> None:
    """Add a dialect's own codes; a code another dialect (or the core) already has is refused."""
    for info in infos:
        known = CODES.get(info.code)
        if known is not None and known != info:
            raise ValueError(f"the finding code {info.code!r} of {info.vendor} is {known.vendor or 'the core'}'s")
    CODES.update((info.code, info) for info in infos)


def code_tables() -> str:
    """The tables of codes of docs/findings.md, as markdown: errors, diagnostics of every dialect,
    of one vendor, notes."""
    def table(rows: list[CodeInfo], *, vendor: bool = False) -> str:
        head = "| code | vendor | severity | what it means |\n|---|---|---|---|\n" if vendor else \
            "| code | severity | what it means |\n|---|---|---|\n"
        return head + "".join(
            f"| `{info.code}` | {info.vendor} | {info.severity.value} | {info.doc} |\n" if vendor else
            f"| `{info.code}` | {info.severity.value} | {info.doc} |\n" for info in rows)

    every = list(CODES.values())
    errors = [info for info in every if info.kind is Kind.ERROR]
    common = [info for info in every if info.kind is Kind.DIAGNOSTIC and info.vendor is None]
    vendors = [info for info in every if info.kind is Kind.DIAGNOSTIC and info.vendor is not None]
    notes = [info for info in every if info.kind is Kind.NOTE]
    return ("Errors (bytes lost, damaged, or an error the server sent):\n\n" + table(errors)
            + "\nDiagnostics, for every dialect:\n\n" + table(common)
            + "\nDiagnostics of one vendor:\n\n" + table(vendors, vendor=True)
            + "\nNotes on the input (HAR, curl or log files) and transport checks:\n\n" + table(notes))
