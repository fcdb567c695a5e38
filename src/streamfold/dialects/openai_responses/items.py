"""The bookkeeping of a Responses stream: output items, their parts
(segments) and the shared text buffers they stream into.

Output items are keyed by `output_index`, parts by `content_index` (summary
parts by `summary_index`). Every part is a `Segment`: where its pieces sit in
the canonical APPEND buffer it shares with the other parts of its kind (all
visible text in choice 0's content, refusals in its refusal, summaries and
reasoning text in its reasoning, a blank line between parts), so that a
`.done` value can REPLACE exactly that part's pieces in place (R4).

A REPLACE in a buffer shared by many parts waits: the part holds its final
value, and the buffer is rebuilt once, with every waiting value in place, when
it is next read whole (`_settle`: a call's arguments are parsed, the stream
ends). Rebuilding it at each `.done` cost the whole buffer per part: quadratic
in a reply of many parts.
"""

from __future__ import annotations

import json
from itertools import chain
from typing import Any

from ...findings import Report, Severity
from ...framing import FrameView
from ...merge import Merger, TextBuffer
from .._base import Dialect, compact_json
from .agents import AgentLanes

__all__ = ["CHOICE", "PART_KINDS", "TERMINAL", "Item", "ResponsesItems", "Segment", "Text"]

CHOICE = 0
TERMINAL = ("response.completed", "response.incomplete", "response.failed", "response.done")
#: A part's type -> the canonical text it streams into.
PART_KINDS = {"output_text": "content", "refusal": "refusal", "reasoning_text": "reasoning"}


class Text:
    """One canonical APPEND buffer, shared by the segments that stream into it."""

    __slots__ = ("buffer", "owner", "path", "segments", "sep", "waiting")

    def __init__(self, path: tuple[Any, ...], buffer: TextBuffer, sep: str) -> None:
        self.path = path
        self.buffer = buffer
        #: The segment that made the buffer's last piece (its run grows in place).
        self.owner: Segment | None = None
        self.segments: list[Segment] = []
        #: Put between two segments (a blank line between reasoning parts).
        self.sep = sep
        #: The segments whose REPLACE is not in the buffer yet (`_settle` puts them there).
        self.waiting: list[Segment] = []


class Segment:
    """One streamed string (a text or refusal part, a summary part, a call's
    arguments) and where its pieces sit in the shared buffer: `runs` are
    [first, end) ranges of the buffer's pieces, in arrival order."""

    __slots__ = ("annotations", "deltas", "final_annotations", "final_part", "kind", "label", "replaced", "runs",
                 "superseded", "text", "top_annotation")

    def __init__(self, text: Text, kind: str, label: str) -> None:
        self.text = text
        self.runs: list[list[int]] = []
        #: Delta events that carried text.
        self.deltas = 0
        #: output_text | refusal | reasoning_text | summary_text | arguments
        self.kind = kind
        #: annotation_index -> annotation, as `annotation.added` placed them.
        self.annotations: dict[int, Any] | None = None
        #: The highest annotation_index placed (-1: none).
        self.top_annotation = -1
        #: The annotations a final part (content_part.done, output_item.done, response.output) carried.
        self.final_annotations: list[Any] | None = None
        #: The last final part object (content_part.done, a final item's part), the export's base.
        self.final_part: dict[str, Any] | None = None
        #: How a person names it: "output_text 0 of output item 1".
        self.label = label
        #: A final value (and its frame) waiting to REPLACE the first `superseded` runs (`_settle`).
        self.replaced: tuple[str, int] | None = None
        self.superseded = 0


