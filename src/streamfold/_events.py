"""What `Folder.feed()` returns: the changes a chunk made, in stream order.

Small frozen values; each names the frame that caused it, so a live view can
print text as it arrives and point at its source.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Union

from ._report import Diagnostic, StreamError

__all__ = ["Event", "FinishReason", "Finding", "TextDelta", "ToolCallDelta", "ToolCallDone", "UsageUpdate"]


@dataclass(frozen=True, slots=True)
class TextDelta:
    """Text appended to a choice's `content`, `reasoning` or `refusal`."""

    frame: int
    choice: int
    field: Literal["content", "reasoning", "refusal"]
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A fragment of a tool call: its name when first known, argument text appended."""

    frame: int
    choice: int
    tool_call: int
    name: str | None
    arguments: str


@dataclass(frozen=True, slots=True)
class ToolCallDone:
    """A tool call's arguments were parsed (its block closed or the choice finished)."""

    frame: int
    choice: int
    tool_call: int
    name: str | None
    arguments: Any
    error: str | None


@dataclass(frozen=True, slots=True)
class FinishReason:
    frame: int
    choice: int
    raw: str


@dataclass(frozen=True, slots=True)
class UsageUpdate:
    frame: int
    raw: Any


@dataclass(frozen=True, slots=True)
class Finding:
    """An error or diagnostic found while folding this chunk."""

    frame: int | None
    finding: Union[StreamError, Diagnostic]


Event = Union[TextDelta, ToolCallDelta, ToolCallDone, FinishReason, UsageUpdate, Finding]
