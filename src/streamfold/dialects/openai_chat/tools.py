"""Tool-call identity in OpenAI chat streams: which call a fragment belongs to.

Reference §4.1, traps O4-O7 and B4: a fragment is keyed by its `index` when it
has one, else by its id, else as the continuation of the open call (O4); an id,
type and name repeated on every fragment (O5); an id that changes between the
fragments of one call (O6), or a used index that starts a new call (O7);
Mistral's literal "null" ids and object-valued arguments (B4); and the legacy
`function_call` delta.
"""

from __future__ import annotations

from typing import Any

from ..._json import loads
from ...findings import Severity
from ...merge import EMPTY_VALUES, TextBuffer, ToolCallPath
from .._base import Dialect, dumps_arguments
from .extras import StreamExtras

__all__ = ["ChoiceState", "ToolCallFolding"]

#: What an id or a name is when there is none (Mistral sends the string "null").


def _whole(function: dict[str, Any]) -> bool:
    """A named call whose arguments are one complete JSON object: a string, or an object (B4)."""
    if function.get("name") in EMPTY_VALUES:
        return False
    arguments = function.get("arguments")
    if type(arguments) is dict:
        return True
    if type(arguments) is not str or not arguments.strip():
        return False
    try:
        return type(loads(arguments)) is dict
    except ValueError:
        return False


class ChoiceState:
    """Per-choice bookkeeping the merger does not need: tool-call identity."""

    __slots__ = ("_key_set", "_next_key", "arguments", "content", "finish_frame", "last_tool", "legacy_call",
                 "tool_by_id", "tool_by_index", "tool_keys")

    def __init__(self, content: TextBuffer) -> None:
        #: The choice's content buffer and its tool calls' argument buffers (by key), held for the hot path.
        self.content = content
        self.arguments: dict[int, TextBuffer] = {}
        self.tool_by_index: dict[int, int] = {}
        self.tool_by_id: dict[str, int] = {}
        #: The tool-call keys in the order the calls opened; `_key_set` holds the same keys and
        #: `_next_key` is one past the largest, so a new call costs O(1) however many came before.
        self.tool_keys: list[int] = []
        self._key_set: dict[int, None] = {}  # a dict: an empty one costs 64 bytes, a set 216
        self._next_key = 0
        self.last_tool: int | None = None
        self.finish_frame: int | None = None
        self.legacy_call: int | None = None

    def new_tool(self, preferred: int) -> int:
        """The key of a new tool call: `preferred` (the vendor's index) unless taken, else one past the largest."""
        key = preferred if preferred >= 0 and preferred not in self._key_set else self._next_key
        self.tool_keys.append(key)
        self._key_set[key] = None
        if key >= self._next_key:
            self._next_key = key + 1
        return key


