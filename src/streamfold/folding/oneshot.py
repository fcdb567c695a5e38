"""`fold()`: a whole capture at once, in slices so a huge one keeps its memory bounded."""

from __future__ import annotations

from collections.abc import Callable

from ..framing import DEFAULT_MAX_FRAME_SIZE
from ..result import Result
from ._limits import slices
from ._request import Headers
from .folder import Folder

__all__ = ["fold"]


def fold(data: bytes | str, *, dialect: str | None = None, transport: str | None = None,
         max_frame_size: int = DEFAULT_MAX_FRAME_SIZE, progress: Callable[[int, int], None] | None = None,
         trace: bool = True, lane: str | None = None, request_headers: Headers | None = None,
         **limits: int) -> Result:
    """Fold a whole capture at once: `Folder(...).feed(data)` then `close()`.

    `progress(done, total)` is called after each slice (bytes), for a progress bar; `limits` are `Folder`'s.
    `trace=False` builds no `Trace` (`result.trace` is None): for fleets, which keep only the Result.
    `lane`: the lane to fold, of a capture that interleaves replies; `request_headers`: the request's (see
    `Folder`).
    A str (also in `Folder.feed`) is its UTF-8 bytes; a lone surrogate (`"\\ud800"`, no UTF-8 form)
    is encoded as its 3 bytes anyway (surrogatepass): `invalid-utf8` at that offset, U+FFFD in the text.
    """
    if not isinstance(data, (bytes, bytearray, memoryview, str)):
        raise TypeError(f"fold() takes bytes or str, got {type(data).__name__}")
    folder = Folder(dialect, transport=transport, max_frame_size=max_frame_size, events=False, trace=trace,
                    lane=lane, request_headers=request_headers, **limits)
    data = _immutable(data)
    # The frames refer to `data` by offsets once folded, instead of holding a copy of it.
    folder._frames.stream = data
    for done, piece in slices(data, lambda: folder._frames.records):
        folder._feed(piece)
        del piece  # a slice is a copy (up to 1 MiB): not held while the result is built
        if progress is not None:
            progress(done, len(data))
    return folder.close()


def _immutable(data: bytes | bytearray | memoryview | str) -> bytes:
    """The bytes of `data`, as an object no one can change: the trace refers to them. A bytearray
    (or a view of one) is copied once, so a caller reusing their buffer does not change the trace."""
    if isinstance(data, str):
        return data.encode("utf-8", "surrogatepass")
    if isinstance(data, memoryview) and data.readonly and type(data.obj) is bytes and data.nbytes == len(data.obj) \
            and data.c_contiguous:
        return data.obj  # a view of a whole bytes object: that object
    return data if type(data) is bytes else bytes(data)
