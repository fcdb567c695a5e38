"""What `Folder.feed()` returns: the changes a chunk made, in stream order.

Small frozen values; each names the frame that caused it, so a live view can
print text as it arrives and point at its source.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal

from .findings import Diagnostic, StreamError

__all__ = ["Event", "Finding", "FinishReason", "TextDelta", "ToolCallDelta", "ToolCallDone", "UsageUpdate"]


def _repr(value: object) -> str:
    shown = ", ".join(f"{field.name}={getattr(value, field.name)!r}" for field in fields(value))  # type: ignore[arg-type]
    return f"streamfold.{type(value).__name__}({shown})"


@dataclass(frozen=True, slots=True, repr=False)
class TextDelta:
    """Text appended to a choice's `content`, `reasoning` or `refusal`."""

    frame: int
    choice: int
    field: Literal["content", "reasoning", "refusal"]
    text: str

    __repr__ = _repr


@dataclass(frozen=True, slots=True, repr=False)
class ToolCallDelta:
    """A fragment of a tool call: its name when first known, argument text appended."""

    frame: int
    choice: int
    tool_call: int
    name: str | None
    arguments: str

    __repr__ = _repr


@dataclass(frozen=True, slots=True, repr=False)
class ToolCallDone:
    """A tool call's arguments were parsed (its block closed or the choice finished)."""

    frame: int
    choice: int
    tool_call: int
    name: str | None
    arguments: Any
    error: str | None

    __repr__ = _repr


@dataclass(frozen=True, slots=True, repr=False)
class FinishReason:
    frame: int
    choice: int
    raw: str

    __repr__ = _repr


@dataclass(frozen=True, slots=True, repr=False)
class UsageUpdate:
    frame: int
    raw: Any

    __repr__ = _repr


@dataclass(frozen=True, slots=True, repr=False)
class Finding:
    """An error or diagnostic found while folding this chunk."""

    frame: int | None
    finding: StreamError | Diagnostic

    __repr__ = _repr


Event = TextDelta | ToolCallDelta | ToolCallDone | FinishReason | UsageUpdate | Finding
