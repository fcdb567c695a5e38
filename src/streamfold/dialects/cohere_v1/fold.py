"""Cohere v1 chat (legacy `POST /v1/chat`, `stream: true`), reference §4.6 "Cohere v1".

NDJSON, one object per line, dispatched on `event_type` (the cohere SDK's
`StreamedChatResponse` union, cohere 7.3 `types/streamed_chat_response.py`):

- `stream-start` names the generation (`generation_id`, the Result's id);
- `text-generation` APPENDs `text` to the reply;
- `tool-calls-chunk` streams `tool_call_delta {index, name, parameters, text}`:
  the call at `index` gets its name SET-ONCE and its `parameters` fragments
  APPENDed (a JSON object, PARSE-AT-END); `text` is "a chunk of the tool plan
  text", which is reasoning, as in v2's `tool-plan-delta`;
- `tool-calls-generation` states the calls WHOLE (`parameters` an object):
  they fill calls that never streamed and REPLACE ones whose streamed
  parameters say otherwise; its `text` is the whole plan (reasoning, when no
  chunk streamed it);
- `citation-generation` EXTENDs the citations; `search-queries-generation`
  and `search-results` are kept for the export; `debug` is ignored;
- `stream-end` is terminal: `finish_reason`, and `response`, the whole
  non-streaming reply, which is authoritative (its `text` REPLACEs a streamed
  text that differs, `final-text-mismatch`, except when it is the tool plan
  the reasoning holds: a reply that calls tools has its plan as `text`;
  `meta` is the usage).

The export is that non-streaming reply (`NonStreamedChatResponse`): the
`stream-end` response when it came, with the text, tool calls, citations and
finish reason the stream folded.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

from ...findings import Report, Severity
from ...framing import FrameView
from ...merge import EMPTY_VALUES, Merger
from .._base import CONTENT_FILTER, ERROR, LENGTH, STOP, Dialect, arguments_text, compact_json, dumps_arguments
from ..cohere.fold import cohere_usage

if TYPE_CHECKING:
    from ...merge import ToolCallPath
    from ...result import Result

__all__ = ["CohereV1"]

EVENT_TYPES = frozenset({
    "stream-start", "search-queries-generation", "search-results", "text-generation", "citation-generation",
    "tool-calls-generation", "tool-calls-chunk", "stream-end", "debug"})
#: The stream's lists the export carries as the non-streaming reply names them.
_KEPT = ("search_queries", "search_results", "documents")


class CohereV1(Dialect):
    name = "cohere-v1"
    #: cohere 7.3 `ChatStreamEndEventFinishReason`; ERROR_LIMIT is the context window.
    finish_reasons: ClassVar[dict[str, str]] = {
        "COMPLETE": STOP,
        "MAX_TOKENS": LENGTH,
        "ERROR_LIMIT": LENGTH,
        "ERROR_TOXIC": CONTENT_FILTER,
        "ERROR": ERROR,
    }
    terminal_hint = "`stream-end`"

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self._content = self.merger.buffer((0, "content"))
        #: The tool keys in the order they came (`tool-calls-generation` names calls by position), and
        #: the same as a set: a stream of n tool indexes asks n times whether its index is known.
        self._tool_keys: list[int] = []
        self._known_keys: set[int] = set()
        self._streamed_keys: set[int] = set()
        self._citations: list[Any] = []
        self._kept: dict[str, Any] = {}
        #: The `response` of `stream-end`, as sent.
        self._response: dict[str, Any] | None = None

    @classmethod
    def claims(cls, value: object) -> bool:
        return isinstance(value, dict) and type(kind := value.get("event_type")) is str and kind in EVENT_TYPES

    def fold(self, value: object, frame: int) -> None:
        if type(value) is not dict:
            self._unexpected(f"expected a JSON object, got {type(value).__name__}; ignored", frame, "not-object")
            return
        kind = value.get("event_type")
        if kind == "text-generation":
            text = value.get("text")
            if type(text) is str and text:
                self._content.add(text, frame)
        elif kind == "tool-calls-chunk":
            self._tool_chunk(value, frame)
        elif kind == "tool-calls-generation":
            self._tool_calls(value, frame)
        elif kind == "citation-generation":
            citations = value.get("citations")
            if type(citations) is list:
                self._citations.extend(citations)  # EXTEND
        elif kind == "search-queries-generation" or kind == "search-results":
            for name in _KEPT:
                if value.get(name) is not None:
                    self._kept[name] = value[name]
        elif kind == "stream-start":
            self.merger.set_once(("id",), value.get("generation_id"), frame)
            self.merger.set_once((0, "role"), "assistant", frame)
        elif kind == "stream-end":
            self._stream_end(value, frame)
        elif kind != "debug":
            self._unexpected(f"unknown `event_type` {kind!r}; ignored", frame, kind)

    def _key(self, index: object, frame: int) -> int:
        # The SDK types `index` as a float; JSON sends 0, 1, ...
        if type(index) is float and index.is_integer():
            index = int(index)
        if type(index) is not int:
            index = self._tool_keys[-1] if self._tool_keys else 0
            self.report.diagnostic(
                "tool-call-missing-index", frame,
                f"a Cohere `tool-calls-chunk` has no integer `index`; it was attributed to tool call {index}",
                once=("cohere-v1", index), choice=0, tool_call=index)
        if index not in self._known_keys:
            self._known_keys.add(index)
            self._tool_keys.append(index)
        return index

    def _tool_chunk(self, value: dict[str, Any], frame: int) -> None:
        delta = value.get("tool_call_delta")
        if type(delta) is not dict:
            return
        plan = delta.get("text")
        if type(plan) is str and plan:
            self.merger.append((0, "reasoning"), plan, frame)  # the tool plan: reasoning, not reply text
        name, parameters = delta.get("name"), delta.get("parameters")
        if name in EMPTY_VALUES and parameters in EMPTY_VALUES:
            return
        key = self._key(delta.get("index"), frame)
        path: ToolCallPath = (0, "tool", key)
        if name not in EMPTY_VALUES:
            self.merger.set_once((*path, "name"), name, frame)
        if type(parameters) is str:
            self._streamed_keys.add(key)
            self.merger.append((*path, "arguments"), parameters, frame)

    def _tool_calls(self, value: dict[str, Any], frame: int) -> None:
        """The calls WHOLE: the last word on each one, by position."""
        plan = value.get("text")
        if type(plan) is str and plan and not self.merger.text((0, "reasoning")) and value is not self._response:
            self.merger.append((0, "reasoning"), plan, frame)
        calls = value.get("tool_calls")
        for position, call in enumerate(calls if type(calls) is list else ()):
            if type(call) is not dict:
                continue
            key = self._tool_keys[position] if position < len(self._tool_keys) else self._key(position, frame)
            path: ToolCallPath = (0, "tool", key)
            if call.get("name") not in EMPTY_VALUES:
                self.merger.set_once((*path, "name"), call["name"], frame)
            parameters = call.get("parameters")
            if parameters is None:
                continue
            whole = dumps_arguments(parameters)
            if key not in self._streamed_keys:
                self.merger.replace_text((*path, "arguments"), [(whole, frame)])
                continue
            streamed = self.merger.text((*path, "arguments")) or ""
            try:
                same = json.loads(streamed) == parameters
            except ValueError:
                same = False
            if not same:
                self.merger.replace_text((*path, "arguments"), [(whole, frame)])
                self.report.diagnostic(
                    "done-mismatch", frame,
                    f"`tool-calls-generation` gives tool call {key}'s parameters as {compact_json(parameters, 60)}, "
                    f"its `tool-calls-chunk` fragments built {compact_json(streamed, 60)}; the whole value is kept",
                    once=("cohere-v1", key), source="tool-calls-generation", kept="done", tool_call=key)

    def _stream_end(self, value: dict[str, Any], frame: int) -> None:
        merger = self.merger
        finish = value.get("finish_reason")
        response = value.get("response")
        if type(response) is dict:
            self._response = response
            if finish in EMPTY_VALUES:
                finish = response.get("finish_reason")
            merger.set_once(("id",), response.get("generation_id"), frame)
            meta = response.get("meta")
            if type(meta) is dict and (meta.get("tokens") or meta.get("billed_units")):
                merger.replace(("usage",), meta, frame)
            if type(response.get("tool_calls")) is list and response["tool_calls"]:
                self._tool_calls(response, frame)
            self._final_text(response.get("text"), frame)
        if type(finish) is str and finish:
            merger.replace((0, "finish_reason"), finish, frame)
        if finish == "ERROR":
            self.in_stream_error(frame, "Cohere ended the generation with finish_reason 'ERROR'",
                                 raw=json.dumps(value, ensure_ascii=False)[:2000])
        for key in self._tool_keys:
            merger.parse((0, "tool", key, "arguments"), frame)
        self.terminate(frame)

    def _final_text(self, text: object, frame: int) -> None:
        """`response.text` is the whole reply: authoritative over the joined `text-generation` pieces."""
        if type(text) is not str:
            return
        joined = self._content.text()
        if text == joined or (not text and joined):
            return
        if not joined and self._tool_keys:
            # A reply that calls tools has its plan as `text`: reasoning, as the plan chunks are.
            if not self.merger.text((0, "reasoning")):
                self.merger.append((0, "reasoning"), text, frame)
            return
        self._content = self.merger.replace_text((0, "content"), [(text, frame)])
        if joined:
            self.report.diagnostic(
                "final-text-mismatch", frame,
                f"`stream-end`'s `response.text` ({len(text)} characters) differs from the joined `text-generation` "
                f"pieces ({len(joined)} characters); the response's text is kept, because Cohere makes it the "
                "whole reply; a client that joins the pieces shows the other text",
                field="content", final_length=len(text), joined_length=len(joined))

    def _unexpected(self, message: str, frame: int, once: object) -> None:
        self.report.diagnostic("unexpected-payload", frame, message, severity=Severity.INFO,
                               once=("cohere-v1", once))

    # -- end of stream -------------------------------------------------------

    def finish(self, last_frame: int) -> None:
        super().finish(last_frame)
        for key in self._tool_keys:
            self.check_arguments(0, key, last_frame)

    def normalise_usage(self, raw: object) -> dict[str, Any] | None:
        return cohere_usage(raw)

    def native(self) -> dict[str, Any] | None:
        """The `stream-end` response with its text and tool calls left out (the Result holds them), the
        citations and the search lists the stream sent; None when there is nothing."""
        out: dict[str, Any] = {}
        if self._response is not None:
            out["response"] = {key: value for key, value in self._response.items()
                               if key not in ("text", "tool_calls", "citations")}
        if self._citations:
            out["citations"] = list(self._citations)
        out.update(self._kept)
        return out or None

    @classmethod
    def export(cls, result: Result) -> dict[str, Any]:
        """The v1 `NonStreamedChatResponse`: text, generation_id, citations, tool_calls, finish_reason, meta."""
        native = result.native if type(result.native) is dict else {}
        choice = result.choice(0)
        out: dict[str, Any] = dict(native.get("response") or {})
        out["text"] = choice.content if choice is not None else ""
        if choice is not None and not choice.content and choice.tool_calls and choice.reasoning:
            out["text"] = choice.reasoning  # a reply that calls tools has its plan as `text`
        out.setdefault("generation_id", result.id)
        if native.get("citations"):
            out["citations"] = list(native["citations"])
        for name in _KEPT:
            if native.get(name) is not None and out.get(name) is None:
                out[name] = native[name]
        if choice is not None and choice.tool_calls:
            out["tool_calls"] = [{"name": call.name, "parameters": call.parsed if call.error is None
                                  else call.arguments} for call in choice.tool_calls]
        out["finish_reason"] = choice.finish_reason_raw if choice is not None else None
        if result.usage is not None:
            out["meta"] = result.usage.raw
        return out

    @classmethod
    def read_response(cls, value: object) -> dict[str, Any] | None:
        """A v1 `NonStreamedChatResponse`: `{text, generation_id, tool_calls, finish_reason, meta}`."""
        if not (isinstance(value, dict) and isinstance(value.get("text"), str) and "generation_id" in value
                and "choices" not in value and "message" not in value):
            return None
        calls = [call for call in value.get("tool_calls") or [] if isinstance(call, dict)]
        # With tool calls, `text` is the tool plan, which the fold keeps as reasoning (see `fold`).
        content, reasoning = ("", value["text"] or None) if calls else (value["text"], None)
        return {"content": content, "reasoning": reasoning,
                "tool_calls": [(call.get("name"), arguments_text(call.get("parameters"))) for call in calls],
                "finish_reason": value.get("finish_reason"), "usage": value.get("meta")}

    @classmethod
    def summarize(cls, value: object) -> str:
        if type(value) is not dict:
            return compact_json(value)
        kind = value.get("event_type")
        if kind == "text-generation":
            return f"text {compact_json(value.get('text'), 80)}"
        if kind == "tool-calls-chunk":
            delta = value.get("tool_call_delta")
            if type(delta) is dict:
                parts = [f"tool-calls-chunk [{delta.get('index')}]" if delta.get("index") is not None
                         else "tool-calls-chunk"]
                for name in ("name", "parameters", "text"):
                    if delta.get(name) not in EMPTY_VALUES:
                        parts.append(f"{'plan' if name == 'text' else name} {compact_json(delta[name], 60)}")
                return " ".join(parts)
        if kind == "tool-calls-generation":
            calls = value.get("tool_calls")
            names = [str(c.get("name")) for c in calls if type(c) is dict] if type(calls) is list else []
            return f"tool-calls-generation {', '.join(names)}".rstrip()
        if kind == "citation-generation":
            citations = value.get("citations")
            return f"citation-generation {len(citations) if type(citations) is list else 0} citation(s)"
        if kind == "stream-start":
            return f"stream-start {value.get('generation_id')}"
        if kind == "stream-end":
            return f"stream-end finish {value.get('finish_reason')}"
        return str(kind) if kind else compact_json(value)
