"""The folded reply: `Result`, its parts, and the JSON contract (`schema: 1`).

These types are pure values: a Result holds no live object of the fold, and
`Result.from_dict(result.to_dict()) == result`. Equality compares what the
JSON contract holds. The frames and the provenance of each character live in
the fold's `Trace` (`result.trace`), beside the value: not in the JSON, not
compared, not pickled, so a Result read back from JSON or unpickled has none.
`export()` works on any Result, read back or not: what the vendor's
non-streaming object needs beyond the reply travels in `native`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from .decoding import Payload, PayloadKind
from .findings import Diagnostic, StreamError
from .framing import Frame
from .trace import TEXT_FIELDS, Provenance, Trace

__all__ = ["SCHEMA", "TEXT_FIELDS", "Block", "Choice", "Lane", "Provenance", "Result", "ToolCall", "Usage",
           "register_exporter"]

SCHEMA = 1


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
                "parsed": self.parsed, "error": self.error, "key": self.key}

    @classmethod
    def from_dict(cls, value: Mapping[str, Any]) -> ToolCall:
        return cls(value["index"], value["id"], value["name"], value["arguments"], value["parsed"], value["error"],
                   value.get("key", value["index"]))

    def __repr__(self) -> str:
        return f"streamfold.ToolCall(index={self.index}, id={self.id!r}, name={self.name!r}, " \
               f"arguments={self.arguments!r}, error={self.error!r})"


@dataclass(frozen=True, slots=True)
class Block:
    """A run of one kind of output in a choice, with the first and last frame that fed it."""

    type: str
    index: int
    frames: tuple[int, int]

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "index": self.index, "frames": list(self.frames)}

    @classmethod
    def from_dict(cls, value: Mapping[str, Any]) -> Block:
        first, last = value["frames"]
        return cls(value["type"], value["index"], (first, last))

    def __repr__(self) -> str:
        return f"streamfold.Block(type={self.type!r}, index={self.index}, frames={self.frames})"


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

    @classmethod
    def from_dict(cls, value: Mapping[str, Any]) -> Choice:
        return cls(value["index"], value["role"], value["content"], value["reasoning"], value["refusal"],
                   tuple(ToolCall.from_dict(call) for call in value["tool_calls"]), value["finish_reason"],
                   value["finish_reason_raw"], tuple(Block.from_dict(block) for block in value["blocks"]))

    def __repr__(self) -> str:
        return (f"streamfold.Choice(index={self.index}, content={_short(self.content)}, "
                f"reasoning={_short(self.reasoning)}, tool_calls={len(self.tool_calls)}, "
                f"finish_reason={self.finish_reason!r})")


@dataclass(frozen=True, slots=True)
class Lane:
    """One of the replies a capture interleaves: a Responses WebSocket `stream_id`, a Realtime response, an
    agent. The fold follows one (`followed`: the dialect's default, or the one `fold(..., lane=id)` names)."""

    id: str
    #: What the lanes are in this protocol: "stream_id", "response", "turn", "agent", ...
    kind: str
    #: The first frame that named it.
    first_frame: int
    followed: bool

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "first_frame": self.first_frame, "followed": self.followed}

    @classmethod
    def from_dict(cls, value: Mapping[str, Any]) -> Lane:
        return cls(value["id"], value["kind"], value["first_frame"], value["followed"])


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

    @classmethod
    def from_dict(cls, value: Mapping[str, Any]) -> Usage:
        return cls(value["input_tokens"], value["output_tokens"], value["reasoning_tokens"],
                   value["cache_read_tokens"], value["total_tokens"], value["raw"])

    def __repr__(self) -> str:
        return (f"streamfold.Usage(input_tokens={self.input_tokens}, output_tokens={self.output_tokens}, "
                f"total_tokens={self.total_tokens})")


