"""The trace of a fold: its frames, each frame's payload kind, their raw bytes, and which frame
produced each character of the reply (provenance).

A `Result` is the small value (the JSON contract); the `Trace` is what a debugger reads beside it
(`result.trace`): the page's frame list, `blame`, `diff`. It is built by `fold(data)` and `Folder`
unless told not to (`trace=False`, for fleets), and it is not part of the Result's value: not
compared, not in its JSON, not pickled. Its frames refer to the bytes the fold was given by
offsets, so holding a trace costs little beyond the caller's own buffer.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, overload

from .decoding import Payload, PayloadKind, decode_frame
from .framing import Frame

if TYPE_CHECKING:
    from .merge import ChoiceField

__all__ = ["KIND_CODES", "TEXT_FIELDS", "FrameKinds", "Provenance", "Trace"]

TEXT_FIELDS: tuple[ChoiceField, ...] = ("content", "reasoning", "refusal")
#: The payload kinds by their code in `FrameKinds` (JSON, the kind of most frames, is 0).
_KINDS: tuple[PayloadKind, ...] = tuple(PayloadKind)
KIND_CODES: Mapping[PayloadKind, int] = {kind: code for code, kind in enumerate(_KINDS)}


class FrameKinds(Sequence[PayloadKind]):
    """The payload kind of each frame, one byte a frame (a list of kinds cost 8 bytes a frame, and
    a tuple of it as many again, at the peak of a fold of a million frames)."""

    __slots__ = ("_codes",)

    def __init__(self, codes: bytes | bytearray) -> None:
        self._codes = codes

    def __len__(self) -> int:
        return len(self._codes)

    @overload
    def __getitem__(self, index: int) -> PayloadKind: ...
    @overload
    def __getitem__(self, index: slice) -> list[PayloadKind]: ...
    def __getitem__(self, index: int | slice) -> PayloadKind | list[PayloadKind]:
        if isinstance(index, slice):
            return [_KINDS[code] for code in self._codes[index]]
        return _KINDS[self._codes[index]]

    def __iter__(self) -> Iterator[PayloadKind]:
        return map(_KINDS.__getitem__, self._codes)

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, Sequence):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<FrameKinds of {len(self)} frames>"


class Provenance(Protocol):
    """Which frame produced each character of a text (the merger's APPEND buffers are one):
    the frame of each piece and where each piece ends in the text."""

    @property
    def frames(self) -> Sequence[int]: ...
    @property
    def ends(self) -> Sequence[int]: ...
    def frame_at(self, offset: int) -> int | None: ...


@dataclass(frozen=True, slots=True, eq=False)
class Trace:
    """The frames of one fold and the provenance of its reply's text."""

    #: The frames of the stream, made from the fold's records when read.
    frames: Sequence[Frame]
    #: The payload kind of each frame, by frame index.
    frame_kinds: Sequence[PayloadKind]
    #: (choice, "content" | "reasoning" | "refusal" | "tool:KEY") -> the provenance of that text.
    sources: Mapping[tuple[int, str], Provenance]
    #: choice index -> the dialect's key of each of its tool calls, by position (`ToolCall.key`).
    tool_keys: Mapping[int, tuple[int, ...]] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"streamfold.Trace(frames={len(self.frames)}, sources={len(self.sources)})"

    def payload(self, frame: int) -> Payload:
        """Decode one frame again (payloads are not kept, to keep memory small)."""
        return decode_frame(self.frames[frame])

    def raw(self, frame: int) -> bytes:
        """The bytes of one frame, as they came."""
        return self.frames[frame].raw

    def provenance(self, *, choice: int = 0, field: str = "content") -> Provenance | None:
        """The provenance of a choice's field ("content", "reasoning", "refusal", or "tool:K": the
        arguments of the choice's tool call at position K); None when it has none."""
        if field.startswith("tool:"):
            keys = self.tool_keys.get(choice, ())
            position = int(field[5:])
            if not 0 <= position < len(keys):
                return None
            return self.sources.get((choice, f"tool:{keys[position]}"))
        if field not in TEXT_FIELDS:
            raise ValueError(f"field must be content, reasoning, refusal or tool:K, got {field!r}")
        return self.sources.get((choice, field))

    def frame_producing_char(self, offset: int, *, choice: int = 0, field: str = "content") -> Frame | None:
        """The frame that produced character `offset` of a choice's field (see `provenance`);
        None when out of range."""
        buffer = self.provenance(choice=choice, field=field)
        frame = None if buffer is None else buffer.frame_at(offset)
        return None if frame is None or frame >= len(self.frames) else self.frames[frame]

    def text_runs(self, *, choice: int = 0, field: str = "content") -> list[tuple[int, int, int]]:
        """Provenance of a whole field: (start, end, frame) character runs, one per run of one frame."""
        buffer = self.provenance(choice=choice, field=field)
        runs: list[tuple[int, int, int]] = []
        if buffer is None:
            return runs
        start = 0
        for end, frame in zip(buffer.ends, buffer.frames):
            if runs and runs[-1][2] == frame:
                runs[-1] = (runs[-1][0], end, frame)
            elif end > start:
                runs.append((start, end, frame))
            start = end
        return runs
