"""What the replay server (`streamfold serve`) asks of a vendor to break its streams the way
that vendor's servers and gateways do: its in-stream error shape, its HTTP error body, how its
stream says it is over, and how its tool-call argument fragments look.

A dialect opts in by giving its spec a `ReplayQuirks` (`DialectSpec.replay`); each hook left as it is here
says "not available" (None), and the server then refuses the fault with a sentence. The hooks see
and return decoded JSON payloads (plus the SSE `event:` name), never bytes: framing the result is
the replay package's job, so these stay vendor knowledge only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["DROP", "ArgumentsRewriter", "ErrorFrame", "ReplayQuirks", "Rewrite", "accumulate", "cumulative_field"]


@dataclass(frozen=True, slots=True)
class ErrorFrame:
    """One frame of the vendor's in-stream error: its SSE `event:` name (None: no event line) and payload;
    or, for a line format that is not JSON (the Vercel data stream's `3:"..."`), the frame's `text` as sent."""

    event: str | None
    payload: Any
    text: str | None = None


@dataclass(frozen=True, slots=True)
class Rewrite:
    """A frame's payload replaced (its `event:` name kept)."""

    payload: Any


#: A frame left out altogether.
DROP = "drop"

#: A fresh, stateful rewriter for one stream: given each frame's (event, payload), the payload with
#: its argument fragment replaced by everything sent so far for that call, or None when unchanged. A str
#: returned is the frame's new data text as it is (a line format's `c:{...}`, which is no JSON value).
ArgumentsRewriter = Callable[[str | None, Any], Any]


class ReplayQuirks:
    """The base: every hook unavailable. Subclasses override those their vendor has."""

    #: Why `cumulative-args` cannot apply, when this vendor sends no argument fragments.
    no_fragments: str | None = None
    #: Why `no-terminal` cannot apply, when this vendor's streams have no end sign to drop.
    no_end_sign: str | None = None

    def error_frame(self, previous: Any) -> ErrorFrame | None:
        """The vendor's in-stream error, sent where the stream breaks off (`previous`: the payload of
        the frame before it, or None), or None when not available."""
        return None

    def http_error(self, status: int) -> Any:
        """The vendor's JSON error body for an HTTP `status` (4xx/5xx), or None when not available."""
        return None

    def end_of_stream(self, event: str | None, data: str | None, payload: Any) -> Rewrite | str | None:
        """For `no-terminal`: `DROP` for a frame that says the stream is over, a `Rewrite` of a frame
        that says it along with more (its end sign taken out), or None to keep the frame. `data` is
        the frame's data text (`[DONE]` is no JSON)."""
        return None

    @property
    def has_end_of_stream(self) -> bool:
        """Whether `end_of_stream` is this vendor's (the base keeps every frame)."""
        return type(self).end_of_stream is not ReplayQuirks.end_of_stream

    def cumulative_arguments(self) -> ArgumentsRewriter | None:
        """A fresh rewriter for `cumulative-args`, or None when not available."""
        return None


def accumulate(sent: dict[Any, str], key: Any, fragment: object) -> str | None:
    """Everything sent for `key` so far with `fragment` appended (None when `fragment` is no string)."""
    if type(fragment) is not str:
        return None
    sent[key] = sent.get(key, "") + fragment
    return sent[key]


def cumulative_field(sent: dict[Any, str], payload: dict[str, Any], key: Any, field: str) -> dict[str, Any] | None:
    """`payload` with its `field` fragment replaced by everything sent for `key` so far (a shallow copy), or
    None when that changes nothing (the first fragment, or a field that is no string)."""
    joined = accumulate(sent, key, payload.get(field))
    if joined is None or joined == payload[field]:
        return None
    return {**payload, field: joined}