@dataclass(frozen=True, slots=True)
class Result:
    """Everything streamfold learned from one capture: a value, compared by what its JSON holds.

    The fold's frames and provenance are its `trace`, which is not part of the value: a pickled
    Result leaves it out (and so costs about its JSON's size), as its JSON does.
    """

    transport: str
    dialect: str
    #: A terminal frame was seen and the server sent no error.
    complete: bool
    model: str | None
    id: str | None
    #: {"total", "data", "comments", "invalid"}.
    frame_counts: Mapping[str, int]
    choices: tuple[Choice, ...]
    usage: Usage | None
    errors: tuple[StreamError, ...]
    diagnostics: tuple[Diagnostic, ...]
    #: What the dialect's `export` needs beyond the reply (JSON values), or None.
    native: Any = None
    #: The replies the capture interleaves, in order of their first frame; empty when it holds one.
    #: (`fold(..., lane=)` folds another.)
    lanes: tuple[Lane, ...] = ()
    #: The fold's frames and provenance (`streamfold.Trace`); None when the fold built none
    #: (`trace=False`) and in a Result read back from JSON or unpickled.
    trace: Trace | None = field(default=None, compare=False, repr=False)

    def __repr__(self) -> str:
        return (f"streamfold.Result(dialect={self.dialect!r}, transport={self.transport!r}, "
                f"complete={self.complete}, choices={list(self.choices)!r}, errors={len(self.errors)}, "
                f"diagnostics={len(self.diagnostics)})")

    def __reduce__(self) -> tuple[type[Result], tuple[Any, ...]]:
        # The value without its trace: a pickled Result costs about its JSON, not its input.
        return type(self), tuple(getattr(self, name) for name in _PICKLED)

    def __copy__(self) -> Result:
        return self  # a value (and a copy made through __reduce__ would lose the trace)

    def choice(self, index: int = 0) -> Choice | None:
        for choice in self.choices:
            if choice.index == index:
                return choice
        return None

    def export(self) -> dict[str, Any]:
        """The vendor-native non-streaming object the same request would have
        returned without streaming (an OpenAI `ChatCompletion`, ...).

        Raises NotImplementedError for a dialect that has no export.
        """
        exporter = _EXPORTERS.get(self.dialect)
        if exporter is None:
            raise NotImplementedError(f"export is not available for the {self.dialect} dialect")
        return exporter(self)

    # -- the trace's, read through the Result (empty, or None, without a trace) -------------

    @property
    def frames(self) -> Sequence[Frame]:
        """`Trace.frames` (empty without a trace)."""
        return self._trace.frames

    @property
    def frame_kinds(self) -> Sequence[PayloadKind]:
        """`Trace.frame_kinds` (empty without a trace)."""
        return self._trace.frame_kinds

    @property
    def sources(self) -> Mapping[tuple[int, str], Provenance]:
        """`Trace.sources` (empty without a trace)."""
        return self._trace.sources

    def payload(self, frame: int) -> Payload:
        """`Trace.payload` (IndexError without a trace)."""
        return self._trace.payload(frame)

    def frame_producing_char(self, offset: int, *, choice: int = 0, field: str = "content") -> Frame | None:
        """`Trace.frame_producing_char`: the frame that produced character `offset` of a choice's
        field ("content", "reasoning", "refusal" or "tool:K"); None without a trace."""
        return self._trace.frame_producing_char(offset, choice=choice, field=field)

    def text_runs(self, *, choice: int = 0, field: str = "content") -> list[tuple[int, int, int]]:
        """`Trace.text_runs`: (start, end, frame) character runs of a field; [] without a trace."""
        return self._trace.text_runs(choice=choice, field=field)

    @property
    def _trace(self) -> Trace:
        return _NO_TRACE if self.trace is None else self.trace

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract, version 1 (docs/json.md)."""
        out = {
            "schema": SCHEMA,
            "transport": self.transport,
            "dialect": self.dialect,
            "complete": self.complete,
            "model": self.model,
            "id": self.id,
            "frames": dict(self.frame_counts),
            "choices": [choice.to_dict() for choice in self.choices],
            "usage": None if self.usage is None else self.usage.to_dict(),
            "errors": [error.to_dict() for error in self.errors],
            "diagnostics": [diagnostic.to_dict() for diagnostic in self.diagnostics],
        }
        if self.native is not None:
            out["native"] = self.native
        if self.lanes:
            out["lanes"] = [lane.to_dict() for lane in self.lanes]
        return out

    @classmethod
    def from_dict(cls, value: Mapping[str, Any]) -> Result:
        """The Result a `to_dict()` (or `show --json`) holds. Raises ValueError for another schema."""
        if value.get("schema") != SCHEMA:
            raise ValueError(f"not a streamfold result of schema {SCHEMA}: schema {value.get('schema')!r}")
        usage = value.get("usage")
        return cls(
            transport=value["transport"], dialect=value["dialect"], complete=value["complete"],
            model=value["model"], id=value["id"], frame_counts=dict(value["frames"]),
            choices=tuple(Choice.from_dict(choice) for choice in value["choices"]),
            usage=None if usage is None else Usage.from_dict(usage),
            errors=tuple(StreamError.from_dict(error) for error in value["errors"]),
            diagnostics=tuple(Diagnostic.from_dict(diagnostic) for diagnostic in value["diagnostics"]),
            native=value.get("native"),
            lanes=tuple(Lane.from_dict(lane) for lane in value.get("lanes", ())),
        )


#: What a pickled Result holds: every field but the trace.
_PICKLED = tuple(item.name for item in fields(Result) if item.name != "trace")
_NO_TRACE = Trace(frames=(), frame_kinds=(), sources={})

#: dialect name -> its export (registered by `streamfold.dialects`, which this module does not import).
_EXPORTERS: dict[str, Callable[[Result], dict[str, Any]]] = {}


def register_exporter(dialect: str, exporter: Callable[[Result], dict[str, Any]]) -> None:
    """Make `Result.export()` of `dialect` results call `exporter`."""
    _EXPORTERS[dialect] = exporter


def _short(text: str | None, limit: int = 40) -> str:
    if text is None:
        return "None"
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")
