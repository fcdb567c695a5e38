"""Cloudflare Workers AI native (`/ai/run/{model}` with `stream: true`), reference §4.8.

SSE, data-only: `{"response": "<fragment>", "p": "<padding>"}`; APPEND
`response` to choice 0, ignore `p` (O15: side-channel padding), end on
`data: [DONE]` (terminal). Late chunks may add (observed, not documented;
cloudflare/ai `packages/workers-ai-provider/src/streaming.ts`):

- `usage {prompt_tokens, completion_tokens, total_tokens,
  prompt_tokens_details?}` (REPLACE),
- `tool_calls[]`, either OpenAI-like partials `{index, id, type, function
  {name, arguments}}` (id and name SET-ONCE, arguments APPEND, keyed by
  `index`; a trailing `{id: null, type: null, function: {name: null}}` closes
  them and is skipped) or flat whole calls `{name, arguments}` (arguments
  may be an object),
- a top-level `finish_reason`.

Claims `{"response": "<string>"}` only without `done`/`created_at`: those
are Ollama `/api/generate` lines. The OpenAI-compatible route is 4.1.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

from ...findings import Severity
from ...merge import EMPTY_VALUES
from .._base import (
    CONTENT_FILTER,
    ERROR,
    LENGTH,
    STOP,
    TOOL_CALLS,
    Dialect,
    arguments_text,
    compact_json,
    dumps_arguments,
)

if TYPE_CHECKING:
    from ...findings import Report
    from ...framing import FrameView
    from ...merge import Merger, ToolCallPath
    from ...result import Result

__all__ = ["Cloudflare"]


class Cloudflare(Dialect):
    name = "cloudflare"
    text_keys = ("response",)
    finish_reasons: ClassVar[dict[str, str]] = {
        "stop": STOP,
        "length": LENGTH,
        "model_length": LENGTH,
        "tool_calls": TOOL_CALLS,
        "content_filter": CONTENT_FILTER,
        "error": ERROR,
    }

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self._content = self.merger.buffer((0, "content"))
        self._tool_keys: list[int] = []
        self._by_index: dict[int, int] = {}
        self._by_id: dict[str, int] = {}

    @classmethod
    def claims(cls, value: object) -> bool:
        return (type(value) is dict and type(value.get("response")) is str
                and "done" not in value and "created_at" not in value and "type" not in value
                and "choices" not in value)

    def fold(self, value: object, frame: int) -> None:
        if type(value) is not dict:
            self._unexpected(f"expected a JSON object, got {type(value).__name__}; ignored", frame)
            return
        response = value.get("response")
        if type(response) is str:
            if response:
                self._content.add(response, frame)
            if len(value) == 1 or (len(value) == 2 and "p" in value):
                return  # the common chunk: a fragment and its padding
        elif response is not None:
            self._unexpected(f"`response` is a {type(response).__name__}, not a string; ignored", frame)
        usage = value.get("usage")
        if usage:
            self.merger.replace(("usage",), usage, frame)
        calls = value.get("tool_calls")
        if calls and type(calls) is list:
            self._tool_calls(calls, frame)
        finish = value.get("finish_reason")
        if type(finish) is str and finish:
            self.merger.replace((0, "finish_reason"), finish, frame)
        error = value.get("error")
        errors = value.get("errors")
        if error or (errors and type(errors) is list):
            self._error(error or errors, frame)

    def _tool_calls(self, calls: list[Any], frame: int) -> None:
        merger = self.merger
        for call in calls:
            if type(call) is not dict:
                continue
            function = call.get("function")
            partial = type(function) is dict
            source: dict[str, Any] = function if type(function) is dict else call
            name, arguments, call_id = source.get("name"), source.get("arguments"), call.get("id")
            if call_id in EMPTY_VALUES and name in EMPTY_VALUES and arguments in (None, ""):
                continue  # the null "finalisation" entry that closes streamed calls
            key = self._key(call, call_id, name, partial)
            path: ToolCallPath = (0, "tool", key)
            if call_id not in EMPTY_VALUES:
                merger.set_once((*path, "id"), call_id, frame)
            if name not in EMPTY_VALUES:
                held = merger.set_once((*path, "name"), name, frame)
                if held != name:
                    self.report.diagnostic(
                        "tool-call-identity-changed", frame,
                        f"tool call {key} changed its name from {held!r} to {name!r}; the first name is kept",
                        once=("cloudflare", key), choice=0, tool_call=key)
            if type(arguments) is str:
                merger.append((*path, "arguments"), arguments, frame)
            elif arguments is not None:
                merger.append((*path, "arguments"), dumps_arguments(arguments), frame)

    def _key(self, call: dict[str, Any], call_id: Any, name: Any, partial: bool) -> int:
        """Which call an entry belongs to: its `index`, else its id, else (for a partial) the last call."""
        index = call.get("index")
        if type(index) is int:
            key = self._by_index.get(index)
            if key is None:
                key = self._by_index[index] = self._new_key()
        elif type(call_id) is str and call_id not in EMPTY_VALUES and call_id in self._by_id:
            key = self._by_id[call_id]
        elif partial and self._tool_keys and call_id in EMPTY_VALUES and name in EMPTY_VALUES:
            key = self._tool_keys[-1]  # an argument fragment of the open call
        else:
            key = self._new_key()  # a flat entry is a whole call; a partial with an id or name starts one
        if type(call_id) is str and call_id not in EMPTY_VALUES:
            self._by_id.setdefault(call_id, key)
        return key

    def _new_key(self) -> int:
        key = len(self._tool_keys)
        self._tool_keys.append(key)
        return key

    def _error(self, error: object, frame: int) -> None:
        if type(error) is list and error and type(error[0]) is dict:
            first = error[0]
            message = first.get("message") or compact_json(first)
            code = first.get("code")
        elif type(error) is dict:
            message, code = error.get("message") or compact_json(error), error.get("code")
        else:
            message, code = (error if type(error) is str else compact_json(error)), None
        detail = f" ({code})" if code not in (None, "") else ""
        self.in_stream_error(frame, f"Workers AI sent an error inside the HTTP 200 stream{detail}: {message}",
                             raw=json.dumps(error, ensure_ascii=False))

    def _unexpected(self, message: str, frame: int) -> None:
        self.report.diagnostic("unexpected-payload", frame, message, severity=Severity.INFO, once="cloudflare")

    def done(self, frame: int) -> None:
        super().done(frame)
        for key in self._tool_keys:
            self.merger.parse((0, "tool", key, "arguments"), frame)

    def finish(self, last_frame: int) -> None:
        for key in self._tool_keys:
            self.check_arguments(0, key, last_frame)

    @classmethod
    def export(cls, result: Result) -> dict[str, Any]:
        """The REST envelope a non-streaming `/ai/run/{model}` call returns: `{result, success, errors, messages}`
        (all of it is in the Result: no native snapshot)."""
        choice = result.choice(0)
        body: dict[str, Any] = {"response": choice.content if choice else ""}
        if choice is not None and choice.tool_calls:
            body["tool_calls"] = [{**({"id": call.id} if call.id is not None else {}), "name": call.name,
                                   "arguments": call.parsed if call.error is None else call.arguments}
                                  for call in choice.tool_calls]
        if result.usage is not None:
            body["usage"] = result.usage.raw
        failed = [error.message for error in result.errors if error.code == "in-stream-error"]
        return {"result": body, "success": not failed, "errors": [{"message": m} for m in failed], "messages": []}

    @classmethod
    def read_response(cls, value: object) -> dict[str, Any] | None:
        """The REST envelope `export` writes: `{result: {response, tool_calls?, usage?}, success, ...}`."""
        if not (isinstance(value, dict) and "success" in value and isinstance(value.get("result"), dict)
                and isinstance(value["result"].get("response"), str)):
            return None
        body = value["result"]
        calls = [call for call in body.get("tool_calls") or () if isinstance(call, dict)]
        return {"content": body["response"], "reasoning": None, "finish_reason": body.get("finish_reason"),
                "tool_calls": [(call.get("name"), arguments_text(call.get("arguments"))) for call in calls],
                "tool_call_ids": [call.get("id") for call in calls], "usage": body.get("usage")}

    def normalise_usage(self, raw: object) -> dict[str, Any] | None:
        if type(raw) is not dict:
            return None
        input_tokens = raw.get("prompt_tokens")
        output_tokens = raw.get("completion_tokens")
        total = raw.get("total_tokens")
        if total is None and isinstance(input_tokens, int) and isinstance(output_tokens, int):
            total = input_tokens + output_tokens
        details = raw.get("prompt_tokens_details")
        cached = details.get("cached_tokens") if type(details) is dict else None
        return {"input_tokens": input_tokens, "output_tokens": output_tokens, "reasoning_tokens": None,
                "cache_read_tokens": cached, "total_tokens": total}

    @classmethod
    def summarize(cls, value: object) -> str:
        if type(value) is not dict:
            return compact_json(value)
        parts: list[str] = []
        if value.get("response"):
            parts.append(f"response {compact_json(value['response'], 80)}")
        calls = value.get("tool_calls")
        if calls and type(calls) is list:
            parts.append(f"tool_calls {compact_json(calls, 80)}")
        if value.get("usage"):
            parts.append("usage")
        if value.get("finish_reason"):
            parts.append(f"finish {value['finish_reason']}")
        if value.get("error") or value.get("errors"):
            parts.append(f"error {compact_json(value.get('error') or value.get('errors'), 100)}")
        return ", ".join(parts) or "(empty fragment)"
