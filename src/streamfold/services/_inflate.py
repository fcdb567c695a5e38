"""Inflating a compressed body (gzip, zlib or raw deflate, and brotli when the `brotli` package,
1.2 or later, is installed) to at most a limit: the one way every reader does it (the input
readers' gzip body, a cassette's recorded body, a stored exchange sent with Content-Encoding, the
recorders' summaries).

A few kilobytes of gzip can inflate to gigabytes, so the output is bounded where it is produced:
inflated a step at a time (`decompressobj` with `max_length`) into one buffer that grows in place,
never past `limit` bytes, and never held twice (no list of pieces joined at the end). What fits is
kept; when more would come, `over` is set and `limit_note` says where the body was cut, as an
`inflated-too-large` finding at that byte. A caller that must refuse instead (a server's request
limit) raises `InflatedTooLargeError`.
"""

from __future__ import annotations

import importlib
import io
import zlib
from typing import Any

from .._sizes import format_size
from ..findings import Severity
from .capture import InputError, Note

__all__ = ["ENCODINGS", "MAX_INFLATED", "InflatedTooLargeError", "Inflater", "can_inflate"]

#: A compressed body is inflated to at most this many bytes by default (`--max-inflated`; a zip bomb
#: would eat the machine): far more than any real stream, far less than a bomb's gigabytes.
MAX_INFLATED = 256 * 1024 * 1024
#: The Content-Encodings always inflated; brotli ("br") too when `can_inflate` says so.
ENCODINGS = ("gzip", "x-gzip", "deflate")
#: Bytes inflated per step: what is held outside the buffer at any moment.
_STEP = 1024 * 1024


def _brotli() -> Any:
    """The `brotli` module when it can inflate to a limit (1.2 added `output_buffer_limit`), else None.
    An optional dependency, imported only when a brotli body comes."""
    try:
        module = importlib.import_module("brotli")
    except ImportError:
        return None
    return module if hasattr(module.Decompressor(), "can_accept_more_data") else None


def can_inflate(encoding: str) -> bool:
    """Whether a body sent with this Content-Encoding can be inflated here."""
    return encoding in ENCODINGS or (encoding == "br" and _brotli() is not None)


class InflatedTooLargeError(InputError):
    """The body inflates past the limit and the caller asked to refuse it rather than cut it."""

    def __init__(self, message: str, limit: int) -> None:
        super().__init__(message)
        self.limit = limit


class Inflater:
    """Inflates one body fed piece by piece, to at most `limit` bytes. `encoding`: gzip (or x-gzip) or
    deflate, whose zlib wrapper is told from its first two bytes (servers send raw deflate too), or br
    (when `can_inflate("br")`). Raises `zlib.error` from `feed` when the bytes do not inflate (a brotli
    error too, so callers catch one error)."""

    def __init__(self, encoding: str, limit: int, head: bytes = b"") -> None:
        if limit < 1:
            raise ValueError(f"the inflate limit must be positive, got {limit!r}")
        zlib_header = len(head) >= 2 and head[0] & 0x0F == 8 and (head[0] * 256 + head[1]) % 31 == 0
        wbits = 16 + zlib.MAX_WBITS if encoding != "deflate" else zlib.MAX_WBITS if zlib_header else -zlib.MAX_WBITS
        self.encoding = "gzip" if encoding == "x-gzip" else encoding
        self.limit = limit
        self._inflater = zlib.decompressobj(wbits)
        self._brotli = _brotli().Decompressor() if encoding == "br" else None
        self._out = io.BytesIO()
        #: Bytes inflated so far (at most `limit`).
        self.size = 0
        #: Compressed bytes fed so far, and how many of them were inflated when the limit was hit.
        self.fed = 0
        self.read_when_over: int | None = None
        #: Bytes fed after the compressed stream's end (not inflated).
        self.after_end = 0

    @property
    def over(self) -> bool:
        """Whether the body inflates past the limit (what fits is kept; the rest is not inflated)."""
        return self.read_when_over is not None

    @property
    def ended(self) -> bool:
        """Whether the compressed stream's end came (a cut-off body never gets there)."""
        return bool(self._brotli.is_finished()) if self._brotli is not None else self._inflater.eof

    def feed(self, piece: bytes) -> None:
        self.fed += len(piece)
        if self._brotli is not None:
            self._feed_brotli(piece)
            return
        if self._inflater.eof:
            self.after_end += len(piece)
            return
        data = piece
        while not self.over:
            room = self.limit - self.size
            if room == 0:
                # At the limit: one more byte (from input left, or output zlib holds back) says there is more.
                if self._inflater.decompress(data, 1):
                    self.read_when_over = self.fed - len(self._inflater.unconsumed_tail)
                break
            asked = min(room, _STEP)
            part = self._inflater.decompress(data, asked)
            self._out.write(part)
            self.size += len(part)
            data = self._inflater.unconsumed_tail
            if len(part) < asked or self._inflater.eof:
                break  # every byte of the piece taken and inflated
        if self._inflater.eof:
            self.after_end += len(self._inflater.unused_data)

    def _feed_brotli(self, piece: bytes) -> None:
        """As `feed`, for brotli: its decoder gives at most about `_STEP` bytes a call, and is then asked
        for the rest with no input until it can take more (brotli 1.2's bounded output)."""
        decoder: Any = self._brotli
        data = piece
        if self.ended or self.over:
            self.after_end += len(piece) if self.ended else 0
            return
        try:
            while True:
                if not decoder.can_accept_more_data():
                    part = decoder.process(b"", output_buffer_limit=_STEP)
                elif data:
                    part, data = decoder.process(data, output_buffer_limit=_STEP), b""
                else:
                    break
                room = self.limit - self.size
                self._out.write(part[:room])
                self.size += min(room, len(part))
                if len(part) > room:
                    self.read_when_over = self.fed
                    break
                if not part and decoder.can_accept_more_data() and not data:
                    break
        except Exception as exc:  # brotli.error: the bytes are not brotli
            raise zlib.error(f"brotli: {exc}") from None

    def body(self) -> bytes:
        """What was inflated (its buffer is handed over, not copied: call once, at the end)."""
        return self._out.getvalue()

    def note(self, *, what: str = "the body") -> Note:
        """The `gzip-body` note: how the body was sent and what inflating it gave."""
        cut = "" if self.ended or self.over else "; it was cut off before its end: only the part that arrived"
        after = f"; {self.after_end:,} bytes after its end were left out" if self.after_end else ""
        return Note("gzip-body", f"{what} was {self.encoding}-compressed ({self.fed:,} bytes) and was inflated to "
                                 f"{self.size:,} bytes{cut}{after}", Severity.WARNING)

    def limit_note(self, *, option: str = "--max-inflated") -> Note:
        """The `inflated-too-large` finding, at the byte where the body was cut."""
        return Note("inflated-too-large", f"the body was {self.encoding}-compressed and inflates to more than "
                                          f"{format_size(self.limit)} ({self.limit:,} bytes), the most streamfold "
                                          f"inflates ({option} raises it): the first {self.limit:,} bytes, inflated "
                                          f"from {self.read_when_over or 0:,} of the {self.fed:,} compressed bytes, "
                                          "are folded; the rest was dropped", Severity.ERROR, offset=self.size)

    def refusal(self) -> InflatedTooLargeError:
        return InflatedTooLargeError(f"the capture was sent {self.encoding}-compressed and inflates to more than "
                                     f"{format_size(self.limit)}", self.limit)
