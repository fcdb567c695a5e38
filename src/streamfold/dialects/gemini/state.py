"""What the Gemini dialect keeps per candidate while it folds: its parts (the
blocks, and what the export lists), the identity of its function calls and the
Vertex call whose arguments are streaming."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from .._calls import CallIndex, content_key

if TYPE_CHECKING:
    from ...merge import TextBuffer

__all__ = ["CONTINUATION", "MAX_PARTS", "PART_EXTRAS", "Candidate", "Endings", "ErrorSpan", "Part", "StreamedCall",
           "snake"]

CONTINUATION = "CONTINUATION"
#: The parts a candidate may list (text and thought runs, whole parts; a function call always has its part,
#: bounded by `max_tool_calls`). A part costs ~800 bytes between the fold and the result, for ~20 bytes of
#: input when text and thought alternate: past this, a text or thought fragment extends the last part of its
#: kind and a whole part is left out (`parts-capped`), so the cost stays in proportion to the input.
MAX_PARTS: Final = 1000
#: Part keys that are not the part's data (they ride along with it).
PART_EXTRAS = frozenset(("thought", "thoughtSignature", "partMetadata", "videoMetadata", "mediaResolution"))


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


#: kind -> the block value its parts share (a dict per part cost ~180 bytes a function call).
_BLOCKS: dict[str, dict[str, Any]] = {}


def _block(kind: str) -> dict[str, Any]:
    block = _BLOCKS.get(kind)
    if block is None:
        block = {"type": kind}
        if len(_BLOCKS) < 64:  # the kinds Gemini sends, not every name a hostile stream makes up
            _BLOCKS[kind] = block
    return block


class Part:
    """One part of a candidate's reply, as the non-streaming response would list it."""

    __slots__ = ("block", "end", "key", "kind", "last_frame", "signature", "start", "tool", "whole")

    def __init__(self, kind: str, key: int, frame: int) -> None:
        #: "text", "reasoning", "tool_call" or a whole part's type ("executable_code", ...).
        self.kind = kind
        #: The block key: the part's position among the candidate's parts.
        self.key = key
        #: For text and reasoning: the run's span in the choice's content/reasoning buffer.
        self.start = 0
        self.end = 0
        self.signature: str | None = None
        #: For tool_call: the tool-call key.
        self.tool: int | None = None
        #: For whole parts: the part as sent.
        self.whole: dict[str, Any] | None = None
        #: The block's value in the merger, {"type": kind}: its index is the block key, which the result
        #: builder reads from the block's path. Shared by the parts of a kind (read, never changed).
        self.block = _block(kind)
        self.last_frame = frame


class StreamedCall:
    """A Vertex function call whose arguments stream as `partialArgs` fragments."""

    __slots__ = ("args", "continuing", "id", "key", "moved", "name", "part")

    def __init__(self, key: int, part: Part) -> None:
        self.key = key
        self.part = part
        self.name: str | None = None
        self.id: str | None = None
        self.args: dict[str, Any] = {}
        #: jsonPaths whose last string fragment said willContinue.
        self.continuing: set[str] = set()
        #: (the path's keys before an index, the index) -> the array position it was moved to
        #: (an index too far past the array's end; see `partial_args.MAX_INDEX_GAP`).
        self.moved: dict[tuple[tuple[str | int, ...], int], int] = {}


