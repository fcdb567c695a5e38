"""Ollama native streams: `POST /api/chat` and `POST /api/generate` (NDJSON).

Reference §4.5 and trap B3. One JSON object a line: `/api/chat` carries
`message.content`, `message.thinking` and `message.tool_calls`, `/api/generate`
carries `response` and `thinking` at the top level. Text APPENDs; a tool call
arrives WHOLE with its `arguments` as a JSON object, which is serialised as
the arguments string, and a copy of a call already seen (same `id`, or same
`function.index`, name and arguments) is dropped. The line with
`"done": true` is terminal and carries `done_reason` and the metrics
(`prompt_eval_count` is the input, `eval_count` the output; durations in
nanoseconds). `done_reason` stays `stop` when tools were called (B3), and is
`load`/`unload` for requests that only load or unload the model. An
`{"error": "..."}` line is an error sent inside the HTTP 200 stream.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from .._base import INCOMPLETE, LENGTH, STOP, Dialect, compact_json, dumps_arguments, fast_decoder
from .._calls import CallIndex, content_key

if TYPE_CHECKING:
    from ...findings import Report
    from ...framing import FrameView
    from ...merge import Merger, TextBuffer, ToolCallPath
    from ...result import Result
    from .fast import OllamaLine

_FAST_SHAPES = fast_decoder(f"{__package__}.fast", "decode_ollama_line")

__all__ = ["Ollama"]

_ROLE_AND_CONTENT = frozenset({"role", "content"})
_METRICS = ("total_duration", "load_duration", "prompt_eval_count", "prompt_eval_duration", "eval_count",
            "eval_duration")


class Ollama(Dialect):
    name = "ollama"
    text_keys = ("content", "response")
    terminal_hint = 'a line with `"done": true`'
    finish_reasons: ClassVar[dict[str, str]] = {
        "stop": STOP, "length": LENGTH, "load": INCOMPLETE, "unload": INCOMPLETE}

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self._content: TextBuffer = self.merger.buffer((0, "content"))
        self._identified = False
        #: "chat" (a `message` object) or "generate" (a top-level `response`).
        self._endpoint: str | None = None
        #: tool key -> (id, function.index, name, serialised arguments), for dedupe and export.
        self._tools: dict[int, tuple[str | None, int | None, str | None, str]] = {}
        #: The same calls by content, and each id's first key: what a new call repeats, found in O(log n).
        self._by_content = CallIndex()
        self._by_id: dict[Any, int] = {}
        self._created_at: Any = None
        self._done_line: dict[str, Any] | None = None
        self._logprobs: list[Any] = []
        self._remote: dict[str, Any] = {}
        self._role_seen = False
        self.fast_decoder = _FAST_SHAPES

    @classmethod
    def claims(cls, value: object) -> bool:
        return (type(value) is dict and type(value.get("done")) is bool
                and (type(value.get("message")) is dict or type(value.get("response")) is str))

    # -- the fold loop (once per line) ----------------------------------------------

    def fold(self, line: Any, frame: int) -> None:
        if type(line) is not dict:
            self.report.diagnostic(
                "unexpected-payload", frame,
                f"expected a JSON object (an Ollama chat or generate line), got {type(line).__name__}; ignored")
            return
        merger = self.merger
        if not self._identified:
            self._identified = merger.set_once(("model",), line.get("model"), frame) is not None
            merger.set_once(("created",), line.get("created_at"), frame)
            for name in ("remote_model", "remote_host"):
                if line.get(name):
                    self._remote.setdefault(name, line[name])
        created = line.get("created_at")
        if created is not None:
            self._created_at = created  # the final line's time is the non-streaming response's
        message = line.get("message")
        if type(message) is dict:
            self._endpoint = "chat"
            content = message.get("content")
            if content and type(content) is str:
                self._content.add(content, frame)
            # Only a message of role and content has nothing more for `_message` (a two-key
            # message may be content and thinking: the fast path keeps that thinking, so must this).
            if len(message) > 2 or not self._role_seen or not _ROLE_AND_CONTENT.issuperset(message):
                self._message(message, frame)
        else:
            response = line.get("response")
            if type(response) is str:
                self._endpoint = "generate"
                if response:
                    self._content.add(response, frame)
            thinking = line.get("thinking")
            if thinking and type(thinking) is str:
                merger.append((0, "reasoning"), thinking, frame)
            calls = line.get("tool_calls")
            if calls:
                self._tool_calls(calls, frame)
        if line.get("done") is True:
            self._done(line, frame)
            return
        logprobs = line.get("logprobs")
        if logprobs and type(logprobs) is list:
            self._logprobs.extend(logprobs)  # EXTEND
        error = line.get("error")
        if error:
            self._in_stream_error(error, frame)

    def fold_fast_run(self, pieces: Sequence[bytes], position: int, start: int, frame: int,
                      events: Sequence[bytes | None] | None) -> int:
        """Lines decoded by `fast` that only add text (content, response or thinking) once the
        model and role are known, folded as `fold` folds them, in one loop: a long reply is
        100k such lines of a few bytes, where a call a line costs a fifth of the fold. It stops
        at the last line (`done`) and anything else, which are `fold`'s."""
        if not self._identified:
            return 0
        decode, content, at = self.fast_decoder, self._content, position
        assert decode is not None
        role_seen, first = self._role_seen, frame - position
        texts: list[str] = []  # the content of the lines so far, and their frames, for one `extend`
        frames: list[int] = []
        endpoint = created_at = None  # the last line's, kept when the loop ends
        try:
            for at in range(position, len(pieces)):
                line: OllamaLine = decode(pieces[at][start:] if start else pieces[at])
                if line.done is True:
                    return at - position
                message = line.message
                if message is not None:
                    if not role_seen:
                        return at - position
                    endpoint = "chat"
                    text, thinking = message.content, message.thinking
                elif line.response is not None:
                    endpoint = "generate"
                    text, thinking = line.response, line.thinking
                else:
                    return at - position
                if line.created_at is not None:
                    created_at = line.created_at
                if text:
                    texts.append(text)
                    frames.append(first + at)
                if thinking:
                    content.extend(texts, frames)  # first, so the journal keeps the frames' order
                    texts, frames = [], []
                    self.merger.append((0, "reasoning"), thinking, first + at)
        except (ValueError, RecursionError):
            return at - position
        finally:
            content.extend(texts, frames)
            if endpoint is not None:
                self._endpoint = endpoint
            if created_at is not None:
                self._created_at = created_at
        return len(pieces) - position

    def _message(self, message: dict[str, Any], frame: int) -> None:
        if not self._role_seen:
            role = message.get("role")
            if role:
                self._role_seen = self.merger.set_once((0, "role"), role, frame) is not None
        thinking = message.get("thinking")
        if thinking and type(thinking) is str:
            self.merger.append((0, "reasoning"), thinking, frame)
        calls = message.get("tool_calls")
        if calls:
            self._tool_calls(calls, frame)

    def _tool_calls(self, calls: object, frame: int) -> None:
        for call in calls if type(calls) is list else [calls]:
            if type(call) is not dict:
                continue
            function = call.get("function")
            if type(function) is not dict:
                function = {}
            call_id = call.get("id") or None
            position = function.get("index")
            if type(position) is not int:
                position = None
            name = function.get("name") or None
            arguments = function.get("arguments")
            if name is None and arguments is None:
                self.report.diagnostic(
                    "unexpected-payload", frame, "a tool call with no function name or arguments; ignored",
                    once=("empty-call",))
                continue
            # B3: arguments is a JSON object; a string (older servers, proxies) is taken as sent.
            text = "" if arguments is None else arguments if type(arguments) is str else dumps_arguments(arguments)
            known = self._known_call(call_id, position, name, text)
            if known is not None:
                self._repeated_call(known, call_id, name, text, frame)
                continue
            key = len(self._tools)
            self._set_tool(key, (call_id, position, name, text))
            path: ToolCallPath = (0, "tool", key)
            self.merger.set_once((*path, "id"), call_id, frame)
            self.merger.set_once((*path, "name"), name, frame)
            self.merger.append((*path, "arguments"), text, frame)
            self.merger.parse((*path, "arguments"), frame)  # a whole call is a closed block

    def _known_call(self, call_id: str | None, position: int | None, name: str | None, text: str) -> int | None:
        """A call this one repeats: the same id; or, without ids, the same index, name and arguments.

        Some servers reuse index 0 for every call of a parallel batch, so an index
        alone never merges two calls that differ.
        """
        by_id = None if call_id is None else self._by_id.get(content_key(call_id))
        by_content = self._by_content.first(content_key(position, name, text), call_id is not None)
        if by_id is None or by_content is None:
            return by_content if by_id is None else by_id
        return min(by_id, by_content)

    def _set_tool(self, key: int, call: tuple[Any, Any, Any, str]) -> None:
        """Keep call `key` as (id, index, name, arguments), and index it by id and by content."""
        held = self._tools.get(key)
        if held is not None:
            self._by_content.remove(key, content_key(*held[1:]), held[0] is not None)
        self._tools[key] = call
        self._by_content.add(key, content_key(*call[1:]), call[0] is not None)
        if call[0] is not None:
            id_key = content_key(call[0])
            self._by_id[id_key] = min(key, self._by_id.get(id_key, key))

    def _repeated_call(self, key: int, call_id: str | None, name: str | None, text: str, frame: int) -> None:
        held_id, held_position, held_name, held_text = self._tools[key]
        path: ToolCallPath = (0, "tool", key)
        if held_text == text and (name is None or held_name in (None, name)):
            self.report.diagnostic(
                "tool-call-repeated", frame,
                f"tool call {key} ({held_name}) was sent again in frame {frame}; it is kept once. Ollama tool "
                "calls arrive whole: a client that appends each copy's arguments gets `{..}{..}`, one that lists "
                "each copy runs the tool twice",
                choice=0, tool_call=key, changed=False)
            return
        self._set_tool(key, (held_id or call_id, held_position, held_name or name, text))
        self.merger.replace_text((*path, "arguments"), [(text, frame)])
        self.merger.parse((*path, "arguments"), frame)
        self.report.diagnostic(
            "tool-call-repeated", frame,
            f"tool call {key} (id {held_id!r}) was sent again in frame {frame} with different arguments; the last "
            "version is kept",
            choice=0, tool_call=key, changed=True)

    def _done(self, line: dict[str, Any], frame: int) -> None:
        self.terminate(frame)
        self._done_line = line
        reason = line.get("done_reason")
        if reason and type(reason) is str:
            self.merger.replace((0, "finish_reason"), reason, frame)
        usage = {name: line[name] for name in _METRICS if name in line}
        if "prompt_eval_count" in usage or "eval_count" in usage:
            self.merger.replace(("usage",), usage, frame)
        logprobs = line.get("logprobs")
        if type(logprobs) is list:
            self._logprobs.extend(logprobs)
        if line.get("error"):
            self._in_stream_error(line["error"], frame)

    def _in_stream_error(self, error: object, frame: int) -> None:
        message = (error.get("message") or dumps_arguments(error)) if type(error) is dict else str(error)
        self.report.error(
            "in-stream-error", frame,
            f"the server sent an error inside the HTTP 200 stream: {message}",
            raw=dumps_arguments({"error": error}))
        self.merger.replace((0, "error"), str(message), frame)

    def normalise_usage(self, raw: object) -> dict[str, Any] | None:
        if type(raw) is not dict:
            return None
        input_tokens = raw.get("prompt_eval_count")
        output_tokens = raw.get("eval_count")
        input_tokens = input_tokens if type(input_tokens) is int else None
        output_tokens = output_tokens if type(output_tokens) is int else None
        total = None if input_tokens is None or output_tokens is None else input_tokens + output_tokens
        return {"input_tokens": input_tokens, "output_tokens": output_tokens, "reasoning_tokens": None,
                "cache_read_tokens": None, "total_tokens": total}

    # -- the non-streaming response -------------------------------------------------------

    def native(self) -> dict[str, Any]:
        """What the non-streaming response has beyond the Result: which endpoint, the last
        line's time, the done line's metrics and `context`, logprobs, the remote model and
        host, and each tool call's `function.index` (by key)."""
        out: dict[str, Any] = {"endpoint": self._endpoint, "created_at": self._created_at,
                               "done": self._done_line is not None}
        done = self._done_line
        if done is not None:
            metrics = {name: done[name] for name in _METRICS if name in done}
            if metrics:
                out["metrics"] = metrics
            if type(done.get("context")) is list:
                out["context"] = done["context"]
        if self._logprobs:
            out["logprobs"] = list(self._logprobs)
        if self._remote:
            out["remote"] = dict(self._remote)
        positions = [self._tools[key][1] for key in range(len(self._tools))]
        if any(position is not None for position in positions):
            out["function_indexes"] = positions
        return out

    @classmethod
    def export(cls, result: Result) -> dict[str, Any]:
        """The object the same request with `"stream": false` returns (`ChatResponse` or `GenerateResponse`)."""
        native = result.native if isinstance(result.native, dict) else {}
        choice = result.choice(0)
        content = choice.content if choice is not None else ""
        reasoning = choice.reasoning if choice is not None else None
        positions = native.get("function_indexes", [])
        calls = []
        for call in choice.tool_calls if choice is not None else ():
            position = positions[call.key] if 0 <= call.key < len(positions) else None
            out_call: dict[str, Any] = {"function": {
                "index": call.index if position is None else position,
                "name": call.name or "",
                "arguments": call.parsed if type(call.parsed) is dict else {}}}
            if call.id is not None:
                out_call = {"id": call.id, **out_call}
            calls.append(out_call)
        out: dict[str, Any] = {"model": result.model or ""}
        out.update(native.get("remote", {}))
        out["created_at"] = native.get("created_at")
        generate = native.get("endpoint") == "generate"
        if generate:
            out["response"] = content
            if reasoning is not None:
                out["thinking"] = reasoning
        else:
            message: dict[str, Any] = {"role": (choice.role if choice is not None else None) or "assistant",
                                       "content": content}
            if reasoning is not None:
                message["thinking"] = reasoning
            if calls:
                message["tool_calls"] = calls
            out["message"] = message
        out["done"] = bool(native.get("done"))
        if choice is not None and choice.finish_reason_raw is not None:
            out["done_reason"] = choice.finish_reason_raw
        if generate:
            if calls:
                out["tool_calls"] = calls
            if "context" in native:
                out["context"] = native["context"]
        out.update(native.get("metrics", {}))
        if native.get("logprobs"):
            out["logprobs"] = native["logprobs"]
        return out

    @classmethod
    def read_response(cls, value: object) -> dict[str, Any] | None:
        """Ollama's non-streaming `/api/chat` or `/api/generate` response."""
        if not (isinstance(value, dict) and "done" in value and ("message" in value or "response" in value)):
            return None
        message = value.get("message")
        if not isinstance(message, dict):
            message = {}
        calls = [call for call in message.get("tool_calls") or value.get("tool_calls") or [] if isinstance(call, dict)]
        return {
            "content": message.get("content") or value.get("response") or "",
            "reasoning": message.get("thinking") or value.get("thinking"),
            "tool_calls": [(call.get("function", {}).get("name"),
                            json.dumps(call.get("function", {}).get("arguments", {}), separators=(",", ":"),
                                       ensure_ascii=False)) for call in calls],
            "tool_call_ids": [call.get("id") for call in calls],
            "finish_reason": value.get("done_reason"),
            "usage": {key: value[key] for key in ("prompt_eval_count", "eval_count") if key in value} or None,
        }

    @classmethod
    def summarize(cls, value: object) -> str:
        if type(value) is not dict:
            return compact_json(value)
        out: list[str] = []
        if value.get("error"):
            out.append(f"error {compact_json(value['error'], 120)}")
        message = value.get("message")
        source = message if type(message) is dict else value
        for name in ("thinking", "content", "response"):
            text = source.get(name)
            if text and type(text) is str:
                out.append(f"{name} {compact_json(text, 80)}")
        calls = source.get("tool_calls")
        for call in calls if type(calls) is list else ():
            function = call.get("function") if type(call) is dict else None
            if type(function) is dict:
                out.append(f"tool {function.get('name')} {compact_json(function.get('arguments'), 60)}")
        if value.get("done") is True:
            reason = value.get("done_reason")
            out.append(f"done{f' ({reason})' if reason else ''}")
            if "eval_count" in value:
                out.append(f"eval {value.get('prompt_eval_count', '?')}+{value['eval_count']} tokens")
        return ", ".join(out) or "(empty line)"