class ToolCallFolding(Dialect):
    """The tool-call fragments of a chat delta, folded into (choice, "tool", key, ...) paths."""

    _extras: StreamExtras

    def _tool_calls(self, index: int, state: ChoiceState, calls: list[Any], frame: int) -> None:
        merger = self.merger
        for call in calls:
            if type(call) is not dict:
                continue
            function = call.get("function")
            if type(function) is not dict:
                function = {}
            call_id = self.string(call.get("id"), frame, f"a tool call's `id` in choice {index}")
            name = self.string(function.get("name"), frame, f"a tool call's `name` in choice {index}")
            key = self._tool_key(index, state, call_id, call.get("index"), name, function, frame)
            path: ToolCallPath = (index, "tool", key)
            if call_id not in EMPTY_VALUES:
                merger.set_once((*path, "id"), call_id, frame)
            if name not in EMPTY_VALUES:
                held = merger.set_once((*path, "name"), name, frame)
                if held != name:
                    self.report.diagnostic(
                        "tool-call-identity-changed", frame,
                        f"tool call {key} of choice {index} changed its name from {held!r} to {name!r}; "
                        f"the first name is kept",
                        once=(index, key, "name"), choice=index, tool_call=key)
            if "extra_content" in call:
                self._extras.tool_extra(index, key, call["extra_content"])  # Gemini's thought_signature
            arguments = function.get("arguments")
            if type(arguments) is str:
                merger.append((*path, "arguments"), arguments, frame)
            elif arguments is not None:
                # B4: Mistral may send the arguments as a JSON object, whole.
                merger.append((*path, "arguments"), dumps_arguments(arguments), frame)

    def _tool_key(self, index: int, state: ChoiceState, call_id: str | None, position: Any,
                  name: str | None, function: dict[str, Any], frame: int) -> int:
        """Which tool call a fragment belongs to: by its index, else inferred (O4-O7)."""
        if call_id in EMPTY_VALUES:
            call_id = None
        if position is not None and type(position) is not int:
            self.wrong_type(position, frame, f"a tool call's `index` in choice {index}", "an integer",
                            "the fragment is placed as if it had none")
        if type(position) is int:
            key = state.tool_by_index.get(position)
            if key is None:
                key = state.tool_by_index[position] = state.new_tool(position)
            elif call_id is not None:
                held = self.merger.get((index, "tool", key, "id"))
                if held is not None and held != call_id:
                    key = self._identity_changed(index, state, key, position, held, call_id, frame)
        else:
            key = self._infer_tool_key(index, state, call_id, name)
            if call_id is not None and name not in EMPTY_VALUES and _whole(function):
                # Mistral's (and Gemini's OpenAI layer's) normal shape: keyed by its id, nothing is ambiguous.
                self.report.diagnostic(
                    "tool-call-missing-index", frame,
                    f"tool call {key} of choice {index} came whole in one delta with its id and no `index` (the "
                    "normal shape of Mistral and of Gemini's OpenAI layer); it is keyed by its id. The openai "
                    "SDK's accumulator raises on a missing index",
                    severity=Severity.INFO, once=(index, "whole"), choice=index, tool_call=key)
            else:
                self.report.diagnostic(
                    "tool-call-missing-index", frame,
                    f"a tool-call fragment of choice {index} has no `index`; it was attributed to tool call {key} "
                    "(by its id, else as the continuation of the open call). Clients that default the index to 0 "
                    "merge separate calls; the openai SDK raises here",
                    once=(index, key), choice=index, tool_call=key)
        if call_id is not None:
            state.tool_by_id.setdefault(call_id, key)
        state.last_tool = key
        return key

    def _infer_tool_key(self, index: int, state: ChoiceState, call_id: str | None, name: str | None) -> int:
        if call_id is not None:
            known = state.tool_by_id.get(call_id)
            return known if known is not None else state.new_tool(len(state.tool_keys))
        last = state.last_tool
        if last is not None:
            held_name = self.merger.get((index, "tool", last, "name"))
            starts_new_call = name not in EMPTY_VALUES and held_name is not None and (
                name != held_name or self._arguments_complete(index, last))
            if not starts_new_call:
                return last
        return state.new_tool(len(state.tool_keys))

    def _identity_changed(self, index: int, state: ChoiceState, key: int, position: int, held: str, new: str,
                          frame: int) -> int:
        if self._arguments_complete(index, key):
            fresh = state.tool_by_index[position] = state.new_tool(-1)
            self.report.diagnostic(
                "tool-call-identity-changed", frame,
                f"tool call index {position} of choice {index} got a new id {new!r} (was {held!r}) after its "
                f"arguments were complete: folded as a new tool call {fresh}. A client that keys by index "
                "alone glues both calls' arguments together",
                choice=index, tool_call=fresh, previous_id=held, id=new)
            return fresh
        self.report.diagnostic(
            "tool-call-identity-changed", frame,
            f"tool call index {position} of choice {index} changed its id from {held!r} to {new!r} mid-call; "
            "fragments are keyed by index, so they stay one call with the first id",
            once=(index, key, "id"), choice=index, tool_call=key, previous_id=held, id=new)
        return key

    def _arguments_complete(self, index: int, key: int) -> bool:
        buffer = self.merger.texts.get((index, "tool", key, "arguments"))
        if buffer is None or not buffer.length:
            return False
        parsed = self.merger.parse((index, "tool", key, "arguments"), buffer.last_frame)
        return parsed.error is None and parsed.recovery is None

    def _legacy_function_call(self, index: int, state: ChoiceState, call: dict[str, Any], frame: int) -> None:
        if state.legacy_call is None:
            state.legacy_call = state.new_tool(len(state.tool_keys))
        path: ToolCallPath = (index, "tool", state.legacy_call)
        self.merger.set_once((*path, "name"), call.get("name"), frame)
        self.merger.append((*path, "arguments"), call.get("arguments"), frame)