class Item:
    """One output item: the skeleton from `.added`, the final item, its parts."""

    __slots__ = ("arguments", "checked", "done_frame", "final", "id", "index", "lists", "partial_images", "parts",
                 "skeleton", "streamed", "summary", "text_parts", "top_part", "type")

    def __init__(self, index: int, kind: str | None, item_id: str | None) -> None:
        self.index = index
        self.type = kind
        self.id = item_id
        self.skeleton: dict[str, Any] | None = None
        #: From `response.output_item.done` or the terminal `response.output` (R3: authoritative).
        self.final: dict[str, Any] | None = None
        #: content_index -> segment (message output_text/refusal, reasoning_text)
        self.parts: dict[int, Segment] = {}
        #: summary_index -> segment (reasoning summary_text)
        self.summary: dict[int, Segment] = {}
        #: How many of `parts` are output_text, and the highest key of `parts` and of `summary` (-1: none).
        self.text_parts = 0
        self.top_part = {"content": -1, "summary": -1}
        #: (field, source) of the final items whose parts were checked against the streamed ones.
        self.checked: set[tuple[str, str]] | None = None
        self.arguments: Segment | None = None
        self.done_frame: int | None = None
        #: A built-in tool item's streamed fields (`builtin`): field path -> its pieces and `.done` value.
        self.streamed: dict[tuple[str | int, ...], Any] | None = None
        #: A built-in tool item's list fields (`builtin`, shell commands and outputs): path -> the positions used.
        self.lists: dict[tuple[str | int, ...], Any] | None = None
        #: `image_generation_call.partial_image` events (previews, never the result).
        self.partial_images = 0