class Candidate:
    """Per-candidate bookkeeping: its parts (for blocks and export) and call identity."""

    __slots__ = ("capped", "chosen", "citation_field", "citation_keys", "citations", "content", "ended", "extras",
                 "finish_frame", "parts", "real", "reasoning", "role", "run", "streamed", "tool_ids", "tool_parts",
                 "tools", "tools_by_content", "top")

    def __init__(self, content: TextBuffer) -> None:
        self.content = content
        self.reasoning: TextBuffer | None = None
        self.parts: list[Part] = []
        #: The last part, when it is a visible-text run a plain text fragment extends (the hot path).
        self.run: Part | None = None
        #: Past `MAX_PARTS`: the kind -> the part its further fragments extend.
        self.capped: dict[str, Part] | None = None
        #: tool key -> (id, name, serialised args) as first kept, for dedupe.
        self.tools: dict[int, tuple[str | None, str | None, str]] = {}
        #: The same calls by (name, args): what a call without an id repeats, found in O(log n).
        self.tools_by_content = CallIndex()
        self.tool_ids: dict[str, int] = {}
        #: tool key -> its part.
        self.tool_parts: dict[int, Part] = {}
        self.streamed: StreamedCall | None = None
        #: Frame of the first finishReason that ended it (CONTINUATION does not).
        self.finish_frame: int | None = None
        #: A finishReason (any) arrived: the stream said this candidate is over.
        self.ended = False
        #: A real candidate object arrived (not only choice 0 of a blocked prompt).
        self.real = False
        self.role: str | None = None
        self.citations: list[Any] = []
        self.citation_keys: set[tuple[Any, ...]] = set()
        self.citation_field: str | None = None
        #: Candidate fields kept for export (REPLACE): safetyRatings, groundingMetadata, ...
        self.extras: dict[str, Any] = {}
        self.chosen: list[Any] = []
        self.top: list[Any] = []

    def set_tool(self, key: int, call_id: str | None, name: str | None, arguments: str) -> None:
        """Keep tool call `key` as (id, name, serialised args), indexed by content."""
        held = self.tools.get(key)
        if held is not None:
            self.tools_by_content.remove(key, content_key(held[1], held[2]), held[0] is not None)
        self.tools[key] = (call_id, name, arguments)
        self.tools_by_content.add(key, content_key(name, arguments), call_id is not None)

    def forget_calls(self) -> None:
        """The stream has ended: no call can repeat one any more, so the dedupe state goes (~250
        bytes a call) before the result is built beside what the fold holds."""
        self.tools.clear()
        self.tools_by_content = CallIndex()
        self.tool_ids.clear()
        self.tool_parts.clear()

    def keep_fields(self, candidate: dict[str, Any]) -> list[tuple[str, Any]]:
        """The candidate's fields beyond its content and finish reason, kept for export. Returns
        the (field, value) of citation indexes that are not integers (kept, and to be reported)."""
        extras = self.extras
        for name in ("safetyRatings", "groundingMetadata", "urlContextMetadata", "finishMessage",
                     "avgLogprobs", "tokenCount", "continuationToken"):
            value = candidate.get(name)
            if value is not None:
                extras[name] = value  # REPLACE
        citations = candidate.get("citationMetadata")
        wrong: list[tuple[str, Any]] = []
        if type(citations) is dict:
            self._cite(citations, wrong)
        logprobs = candidate.get("logprobsResult")
        if type(logprobs) is dict:
            # EXTEND: each chunk's tokens follow the previous chunk's.
            chosen, top = logprobs.get("chosenCandidates"), logprobs.get("topCandidates")
            if type(chosen) is list:
                self.chosen.extend(chosen)
            if type(top) is list:
                self.top.extend(top)
        return wrong

    def _cite(self, metadata: dict[str, Any], wrong: list[tuple[str, Any]]) -> None:
        """G6: the Gemini API says `citationSources`, Vertex says `citations`; EXTEND with dedupe."""
        for field in ("citationSources", "citations"):
            items = metadata.get(field)
            if type(items) is not list:
                continue
            if self.citation_field is None:
                self.citation_field = field
            for item in items:
                if type(item) is not dict:
                    continue
                key: tuple[Any, ...] = (item.get("startIndex"), item.get("endIndex"), item.get("uri"))
                for field, value in zip(("startIndex", "endIndex"), key):
                    if value is not None and type(value) is not int:
                        wrong.append((field, value))
                if not all(value is None or type(value) in (str, int, float, bool) for value in key):
                    key = (json.dumps(key, sort_keys=True),)  # an array or an object cannot be a set's key
                if key not in self.citation_keys:
                    self.citation_keys.add(key)
                    self.citations.append(item)


#: The first and the last of the in-stream errors (message, frame) that came while a candidate was open.
ErrorSpan: TypeAlias = tuple[tuple[str, int], tuple[str, int]]


class Endings:
    """Which candidates arrived and how many of them ended (the reply is finished when all did),
    asked at every candidate's start and end; and the in-stream errors, each of which belongs to
    every candidate open when it came: logged once, each candidate takes its share when it ends (or
    the stream does), instead of every open candidate being written at every error."""

    __slots__ = ("_errors", "_open", "arrived", "ended")

    def __init__(self) -> None:
        self.arrived = 0
        self.ended = 0
        #: The candidates open (arrived, not ended) -> how many errors had been logged when each arrived.
        self._open: dict[int, int] = {}
        self._errors: list[tuple[str, int]] = []

    def arrive(self, index: int) -> None:
        self.arrived += 1
        self._open[index] = len(self._errors)

    def end(self, index: int) -> ErrorSpan | None:
        """Candidate `index` ended: the errors that came while it was open."""
        self.ended += 1
        return self._since(self._open.pop(index))

    def error(self, message: str, frame: int) -> bool:
        """An in-stream error, for the candidates open now; False when none is."""
        if not self._open:
            return False
        self._errors.append((message, frame))
        return True

    def still_open(self) -> list[tuple[int, ErrorSpan]]:
        """The candidates open at the end of the stream that errors came for, with those errors."""
        return [(index, span) for index, since in self._open.items() if (span := self._since(since)) is not None]

    def _since(self, logged: int) -> ErrorSpan | None:
        errors = self._errors
        return (errors[logged], errors[-1]) if logged < len(errors) else None
