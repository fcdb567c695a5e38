"""The Result of a fold, built once at the end from the merger and the dialect."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from itertools import chain
from typing import Any

from ..dialects import Dialect
from ..findings import Diagnostic, StreamError
from ..framing._records import FrameSequence, FrameStore
from ..merge import BlockPath, Merger, Path, TextBuffer, ToolCallPath, ToolField, ToolPath
from ..result import Block, Choice, Lane, Result, ToolCall, Usage
from ..trace import TEXT_FIELDS, FrameKinds, Provenance, Trace

__all__ = ["build_result"]

_BLOCK_TYPES = {"content": "text", "reasoning": "reasoning", "refusal": "refusal"}


def build_result(transport: str, dialect: Dialect, merger: Merger, frames: FrameStore,
                 kinds: tuple[bytearray, int, int], errors: list[StreamError],
                 diagnostics: list[Diagnostic], lanes: tuple[Lane, ...] = (), *, trace: bool = True) -> Result:
    """The Result of a stream: the merger's canonical paths read once, the dialect's vocabulary
    normalised, its `native` snapshot taken (by the vendor's dialect a carrier found). `kinds`:
    each frame's, and how many are comments and invalid. With `trace`, its `Trace` over the
    frame store and the merger's text buffers."""
    carrier, dialect = dialect, dialect.reported
    choice_indexes: set[int] = set()
    # Keys as dicts, not sets, and the paths chained, not copied: a set of n keys takes 4-8n slots
    # of 16 bytes, a cost per tool call at the fold's peak (~200 bytes a call with the blocks').
    tool_keys: dict[int, dict[int, None]] = {}
    block_keys: dict[int, dict[int, None]] = {}
    for path in chain(merger.texts, merger.values):
        if type(path[0]) is int:
            choice_indexes.add(path[0])
            if len(path) == 4 and path[1] == "tool":
                tool_keys.setdefault(path[0], {})[path[2]] = None
            elif len(path) == 3 and path[1] == "block":
                block_keys.setdefault(path[0], {})[path[2]] = None
    # The native snapshot first: some read the merger's tool calls, which the loop below lets go.
    native = dialect.native()
    choices = []
    for index in sorted(choice_indexes):
        calls = []
        blocks = []
        for name in TEXT_FIELDS:
            buffer = merger.texts.get((index, name))
            if buffer is not None and buffer.length:
                blocks.append(Block(_BLOCK_TYPES[name], 0, (buffer.first_frame, buffer.last_frame)))
        for position, key in enumerate(sorted(tool_keys.get(index, ()))):
            call: ToolCallPath = (index, "tool", key)
            arguments_path: ToolPath = (*call, "arguments")
            parsed = merger.parse(arguments_path, max(len(frames) - 1, 0))
            buffer = merger.texts[arguments_path]
            error = None
            if parsed.error is not None:
                error = f"{parsed.error}: character {parsed.position}"
            calls.append(ToolCall(position, merger.get((*call, "id")), merger.get((*call, "name")),
                                  buffer.text(), None if error else parsed.value, error, key))
            fields: tuple[ToolField, ...] = ("id", "name", "arguments")
            spans = [span for part in fields if (span := merger.frames_of((*call, part)))]
            if spans:
                blocks.append(Block("tool_call", position, (min(s[0] for s in spans), max(s[1] for s in spans))))
            # The call is read: what only the fold needed goes now, not with the Result (the id, the
            # name and the parse cost ~200 bytes a call, held beside the Result's own at the peak).
            merger.values.pop((*call, "id"), None)
            merger.values.pop((*call, "name"), None)
            buffer.parsed = None
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
        usage = Usage(raw=raw_usage, **_counts_only(dialect, normalised, merger.frames_of(("usage",))))
    return Result(
        transport=transport,
        dialect=dialect.name,
        complete=carrier.ended and not carrier.failed,
        model=merger.get(("model",)),
        id=merger.get(("id",)),
        frame_counts=_counts(*kinds),
        native=native,
        choices=tuple(choices),
        usage=usage,
        errors=tuple(errors),
        diagnostics=tuple(diagnostics),
        lanes=lanes,
        trace=Trace(FrameSequence(frames), FrameKinds(bytes(kinds[0])), _Sources(merger.texts), _tool_keys(choices))
        if trace else None,
    )


def _tool_keys(choices: list[Choice]) -> dict[int, tuple[int, ...]]:
    return {choice.index: tuple(call.key for call in choice.tool_calls) for choice in choices if choice.tool_calls}


class _Sources(Mapping[tuple[int, str], Provenance]):
    """`Trace.sources` read from the merger's buffers when asked: (choice, "content" | "reasoning" |
    "refusal") for a text that is not empty, (choice, "tool:KEY") for each tool call. (A dict of its
    own cost ~140 bytes a tool call, beside everything the fold holds, at the fold's peak.)"""

    __slots__ = ("_texts",)

    def __init__(self, texts: dict[Path, TextBuffer]) -> None:
        self._texts = texts

    def __getitem__(self, key: tuple[int, str]) -> Provenance:
        buffer = None
        if type(key) is tuple and len(key) == 2 and type(key[0]) is int and type(key[1]) is str:
            choice, field = key
            if field in TEXT_FIELDS:
                buffer = self._texts.get((choice, field))
                if buffer is not None and not buffer.length:
                    buffer = None
            elif field.startswith("tool:") and field[5:].isdigit() and field == f"tool:{int(field[5:])}":
                buffer = self._texts.get((choice, "tool", int(field[5:]), "arguments"))
        if buffer is None:
            raise KeyError(key)
        return buffer

    def __iter__(self) -> Iterator[tuple[int, str]]:
        found: list[tuple[int, int, int, str]] = []
        for path, buffer in self._texts.items():
            if type(path[0]) is not int:
                continue
            if len(path) == 2 and path[1] in TEXT_FIELDS and buffer.length:
                found.append((path[0], 0, TEXT_FIELDS.index(path[1]), path[1]))
            elif len(path) == 4 and path[1] == "tool" and path[3] == "arguments":
                found.append((path[0], 1, path[2], f"tool:{path[2]}"))
        return iter([(choice, field) for choice, _, _, field in sorted(found)])

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _explicit_block(merger: Merger, path: BlockPath) -> Block:
    """A block a dialect recorded at (choice, "block", key) as {"type": ..., "index": ...}."""
    value = merger.get(path)
    frames = merger.frames_of(path)
    assert frames is not None
    return Block(str(value.get("type", "?")), int(value.get("index", path[2])), frames)


def _counts_only(dialect: Dialect, usage: dict[str, Any], frames: tuple[int, int] | None) -> dict[str, Any]:
    """The normalised token counts, each an integer or None: a count of another JSON type (a string,
    a float, an object) is reported on the frame that sent the usage and left out."""
    for name, value in usage.items():
        if value is not None and type(value) is not int:
            dialect.wrong_type(value, frames[1] if frames else None, f"the usage's {name.replace('_', ' ')}",
                               "an integer", "the count is left out (null)")
            usage[name] = None
    return usage


def _counts(kinds: bytearray, comments: int, invalid: int) -> dict[str, int]:
    return {"total": len(kinds), "data": len(kinds) - comments, "comments": comments, "invalid": invalid}
