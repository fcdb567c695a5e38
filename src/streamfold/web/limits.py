"""What one request may cost the page's server: the body's size (as sent, and
once a `Content-Encoding: gzip` body is inflated) and how many captures are
folded at once.

A refusal is a response with a sentence the page shows: 413 for a capture
over `--max-size`, 415 for a compression it cannot read, 503 (with
`Retry-After`) when `--max-folds` captures are being folded already.
"""

from __future__ import annotations

import zlib

from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from .._json import dumps_strict
from ..services._inflate import Inflater
from .refusal import inflated_too_large, too_large_message

__all__ = ["DEFAULT_MAX_FOLDS", "FoldSlots", "error", "read_body"]

#: Captures folded at once by default (each in a thread; more wait their turn in the page).
DEFAULT_MAX_FOLDS = 4

#: How much of a refused body is read to reply cleanly before the connection is dropped.
_DRAIN_LIMIT = 1024 * 1024 * 1024

#: Seconds a refused fold is told to wait (`Retry-After`).
RETRY_AFTER = 2


class FoldSlots:
    """The captures being folded now, at most `limit` (the event loop is the only caller: no lock)."""

    def __init__(self, limit: int = DEFAULT_MAX_FOLDS) -> None:
        if limit < 1:
            raise ValueError(f"max_folds must be positive, got {limit!r}")
        self.limit = limit
        self.busy = 0

    def take(self) -> bool:
        if self.busy >= self.limit:
            return False
        self.busy += 1
        return True

    def give_back(self) -> None:
        self.busy -= 1

    def refusal(self) -> Response:
        captures = "capture" if self.busy == 1 else "captures"
        response = error(503, f"streamfold is folding {self.busy} {captures} already; try again in a moment")
        response.headers["retry-after"] = str(RETRY_AFTER)
        return response


async def read_body(request: Request, max_size: int) -> bytes | Response:
    """The request body, inflated if it came with `Content-Encoding: gzip`, or the refusal.

    `max_size` holds for the bytes sent and for the inflated bytes: they are
    inflated as they arrive, never past the limit (`services._inflate`), so a
    small gzip body that would inflate to gigabytes costs no more than the limit.
    A gzip body that is cut off or broken is passed on as it was sent: the
    input readers inflate what they can of it and say so in a note.

    The rest of a refused body is read and dropped (up to `_DRAIN_LIMIT`)
    rather than left unread: a browser still uploading when the connection
    closes reports a network error instead of our message.
    """
    declared = request.headers.get("content-length", "")
    size = int(declared) if declared.isascii() and declared.isdigit() and len(declared) <= 20 else None
    encoding = request.headers.get("content-encoding", "").strip().lower()
    if encoding not in ("", "identity", "gzip", "x-gzip"):
        await drain(request)
        return error(415, f"this server reads a capture sent as it is or gzip-compressed, not with Content-Encoding "
                          f"{encoding!r}")
    inflater = Inflater("gzip", max_size) if encoding in ("gzip", "x-gzip") else None
    body = bytearray()
    received, too_large, inflates_too_large = 0, size is not None and size > max_size, False
    try:
        async for chunk in request.stream():
            received += len(chunk)
            if received > _DRAIN_LIMIT:
                break
            too_large = too_large or received > max_size
            if too_large or inflates_too_large:
                body.clear()
                inflater = None
                continue
            body += chunk
            if inflater is not None:
                try:
                    inflater.feed(chunk)  # never inflated past the limit: it says when more would come
                except zlib.error:
                    inflater = None  # broken: passed on as sent (see above)
                    continue
                inflates_too_large = inflater.over
    except ClientDisconnect:
        return error(400, "the client went away before its request's body arrived")
    if too_large:
        return too_large_response(max(received, size or 0), max_size)
    if inflates_too_large:
        return error(413, inflated_too_large(max_size))
    if inflater is not None and inflater.ended and not inflater.after_end:
        return inflater.body()
    return bytes(body)


async def drain(request: Request) -> None:
    """Read and drop the rest of the request's body (up to `_DRAIN_LIMIT`)."""
    received = 0
    try:
        async for chunk in request.stream():
            received += len(chunk)
            if received > _DRAIN_LIMIT:
                return
    except ClientDisconnect:
        return


def too_large_response(size: int, max_size: int) -> Response:
    return error(413, too_large_message(size, max_size))


def error(status: int, message: str) -> Response:
    return Response(dumps_strict({"error": message}), status_code=status,
                    media_type="application/json")
