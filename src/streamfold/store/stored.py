"""One stored exchange as a `Capture`: the body, its reads with their arrival
times, the HTTP status and headers, and notes on how it ended, as every front
folds it (the summary fold at the end of a recording, `show db#N`, the page)."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

from ..findings import Severity
from ..services._inflate import MAX_INFLATED, Inflater, can_inflate
from ..services.capture import Capture, Note

__all__ = ["MAX_INFLATED", "stored_capture"]


def stored_capture(exchange_id: int, chunks: Sequence[bytes], reads: Sequence[tuple[int, float]], *,
                   status: int | None, response_headers: Sequence[tuple[str, str]],
                   request_headers: Sequence[tuple[str, str]], url: str, method: str, outcome: str | None,
                   error: str | None, max_inflated: int = MAX_INFLATED) -> Capture:
    """The `Capture` every front folds: arrival times in seconds from the request's start (0.0). A body
    sent gzip- or deflate-compressed is inflated read by read, so each read's offset is exact, to at
    most `max_inflated` bytes (an `inflated-too-large` finding says where it was cut)."""
    encoding = next((value.strip().lower() for name, value in reversed(response_headers)
                     if name.lower() == "content-encoding"), "identity")
    body, reads, decoded = _decode(chunks, reads, encoding, max_inflated)
    ended = {None: "it is still in flight (not ended yet)", "complete": None,
             "client-cut": "the client closed the connection before the reply ended",
             "upstream-cut": "the upstream closed the connection before the reply ended",
             "failed": f"the exchange failed: {error or 'no reason recorded'}"}.get(outcome, f"it ended {outcome!r}")
    notes = [Note("input-store", f"stored capture {exchange_id}: {method} {url}, {len(reads)} read(s) with their "
                                 "arrival times")]
    notes.extend(decoded)
    if ended is not None:
        notes.append(Note("store-unfinished", f"stored capture {exchange_id}: {ended}", Severity.WARNING))
    return Capture(body, "store", tuple(reads) or None, status, tuple(response_headers), tuple(request_headers),
                   url, tuple(notes), 0.0 if reads else None)


def _decode(chunks: Sequence[bytes], reads: Sequence[tuple[int, float]], encoding: str,
            max_inflated: int) -> tuple[bytes, Sequence[tuple[int, float]], list[Note]]:
    if encoding in ("identity", "", "none"):
        return b"".join(chunks), reads, []
    if not can_inflate(encoding):
        return b"".join(chunks), reads, [Note("gzip-body", f"the body was sent with Content-Encoding {encoding!r}, "
                                                           "which streamfold cannot decode: it is folded as received",
                                              Severity.WARNING)]
    inflater = Inflater(encoding, max_inflated, b"".join(chunks[:2])[:2])
    offsets: list[tuple[int, float]] = []
    try:
        for chunk, (_, seconds) in zip(chunks, reads, strict=True):
            if inflater.over:
                break  # the reads past the limit are dropped with their bytes
            offsets.append((inflater.size, seconds))
            inflater.feed(chunk)
    except zlib.error as exc:
        return b"".join(chunks), reads, [Note("gzip-body", f"the body was sent with Content-Encoding {encoding!r} "
                                                           f"but does not decompress ({exc}): it is folded as "
                                                           "received", Severity.WARNING)]
    notes = [inflater.note(what="the body, read by read,")]
    if inflater.over:
        notes.append(inflater.limit_note())
    return inflater.body(), offsets, notes
