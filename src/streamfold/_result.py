"""The folded reply: `Result`, its parts, and the JSON contract (`schema: 1`).

Built once, at `close()`, from the merger's canonical paths; a dialect never
shapes the result, it only normalises its own vocabulary (finish reasons,
usage fields).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ._decode import Payload, PayloadKind, decode_frame
from ._frames import INDEX, Frame, FrameRecord, FrameSequence
from ._merge import Merger, TextBuffer
from ._report import Diagnostic, StreamError
from .dialects import Dialect

__all__ = ["Block", "Choice", "Result", "ToolCall", "Usage", "build_result"]

SCHEMA = 1
TEXT_FIELDS = ("content", "reasoning", "refusal")
_BLOCK_TYPES = {"content": "text", "reasoning": "reasoning", "refusal": "refusal"}


@dataclass(frozen=True, slots=True)
class ToolCall:
    index: int
    id: str | None
    name: str | None
    #: The raw join of every argument fragment, exactly as streamed.
    arguments: str
    #: The parsed (or recovered) arguments; None when `error` is set.
    parsed: Any
    #: The parser's message and the position in `arguments`, when nothing parsed.
    error: str | None
    #: The dialect's key for this call in the stream (OpenAI `index`, block index, ...).
    key: int

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "id": self.id, "name": self.name, "arguments": self.arguments,
                "parsed": self.parsed, "error": self.error}


@dataclass(frozen=True, slots=True)
class Block:
    """A run of one kind of output in a choice, with the first and last frame that fed it."""

    type: str
    index: int
    frames: tuple[int, int]

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "index": self.index, "frames": list(self.frames)}


@dataclass(frozen=True, slots=True)
class Choice:
    index: int
    role: str | None
    content: str
    reasoning: str | None
    refusal: str | None
    tool_calls: tuple[ToolCall, ...]
    finish_reason: str | None
    finish_reason_raw: str | None
    blocks: tuple[Block, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index, "role": self.role, "content": self.content, "reasoning": self.reasoning,
            "refusal": self.refusal, "tool_calls": [call.to_dict() for call in self.tool_calls],
            "finish_reason": self.finish_reason, "finish_reason_raw": self.finish_reason_raw,
            "blocks": [block.to_dict() for block in self.blocks],
        }


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int | None
    output_tokens: int | None
    reasoning_tokens: int | None
    cache_read_tokens: int | None
    total_tokens: int | None
    #: The vendor's own usage object, as last sent.
    raw: Any

    def to_dict(self) -> dict[str, Any]:
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "reasoning_tokens": self.reasoning_tokens, "cache_read_tokens": self.cache_read_tokens,
                "total_tokens": self.total_tokens, "raw": self.raw}


@dataclass(frozen=True, slots=True, eq=False)
class Result:
    """Everything streamfold learned from one capture."""

    transport: str
    dialect: str
    #: A terminal frame was seen and the server sent no error.
    complete: bool
    model: str | None
    id: str | None
    frames: FrameSequence
    #: The payload kind of each frame, by frame index.
    frame_kinds: tuple[PayloadKind, ...]
    choices: tuple[Choice, ...]
    usage: Usage | None
    errors: tuple[StreamError, ...]
    diagnostics: tuple[Diagnostic, ...]
    _sources: dict[tuple[int, str], TextBuffer] = field(repr=False, default_factory=dict)
    _dialect: Dialect | None = field(repr=False, default=None)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Result):
            return NotImplemented
        return self.frames == other.frames and self.to_dict() == other.to_dict()

    @property
    def frame_counts(self) -> dict[str, int]:
        kinds = self.frame_kinds
        comments = kinds.count(PayloadKind.COMMENT)
        return {"total": len(kinds), "data": len(kinds) - comments, "comments": comments,
                "invalid": kinds.count(PayloadKind.INVALID)}

    def choice(self, index: int = 0) -> Choice | None:
        for choice in self.choices:
            if choice.index == index:
                return choice
        return None

    def payload(self, frame: int) -> Payload:
        """Decode one frame again (payloads are not kept, to keep memory small)."""
        return decode_frame(self.frames[frame])

    def frame_producing_char(self, offset: int, *, choice: int = 0, field: str = "content") -> Frame | None:
        """The frame that produced character `offset` of a choice's field.

        `field` is "content", "reasoning", "refusal" or "tool:K" (the arguments
        of the choice's tool call at position K). None when out of range.
        """
        buffer = self._buffer(choice, field)
        frame = None if buffer is None else buffer.frame_at(offset)
        return None if frame is None else self.frames[frame]

    def export(self) -> dict[str, Any]:
        """The vendor-native non-streaming object the same request would have
        returned without streaming (an OpenAI `ChatCompletion`, ...).

        Raises NotImplementedError for a dialect that has no export yet.
        """
        if self._dialect is None:
            raise NotImplementedError("this result has no dialect to export with")
        return self._dialect.export(self)

    def text_runs(self, *, choice: int = 0, field: str = "content") -> list[tuple[int, int, int]]:
        """Provenance of a whole field: (start, end, frame) character runs, one per run of one frame."""
        buffer = self._buffer(choice, field)
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

    def _buffer(self, choice: int, field: str) -> TextBuffer | None:
        if field.startswith("tool:"):
            found = self.choice(choice)
            position = int(field[5:])
            if found is None or not 0 <= position < len(found.tool_calls):
                return None
            return self._sources.get((choice, f"tool:{found.tool_calls[position].key}"))
        if field not in TEXT_FIELDS:
            raise ValueError(f"field must be content, reasoning, refusal or tool:K, got {field!r}")
        return self._sources.get((choice, field))

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract, version 1 (see README)."""
        return {
            "schema": SCHEMA,
            "transport": self.transport,
            "dialect": self.dialect,
            "complete": self.complete,
            "model": self.model,
            "id": self.id,
            "frames": self.frame_counts,
            "choices": [choice.to_dict() for choice in self.choices],
            "usage": None if self.usage is None else self.usage.to_dict(),
            "errors": [error.to_dict() for error in self.errors],
            "diagnostics": [diagnostic.to_dict() for diagnostic in self.diagnostics],
        }


def build_result(transport: str, dialect: Dialect, merger: Merger, frames: Sequence[FrameRecord],
                 kinds: list[PayloadKind], errors: list[StreamError], diagnostics: list[Diagnostic]) -> Result:
    choice_indexes: set[int] = set()
    tool_keys: dict[int, set[int]] = {}
    block_keys: dict[int, set[int]] = {}
    for path in (*merger.texts, *merger.values):
        if type(path[0]) is int:
            choice_indexes.add(path[0])
            if len(path) == 4 and path[1] == "tool":
                tool_keys.setdefault(path[0], set()).add(path[2])
            elif len(path) == 3 and path[1] == "block":
                block_keys.setdefault(path[0], set()).add(path[2])
    sources: dict[tuple[int, str], TextBuffer] = {}
    choices = []
    for index in sorted(choice_indexes):
        calls = []
        blocks = []
        for name in TEXT_FIELDS:
            buffer = merger.texts.get((index, name))
            if buffer is not None and buffer.length:
                sources[(index, name)] = buffer
                blocks.append(Block(_BLOCK_TYPES[name], 0, (buffer.first_frame, buffer.last_frame)))
        for position, key in enumerate(sorted(tool_keys.get(index, ()))):
            path = (index, "tool", key)
            arguments_path = (*path, "arguments")
            parsed = merger.parse(arguments_path, frames[-1][INDEX] if frames else 0)
            buffer = merger.texts[arguments_path]
            sources[(index, f"tool:{key}")] = buffer
            error = None
            if parsed.error is not None:
                error = f"{parsed.error}: character {parsed.position}"
            calls.append(ToolCall(position, merger.get((*path, "id")), merger.get((*path, "name")),
                                  buffer.text(), None if error else parsed.value, error, key))
            spans = [span for part in ("id", "name", "arguments") if (span := merger.frames_of((*path, part)))]
            if spans:
                blocks.append(Block("tool_call", position, (min(s[0] for s in spans), max(s[1] for s in spans))))
        raw_finish = merger.get((index, "finish_reason"))
        if merger.get((index, "error")) is not None:
            finish = "error"
        elif raw_finish is not None:
            finish = dialect.normalise_finish(raw_finish, bool(calls))
        else:
            finish = None
        if index in block_keys:
            # The dialect named its blocks (Anthropic content blocks, ...): use them.
            blocks = [_explicit_block(merger, (index, "block", key)) for key in sorted(block_keys[index])]
        else:
            blocks.sort(key=lambda block: (block.frames[0], block.type != "reasoning"))
        reasoning, refusal = merger.text((index, "reasoning")), merger.text((index, "refusal"))
        choices.append(Choice(
            index, merger.get((index, "role")), merger.text((index, "content")) or "",
            reasoning or None, refusal or None, tuple(calls), finish, raw_finish, tuple(blocks)))
    raw_usage = merger.get(("usage",))
    usage = None
    normalised = dialect.normalise_usage(raw_usage) if raw_usage is not None else None
    if normalised is not None:
        usage = Usage(raw=raw_usage, **normalised)
    return Result(
        transport=transport,
        dialect=dialect.name,
        complete=dialect.ended and not dialect.failed,
        model=merger.get(("model",)),
        id=merger.get(("id",)),
        frames=FrameSequence(frames),
        frame_kinds=tuple(kinds),
        choices=tuple(choices),
        usage=usage,
        errors=tuple(errors),
        diagnostics=tuple(diagnostics),
        _sources=sources,
        _dialect=dialect,
    )


def _explicit_block(merger: Merger, path: tuple[int, str, int]) -> Block:
    """A block a dialect recorded at (choice, "block", key) as {"type": ..., "index": ...}."""
    value = merger.get(path)
    frames = merger.frames_of(path)
    assert frames is not None
    return Block(str(value.get("type", "?")), int(value.get("index", path[2])), frames)
