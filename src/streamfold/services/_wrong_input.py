"""Bodies that are no stream at all, said in one finding instead of thousands:
nothing (0 bytes, or only whitespace), an HTML page (a proxy's or a login
page's, with its title), an API's error response (one JSON object, named by
`_not_streams.error_response`), a file of a well-known format (a PDF, an
image, an archive, ...: `_not_streams.binary_format`), or bytes that are not
text. AWS event-stream is binary and a stream: it is left to the framer, as
is a gzip body that did not inflate (its note says so already)."""

from __future__ import annotations

import html
import json
import re

from ..findings import Severity
from ..framing.eventstream import looks_like_eventstream
from ._not_streams import binary_format, describe_error, error_response
from .capture import Note

__all__ = ["NOT_A_STREAM", "is_html", "recognise"]

#: The codes of the findings that mean the body was not folded (there was nothing, or nothing to fold).
NOT_A_STREAM = frozenset({"empty-input", "html-page", "not-text", "error-response"})

# How much of the body is read to tell (a huge file is judged by its start).
_SAMPLE = 1024 * 1024
# Bodies with more bad bytes than this share are not text (a Latin-1 or damaged stream has far fewer).
_BINARY_SHARE = 0.3
_HTML_START = re.compile(rb"\A(?:\xef\xbb\xbf)?\s*(?:<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>]|<title[\s>]"
                         rb"|<!--.*?-->\s*<(?:!doctype\s+html|html))", re.IGNORECASE | re.DOTALL)
_TITLE = re.compile(rb"<title[^>]*>(.*?)</title", re.IGNORECASE | re.DOTALL)
_HEADING = re.compile(rb"<h1[^>]*>(.*?)</h1", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]*>")
_CONTROL = bytes(b for b in range(32) if b not in b"\t\n\r\f") + b"\x7f"
_SHOWN_TITLE = 120


#: What a `Capture.source` is called in a sentence ("the body read out of the HAR").
_SOURCE_NAMES = {"har": "the HAR", "curl-verbose": "the curl output", "curl-trace": "the curl trace",
                 "log": "the log", "devtools": "the DevTools rows", "sdk-repr": "the SDK objects",
                 "store": "the stored capture"}


def recognise(body: bytes, *, source: str = "raw", input_size: int | None = None) -> Note | None:
    """The finding for a body that is not a stream, or None when it may be one. `source` and
    `input_size`: what the body was read out of, and its size, so that a body that came out empty
    of a larger input (a log with no stream data in it) is never said to be an empty input."""
    if not body[:4096].strip() and not body.strip():  # the head first: a huge body is not copied
        return Note("empty-input", f"there was nothing to fold: {_emptiness(body, source, input_size)}",
                    Severity.WARNING)
    if is_html(body):
        return Note("html-page", f"the body is an HTML page{_title(body)}, not a stream: a proxy, a gateway, a "
                                 "login page or the wrong URL answered instead of the model; nothing was folded",
                    Severity.ERROR)
    known = binary_format(body[:64])
    if known is not None:
        return Note("not-text", f"the body is {known}, not a stream: nothing was folded (is it the right file? "
                                "--transport folds it anyway)", Severity.ERROR, details=(("format", known),))
    error = error_response(body)
    if error is not None:
        return Note("error-response", f"the body is an error response, not a stream (nothing was folded): "
                                      f"{describe_error(error)}", Severity.ERROR, details=tuple(error.items()))
    if body[:2] == b"\x1f\x8b" or looks_like_eventstream(body[:64]):
        return None
    sample = body[:_SAMPLE]
    bad = _bad_bytes(sample)
    if bad > _BINARY_SHARE * len(sample):
        whole = "" if len(sample) == len(body) else f"first {len(sample):,} of the {len(body):,}"
        of = f"the {whole or f'{len(body):,}'} bytes"
        return Note("not-text", f"the body is not text: {bad * 100 // len(sample)}% of {of} are not UTF-8 text "
                                "(invalid UTF-8 or control bytes), and it is not an AWS event-stream or gzip; "
                                "nothing was folded (is it the right file? --transport folds it anyway)",
                    Severity.ERROR)
    return None


def _emptiness(body: bytes, source: str, input_size: int | None) -> str:
    if body:
        return f"it holds only whitespace ({len(body):,} bytes)"
    if not input_size:
        return "it is empty (0 bytes)"
    if source == "log":
        return f"no line of the log ({input_size:,} bytes) held stream data, so the stream body is empty"
    return f"the stream body read out of {_SOURCE_NAMES.get(source, 'the input')} ({input_size:,} bytes) is empty"


def is_html(body: bytes) -> bool:
    """Whether the body starts as an HTML page does."""
    return bool(_HTML_START.match(body[:4096]))


def _bad_bytes(sample: bytes) -> int:
    """Bytes that are not UTF-8 text: invalid UTF-8 (one U+FFFD each run) and control bytes."""
    replaced = sample.decode("utf-8", "replace").count("\ufffd") - sample.count(b"\xef\xbf\xbd")
    controls = len(sample) - len(sample.translate(None, _CONTROL))
    return max(0, replaced) + controls


def _title(body: bytes) -> str:
    found = _TITLE.search(body[:65536]) or _HEADING.search(body[:65536])
    if found is None:
        return ""
    text = html.unescape(_TAG.sub("", found.group(1).decode("utf-8", "replace")))
    text = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    if not text:
        return ""
    if len(text) > _SHOWN_TITLE:
        text = text[: _SHOWN_TITLE - 1] + "…"
    return f" (title {json.dumps(text, ensure_ascii=False)})"