class ResponsesItems(Dialect):
    """The items, parts and text buffers of the stream, and the REPLACE of a part by its final value."""

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self._items: dict[int, Item] = {}
        self._by_id: dict[str, Item] = {}
        self._texts: dict[tuple[Any, ...], Text] = {}
        # The hot path: the part the last text delta went to.
        self._hot_key: tuple[Any, Any] | None = None
        self._hot: Segment | None = None
        self._agents = AgentLanes()

    # -- segments: APPEND with the position of every piece kept -----------------

    def _text(self, path: tuple[Any, ...], sep: str = "") -> Text:
        text = self._texts.get(path)
        if text is None:
            text = self._texts[path] = Text(path, self.merger.buffer(path), sep)
        return text

    def _segment(self, path: tuple[Any, ...], kind: str, label: str) -> Segment:
        text = self._text(path, "\n\n" if path[1] == "reasoning" else "")
        segment = Segment(text, kind, label)
        text.segments.append(segment)
        return segment

    def _add(self, segment: Segment, piece: str, frame: int) -> None:
        """APPEND a non-empty piece to the segment's buffer."""
        text = segment.text
        buffer = text.buffer
        if text.owner is segment:
            segment.runs[-1][1] += 1
        else:
            if not segment.runs and text.sep and buffer.length:
                buffer.add(text.sep, frame)
            count = len(buffer.frames)
            segment.runs.append([count, count + 1])
            text.owner = segment
        buffer.add(piece, frame)

    def _value(self, segment: Segment) -> str:
        """The segment's text: its waiting final value, then the pieces of its runs since."""
        runs = segment.runs
        head = ""
        if segment.replaced is not None:
            head, runs = segment.replaced[0], runs[segment.superseded:]
        if not runs:
            return head
        buffer = segment.text.buffer
        pieces = buffer.pieces
        if len(pieces) == len(buffer.frames):  # one string a piece (never joined): read only the segment's
            return head + "".join(chain.from_iterable(pieces[a:b] for a, b in runs))
        joined = buffer.text()
        ends = buffer.ends
        return head + "".join(joined[ends[a - 1] if a else 0 : ends[b - 1]] for a, b in runs)

    def _replace(self, segment: Segment, value: str, frame: int) -> None:
        """REPLACE the segment's pieces by `value` (from `frame`): its runs so far are superseded, and
        `_settle` puts the value where the first of them began."""
        text = segment.text
        if segment.replaced is None:
            text.waiting.append(segment)
        segment.replaced = (value, frame)
        segment.superseded = len(segment.runs)
        text.owner = None  # a later delta starts a run of its own, after the value

    def _settle(self, text: Text) -> None:
        """Put the waiting REPLACEs of `text` in its buffer: one rebuild for all of them."""
        waiting = text.waiting
        if not waiting:
            return
        fragments = text.buffer.fragments()
        dropped = bytearray(len(fragments))
        anchors: dict[int, Segment] = {}
        for segment in waiting:
            for a, b in segment.runs[:segment.superseded]:
                dropped[a:b] = b"\x01" * (b - a)
            anchors[segment.runs[0][0]] = segment
        pieces: list[tuple[str, int]] = []
        mapping: list[int] = []
        placed: dict[int, int] = {}
        for i, (piece, origin) in enumerate(fragments):
            anchored = anchors.get(i)
            if anchored is not None:
                assert anchored.replaced is not None
                placed[id(anchored)] = len(pieces)
                pieces.append(anchored.replaced)
            mapping.append(-1 if dropped[i] else len(pieces))
            if not dropped[i]:
                pieces.append((piece, origin))
        text.buffer = self.merger.replace_text(text.path, pieces)
        for segment in text.segments:
            runs = segment.runs[segment.superseded:] if segment.replaced is not None else segment.runs
            moved = [[mapping[a], mapping[b - 1] + 1] for a, b in runs]
            if segment.replaced is not None:
                at = placed[id(segment)]
                moved.insert(0, [at, at + 1])
                segment.replaced, segment.superseded = None, 0
            segment.runs = moved
        waiting.clear()
        text.owner = None

    def _settle_all(self) -> None:
        """Every text's waiting REPLACEs in its buffer (before the buffers are read at the end)."""
        for text in self._texts.values():
            self._settle(text)

    def _final(self, segment: Segment, value: object, frame: int, source: str) -> None:
        """The vendor's final word on a segment (a `.done` event, a final item, the terminal output)."""
        if segment.kind == "arguments" and value is not None and type(value) is not str:
            value = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        if type(value) is not str:
            return
        if not segment.runs:
            if value:
                self._add(segment, value, frame)
                self._filled(segment, frame, source)
            return
        current = self._value(segment)
        if value == current:
            return
        if not value:
            self.report.diagnostic(
                "done-mismatch", frame,
                f"{source} gives an empty {segment.label}, but its deltas streamed {len(current)} characters; "
                "an empty final value next to streamed text is a gateway dropping it (agentgateway/agentgateway#2281), "
                "so the deltas are kept. A client that reads the final value gets nothing",
                once=(id(segment), "empty"), source=source, kept="deltas", streamed=len(current))
            return
        position = next((i for i, (a, b) in enumerate(zip(current, value)) if a != b), min(len(current), len(value)))
        self.report.diagnostic(
            "done-mismatch", frame,
            f"{source} gives the {segment.label} as {len(value)} characters, the join of its "
            f"{segment.deltas} delta(s) is {len(current)} characters; they differ from character {position} "
            f"(deltas {compact_json(current[position:position + 40], 60)}, final "
            f"{compact_json(value[position:position + 40], 60)}). The final value is the vendor's own last word "
            "and is the result (a `.done` value replaces what the deltas built); a client that only appends deltas "
            "shows the other one",
            source=source, kept="done", position=position, streamed=len(current), final=len(value))
        self._replace(segment, value, frame)

    def _filled(self, segment: Segment, frame: int, source: str) -> None:
        if source in TERMINAL:
            self.report.diagnostic(
                "output-from-terminal", frame,
                f"the {segment.label} was never streamed (no delta, no `.done` event, no `output_item.done`); "
                f"it is taken from the terminal `{source}` event's `response.output`. A client that builds "
                "the reply from the stream events shows nothing there",
                once=(id(segment),), source=source)
        elif segment.kind == "arguments":
            # Whole arguments in the call's own final event are the normal shape of servers that parse
            # tool calls after generating (LM Studio) and of some models: the stream is complete and
            # the openai SDK reads them. Only a client that builds from deltas alone misses them.
            self.report.diagnostic(
                "done-without-deltas", frame,
                f"the {segment.label} came whole in {source}, with no delta before it (LM Studio and some models "
                "send tool arguments only whole); streamfold used it. A client that builds the arguments from "
                "deltas alone gets an empty value and runs the tool with `{}` (lidge-jun/opencodex#4652, "
                "BerriAI/litellm#27144)",
                severity=Severity.INFO, once=(id(segment),), source=source)
        else:
            self.report.diagnostic(
                "done-without-deltas", frame,
                f"the {segment.label} came only in {source}, with no delta before it (gateways and some models "
                "send only the final value, lidge-jun/opencodex#4652, BerriAI/litellm#27144); streamfold used it. "
                "A client that builds from deltas gets an empty value",
                once=(id(segment),), source=source)

    # -- items and parts --------------------------------------------------------

    def _item(self, value: dict[str, Any], frame: int, kind: str, event: str | None = None) -> Item | None:
        """The item an event names by `output_index`; created if `.added` never came."""
        index = value.get("output_index")
        if type(index) is not int:
            self.report.diagnostic(
                "unexpected-payload", frame,
                f"a {value.get('type')} event without an integer `output_index`; ignored", once=("output_index",))
            return None
        item = self._items.get(index)
        if item is None:
            item = self._new_item(index, kind, value.get("item_id"), frame)
            if event is not None:
                self.report.diagnostic(
                    "missing-added-event", frame,
                    f"a {event} event for output item {index} came before any `response.output_item.added` for "
                    "it; streamfold created the item (the openai SDK raises 'Received a content event for output "
                    "index ... before receiving its output item')", once=(index,), output_index=index)
        elif item.type is None:
            item.type = kind
        return item

    def _new_item(self, index: int, kind: str | None, item_id: object, frame: int) -> Item:
        item = self._items[index] = Item(index, kind, item_id if type(item_id) is str else None)
        if item.id:
            self._by_id[item.id] = item
        self._block(item, frame)
        return item

    def _block(self, item: Item, frame: int) -> None:
        kind = item.type
        if kind == "message":
            kind = "refusal" if item.parts and not item.text_parts else "text"
        elif kind == "function_call":
            kind = "tool_call"
        self.merger.replace((CHOICE, "block", item.index), {"type": kind or "unknown", "index": item.index}, frame)

    def _part(self, item: Item, index: object, kind: str, frame: int, event: str | None = None) -> Segment | None:
        if type(index) is not int:
            self.report.diagnostic(
                "unexpected-payload", frame,
                f"a part of output item {item.index} without an integer `content_index`; ignored",
                once=("content_index",))
            return None
        segment = item.parts.get(index)
        if segment is None:
            path = (CHOICE, PART_KINDS.get(kind, "content"))
            segment = item.parts[index] = self._segment(path, kind, f"{kind} {index} of output item {item.index}")
            if kind == "output_text":
                item.text_parts += 1
            item.top_part["content"] = max(item.top_part["content"], index)
            if event is not None and item.skeleton is not None:  # (a missing item was reported already)
                self.report.diagnostic(
                    "missing-added-event", frame,
                    f"a {event} event for content_index {index} of output item {item.index} came before its "
                    "`response.content_part.added`; streamfold created the part (the openai SDK fails on it)",
                    once=(item.index, index), output_index=item.index, content_index=index)
            if kind == "refusal" or kind == "output_text":
                self._block(item, frame)
        return segment

    def _summary(self, item: Item, index: object, frame: int) -> Segment | None:
        if type(index) is not int:
            self.report.diagnostic(
                "unexpected-payload", frame,
                f"a reasoning summary event of output item {item.index} without an integer `summary_index`; "
                "ignored", once=("summary_index",))
            return None
        segment = item.summary.get(index)
        if segment is None:
            segment = item.summary[index] = self._segment(
                (CHOICE, "reasoning"), "summary_text", f"reasoning summary part {index} of output item {item.index}")
            item.top_part["summary"] = max(item.top_part["summary"], index)
        return segment

    def _arguments(self, item: Item) -> Segment:
        if item.arguments is None:
            item.arguments = self._segment(
                (CHOICE, "tool", item.index, "arguments"), "arguments",
                f"arguments of the function call in output item {item.index}" + (f" ({item.id})" if item.id else ""))
        return item.arguments

    def _text_part(self, value: dict[str, Any], frame: int, key: tuple[Any, Any]) -> Segment | None:
        item = self._item(value, frame, "message", "response.output_text.delta")
        if item is None:
            return None
        segment = self._part(item, value.get("content_index"), "output_text", frame, "response.output_text.delta")
        if segment is not None:
            self._hot_key, self._hot = key, segment
        return segment
