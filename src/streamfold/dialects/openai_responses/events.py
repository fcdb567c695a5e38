"""The content events of a Responses stream: output items added and done,
parts, refusals, reasoning summaries and text, function call arguments,
annotations, and the reconciliation of a final item (`output_item.done`, the
terminal `response.output`) with what the stream built.

The stream states most things twice: deltas, then the `.done` event of the
part, then `response.output_item.done`, then the terminal `response.output`.
Each later statement is the vendor's final word (R3, R4; see `items`).
"""

from __future__ import annotations

from typing import Any

from ...findings import Severity
from ...merge import ToolCallPath, ToolField
from .items import CHOICE, PART_KINDS, Item, ResponsesItems, Segment

__all__ = ["ResponsesEvents"]


class ResponsesEvents(ResponsesItems):
    """The handlers of the content events (`OpenAIResponses` dispatches to them by event type)."""

    def _terminal_output(self, response: dict[str, Any], kind: str, frame: int) -> None:
        output = response.get("output")
        if type(output) is not list or not output:
            if self._items and kind != "response.failed":
                self._empty_output(kind, output == [], frame)
            return
        # A final item's place in `response.output` is its output_index. When the stream skipped an
        # index (an empty `.added` event) and the lists are as long, the n-th item is the n-th streamed.
        indexes = sorted(self._items)
        by_rank = len(output) == len(indexes) and indexes != list(range(len(indexes)))
        matched: set[int] = set()
        # Built once, so a terminal output of n items costs O(n), not O(n²).
        by_call_id: dict[tuple[Any, str], list[Item]] = {}
        for streamed in self._items.values():
            call_id = self.merger.get((CHOICE, "tool", streamed.index, "id"))
            if type(call_id) is str:
                by_call_id.setdefault((streamed.type, call_id), []).append(streamed)
        next_free = max(self._items, default=-1) + 1
        agents = self._agents
        for position, final in enumerate(output):
            if type(final) is not dict or (agents.active and not agents.owns(final, self.lane)):
                continue
            item = self._match(final, indexes[position] if by_rank else position, matched, by_call_id)
            if item is None:
                if position in self._items:
                    index, next_free = next_free, next_free + 1
                else:
                    index, next_free = position, max(next_free, position + 1)
                item = self._new_item(index, final.get("type"), final.get("id"), frame)
            matched.add(item.index)
            self._reconcile(item, final, frame, kind)

    def _match(self, final: dict[str, Any], index: int, matched: set[int],
               by_call_id: dict[tuple[Any, str], list[Item]]) -> Item | None:
        """The streamed item a final item of the terminal `response.output` is: the one at its
        output_index when the types agree (as the openai SDK's ResponseStreamState matches them),
        whatever its id (gateways rotate item ids: OpenRouter gives the reasoning item a new one in
        `response.completed`, GitHub Copilot a new one on every event); else the one with its id or
        `call_id`."""
        kind = final.get("type")
        same = self._items.get(index)
        if same is not None and index not in matched and (same.type is None or same.type == kind):
            return same
        item_id = final.get("id")
        if type(item_id) is str and item_id in self._by_id and self._by_id[item_id].index not in matched:
            return self._by_id[item_id]
        call_id = final.get("call_id")
        if type(call_id) is str and call_id and type(kind) is not list and type(kind) is not dict:
            for item in by_call_id.get((kind, call_id), ()):
                if item.index not in matched:
                    return item
        return None

    def _empty_output(self, kind: str, empty_list: bool, frame: int) -> None:
        if empty_list:
            what = "has `output: []`"
            client = ("A client that takes the final `response.output` as the answer (the openai SDK's "
                      "get_final_response()) gets no output (agentgateway/agentgateway#3326)")
        else:
            what = "has no `output`"
            client = ("Clients that read `response.output` crash on it (TypeError: 'NoneType' object is not "
                      "iterable, decolua/9router#705); openai-python 3.57 rebuilds it from the `output_item.done` "
                      "items")
        self.report.diagnostic(
            "empty-terminal-output", frame,
            f"the terminal `{kind}` event {what} although the stream produced {len(self._items)} output item(s); "
            f"streamfold rebuilt the reply from the deltas, `.done` events and `output_item.done` items. {client}",
            output_items=len(self._items))

    def _item_added(self, value: dict[str, Any], frame: int) -> None:
        index = value.get("output_index")
        item_value = value.get("item")
        if type(item_value) is not dict:
            return  # the SDK skips an added event without an item too
        if type(index) is not int:
            self.report.diagnostic("unexpected-payload", frame,
                                   "a `response.output_item.added` without an integer `output_index`; ignored",
                                   once=("output_index",))
            return
        kind = item_value.get("type")
        item = self._items.get(index)
        if item is None:
            item = self._new_item(index, kind if type(kind) is str else None, item_value.get("id"), frame)
        else:
            item.type = kind if type(kind) is str else item.type
            if type(item_value.get("id")) is str and not item.id:
                item.id = item_value["id"]
                self._by_id[item.id] = item
            self._block(item, frame)
        item.skeleton = item_value  # R3: a skeleton; its values are never taken as final
        merger = self.merger
        merger.set_once((CHOICE, "role"), item_value.get("role") or "assistant", frame)
        if kind == "function_call":
            self._call_identity(item, item_value, frame)
            self._arguments(item)

    def _call_identity(self, item: Item, value: dict[str, Any], frame: int) -> None:
        path: ToolCallPath = (CHOICE, "tool", item.index)
        labels: tuple[tuple[str, ToolField], ...] = (("call_id", "id"), ("name", "name"))
        for field, label in labels:
            new = value.get(field)
            held = self.merger.set_once((*path, label), new, frame)
            if held is not None and type(new) is str and new and new != held:
                self.report.diagnostic(
                    "tool-call-identity-changed", frame,
                    f"function call {item.index} changed its `{field}` from {held!r} to {new!r}; the first is kept "
                    "(the tool result must reference the first `call_id`)",
                    once=(item.index, field), tool_call=item.index, previous=held, value=new)

    def _part_added(self, value: dict[str, Any], frame: int) -> None:
        part = value.get("part")
        kind = part.get("type") if type(part) is dict else None
        if type(kind) is not str or kind not in PART_KINDS:
            return
        item = self._item(value, frame, "reasoning" if kind == "reasoning_text" else "message",
                          "response.content_part.added")
        if item is not None:
            self._part(item, value.get("content_index"), kind, frame)

    def _part_done(self, value: dict[str, Any], frame: int) -> None:
        part = value.get("part")
        kind = part.get("type") if type(part) is dict else None
        if type(part) is not dict or type(kind) is not str or kind not in PART_KINDS:
            return
        item = self._item(value, frame, "reasoning" if kind == "reasoning_text" else "message",
                          "response.content_part.done")
        if item is None:
            return
        segment = self._part(item, value.get("content_index"), kind, frame)
        if segment is not None:
            self._final(segment, part.get("refusal" if kind == "refusal" else "text"), frame,
                        "`response.content_part.done`")
            self._final_annotations(segment, part)

    def _text_done(self, value: dict[str, Any], frame: int) -> None:
        item = self._item(value, frame, "message", "response.output_text.done")
        segment = None if item is None else self._part(item, value.get("content_index"), "output_text", frame)
        if segment is not None:
            self._final(segment, value.get("text"), frame, "`response.output_text.done`")

    def _annotation(self, value: dict[str, Any], frame: int) -> None:
        item = self._item(value, frame, "message", "response.output_text.annotation.added")
        segment = None if item is None else self._part(item, value.get("content_index"), "output_text", frame)
        annotation = value.get("annotation")
        if segment is None or annotation is None:
            return
        placed = segment.annotations
        if placed is None:
            placed = segment.annotations = {}
        index = value.get("annotation_index")
        top = segment.top_annotation
        if type(index) is not int:
            index = top + 1
        if index < top:
            self.report.diagnostic(
                "annotation-out-of-order", frame,
                f"annotation_index {index} of {segment.label} arrived after annotation_index {top}; it is "
                "placed at its index. A client that appends annotations in arrival order lists them in the wrong "
                "order (their start_index/end_index no longer follow the text)",
                severity=Severity.INFO, once=(id(segment),), annotation_index=index, after=top)
        placed[index] = annotation
        segment.top_annotation = max(top, index)

    def _refusal_delta(self, value: dict[str, Any], frame: int) -> None:
        delta = value.get("delta")
        if type(delta) is str and delta:
            item = self._item(value, frame, "message", "response.refusal.delta")
            segment = None if item is None else self._part(
                item, value.get("content_index"), "refusal", frame, "response.refusal.delta")
            if segment is not None:
                segment.deltas += 1
                self._add(segment, delta, frame)

    def _refusal_done(self, value: dict[str, Any], frame: int) -> None:
        item = self._item(value, frame, "message", "response.refusal.done")
        segment = None if item is None else self._part(item, value.get("content_index"), "refusal", frame)
        if segment is not None:
            self._final(segment, value.get("refusal"), frame, "`response.refusal.done`")

    def _summary_part_added(self, value: dict[str, Any], frame: int) -> None:
        item = self._item(value, frame, "reasoning", "response.reasoning_summary_part.added")
        if item is not None:
            self._summary(item, value.get("summary_index"), frame)

    def _summary_part_done(self, value: dict[str, Any], frame: int) -> None:
        item = self._item(value, frame, "reasoning", "response.reasoning_summary_part.done")
        segment = None if item is None else self._summary(item, value.get("summary_index"), frame)
        part = value.get("part")
        if segment is not None and type(part) is dict:
            self._final(segment, part.get("text"), frame, "`response.reasoning_summary_part.done`")

    def _summary_delta(self, value: dict[str, Any], frame: int) -> None:
        delta = value.get("delta")
        if type(delta) is str and delta:
            item = self._item(value, frame, "reasoning", "response.reasoning_summary_text.delta")
            segment = None if item is None else self._summary(item, value.get("summary_index"), frame)
            if segment is not None:
                segment.deltas += 1
                self._add(segment, delta, frame)

    def _summary_done(self, value: dict[str, Any], frame: int) -> None:
        item = self._item(value, frame, "reasoning", "response.reasoning_summary_text.done")
        segment = None if item is None else self._summary(item, value.get("summary_index"), frame)
        if segment is not None:
            self._final(segment, value.get("text"), frame, "`response.reasoning_summary_text.done`")

    def _reasoning_delta(self, value: dict[str, Any], frame: int) -> None:
        delta = value.get("delta")
        if type(delta) is str and delta:
            item = self._item(value, frame, "reasoning", "response.reasoning_text.delta")
            segment = None if item is None else self._part(
                item, value.get("content_index"), "reasoning_text", frame)
            if segment is not None:
                segment.deltas += 1
                self._add(segment, delta, frame)

    def _reasoning_done(self, value: dict[str, Any], frame: int) -> None:
        item = self._item(value, frame, "reasoning", "response.reasoning_text.done")
        segment = None if item is None else self._part(item, value.get("content_index"), "reasoning_text", frame)
        if segment is not None:
            self._final(segment, value.get("text"), frame, "`response.reasoning_text.done`")

    def _arguments_delta(self, value: dict[str, Any], frame: int) -> None:
        delta = value.get("delta")
        if type(delta) is str and delta:
            item = self._item(value, frame, "function_call", "response.function_call_arguments.delta")
            if item is not None:
                segment = self._arguments(item)
                segment.deltas += 1
                self._add(segment, delta, frame)

    def _arguments_done(self, value: dict[str, Any], frame: int) -> None:
        item = self._item(value, frame, "function_call", "response.function_call_arguments.done")
        if item is not None:
            self._final(self._arguments(item), value.get("arguments"), frame,
                        "`response.function_call_arguments.done`")

    def _item_done(self, value: dict[str, Any], frame: int) -> None:
        final = value.get("item")
        index = value.get("output_index")
        if type(final) is not dict or type(index) is not int:
            self.report.diagnostic("unexpected-payload", frame,
                                   "a `response.output_item.done` without an `item` object and an integer "
                                   "`output_index`; ignored", once=("item-done",))
            return
        item = self._items.get(index)
        if item is None:
            kind = final.get("type")
            item = self._new_item(index, kind if type(kind) is str else None, final.get("id"), frame)
        self._reconcile(item, final, frame, "`response.output_item.done`")
        item.done_frame = frame
        self._block(item, frame)
        if item.arguments is not None:
            self._settle(item.arguments.text)
            self.merger.parse(item.arguments.text.path, frame)  # the call's block closed

    def _reconcile(self, item: Item, final: dict[str, Any], frame: int, source: str) -> None:
        """A final item (R3: authoritative) against what the stream built for it."""
        item.final = final
        kind = final.get("type")
        if item.type is None and type(kind) is str:
            item.type = kind
        if item.id is None and type(final.get("id")) is str:
            item.id = final["id"]
            self._by_id[item.id] = item
        if kind == "message":
            self.merger.set_once((CHOICE, "role"), final.get("role") or "assistant", frame)
            content = final.get("content")
            if type(content) is list:
                for index, part in enumerate(content):
                    if type(part) is not dict or part.get("type") not in ("output_text", "refusal"):
                        continue
                    segment = self._part(item, index, part["type"], frame)
                    if segment is not None:
                        self._final(segment, part.get("refusal" if part["type"] == "refusal" else "text"),
                                    frame, source)
                        self._final_annotations(segment, part)
                self._missing_parts(item, item.parts, len(content), "content", frame, source)
        elif kind == "reasoning":
            summary = final.get("summary")
            if type(summary) is list:
                for index, part in enumerate(summary):
                    if type(part) is dict:
                        segment = self._summary(item, index, frame)
                        if segment is not None:
                            self._final(segment, part.get("text"), frame, source)
                self._missing_parts(item, item.summary, len(summary), "summary", frame, source)
            content = final.get("content")
            if type(content) is list:
                for index, part in enumerate(content):
                    if type(part) is dict and part.get("type") == "reasoning_text":
                        segment = self._part(item, index, "reasoning_text", frame)
                        if segment is not None:
                            self._final(segment, part.get("text"), frame, source)
        elif kind == "function_call":
            self._call_identity(item, final, frame)
            self._final(self._arguments(item), final.get("arguments"), frame, source)

    def _missing_parts(self, item: Item, parts: dict[int, Segment], count: int, field: str, frame: int,
                       source: str) -> None:
        if item.top_part[field] < count:
            return  # every part the stream built is in the final item
        # Looked at once per source: a final item sent again for the same item does not scan all its parts again.
        checked = item.checked
        if checked is None:
            checked = item.checked = set()
        if (field, source) in checked:
            return
        checked.add((field, source))
        lost = [index for index, segment in parts.items() if index >= count and segment.runs]
        if lost:
            self.report.diagnostic(
                "done-mismatch", frame,
                f"{source} gives output item {item.index} with {count} `{field}` part(s), but the stream built "
                f"part(s) {lost} with text; an empty or short final item is a gateway dropping them "
                "(agentgateway/agentgateway#2281), so the streamed parts are kept",
                once=(item.index, field, source), source=source, kept="deltas", parts=lost)

    def _final_annotations(self, segment: Segment, part: dict[str, Any]) -> None:
        segment.final_part = part
        annotations = part.get("annotations")
        if type(annotations) is list and annotations:
            segment.final_annotations = annotations
