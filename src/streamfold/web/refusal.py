"""Why the page's operations refuse, with no HTTP in it: the sentences and the statuses the server
answers with, which a backend without a server (a Web Worker, issue 24) shows the same way.
"""

from __future__ import annotations

from .._sizes import format_size
from ..services import InputError

__all__ = ["ApiError", "TooLargeError", "inflated_too_large", "too_large_message"]


class ApiError(Exception):
    """An operation refused: `message` is a sentence the page shows, `status` the HTTP status it goes
    out with (400 a bad option, 404 nothing there, 413 too large)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class TooLargeError(InputError):
    """A capture over the page's `--max-size` as sent, once inflated, or as stored: answered 413 with
    its message, a sentence the page shows."""


def inflated_too_large(max_size: int) -> str:
    """Why a capture that inflates past `max_size` is refused, whichever way its gzip came (the request's
    Content-Encoding, or gzip bytes the input readers inflate: a raw body, a HAR's)."""
    return (f"The capture was sent gzip-compressed and inflates to more than {format_size(max_size)}; this server "
            f"accepts at most {format_size(max_size)} per request, once inflated. Start it with a larger limit, for "
            f"example: streamfold web --max-size {format_size(suggested_limit(max_size, max_size), compact=True)}")


def too_large_message(size: int, max_size: int) -> str:
    return (f"The capture is {format_size(size)}; this server accepts at most {format_size(max_size)} "
            f"per request. Start it with a larger limit, for example: "
            f"streamfold web --max-size {format_size(suggested_limit(size, max_size), compact=True)}")


def suggested_limit(size: int, max_size: int) -> int:
    suggestion = 1024 * 1024
    while suggestion < max(size + 1, 2 * max_size):
        suggestion *= 2
    return suggestion
