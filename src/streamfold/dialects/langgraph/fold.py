"""LangGraph / LangSmith Agent Server run streams (`POST /threads/{id}/runs/stream`, `/runs/stream`,
`GET /threads/{id}/runs/{run_id}/stream`), dialect `langgraph`.

SSE whose `event:` line says what the data is (langgraph-sdk `schema.StreamPart`, v2 `StreamPartV2`; the
payloads carry no type of their own): `metadata` (`{run_id, attempt}`: the Result's id), one event per
stream mode (`values`, `updates`, `messages`, `custom`, `debug`, `events`, `tasks`, `checkpoints`,
`tools`, `lifecycle`), `error` (`{error, message}`: an in-stream error) and `end`. A subgraph's event
names its namespace after a bar: `updates|parent:<task id>`.

The reply is built from the `messages` events (stream mode "messages-tuple"): `[message_chunk,
metadata]`, the chunks of one message merged by its id as LangChain adds `AIMessageChunk`s (`merge`):
text content (or the text blocks of a list content) APPENDs to the reply, thinking and reasoning blocks
to the reasoning, `tool_call_chunks` are tool calls by (message, index), their `args` APPENDed and
parsed at the end; `usage_metadata` is summed, `response_metadata`'s `finish_reason` / `stop_reason`
(the provider's) is the finish reason. Every AI message of the run is part of the reply (a tool loop's
first message with its calls, the last with its answer), as a run of several turns is one reply
elsewhere; tool messages are context. The legacy stream mode "messages" sends `messages/metadata`, then
`messages/partial` (the whole message so far, each time: the new tail is what APPENDs) and
`messages/complete`.

Lanes. A namespace is a lane: the event's (`messages|ns`), or for a `messages` event without one, the
message's `langgraph_checkpoint_ns` less its last part (the node's own task); the root graph's lane is
`root` (its namespace is empty). `fold(..., lane=)` names the one followed; by default the root graph,
whose messages are the run's answer, a subgraph's being its inner work. The other lanes are listed in one
`langgraph-other-lanes` finding and the export.

The end (trap B9). The Agent Server sends no end event: it closes the stream when the run is done (the SDK
says that a run's end and a proxy's cut look the same to it, and asks the run). So the close of the
stream after a whole event is the end (a cut inside an event is the framing's to say), and an `end`
event, which the SDK also takes as the end, ends it too. Other modes are context, kept in the export.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from ..._text import common_prefix_length
from ...findings import Report, Severity
from ...framing import FrameView
from ...merge import Merger, TextBuffer
from .._base import CONTENT_FILTER, LENGTH, STOP, TOOL_CALLS, Dialect, compact_json, dumps_arguments
from .context import Context, is_metadata_tuple, is_run_metadata, message_type, sum_usage
from .merge import LC_PREFIXES, MergeConflictError, merge_chunk

__all__ = ["EVENTS", "ROOT", "LangGraph"]

#: Stream modes whose data is context only (kept for the export, never the reply).
_CONTEXT = frozenset({"values", "updates", "custom", "debug", "events", "tasks", "checkpoints", "tools",
                      "lifecycle", "feedback", "messages/metadata"})
#: Every event name the dialect knows (less a namespace): the SDK's stream modes and v2 part types are held
#: to it at test time. (The request's mode "messages-tuple" streams `messages` events, its mode "messages"
#: the `messages/*` ones.)
EVENTS = _CONTEXT | {"metadata", "messages", "messages/partial", "messages/complete", "error", "end"}
_AI = frozenset({"AIMessageChunk", "ai"})
#: The root graph's lane id (its namespace is empty, and a lane's id is not).
ROOT = "root"
#: A chunk's fields LangChain derives from the others (`tool_calls` parsed from `tool_call_chunks`): not merged.
_DERIVED = frozenset({"tool_calls", "invalid_tool_calls"})
#: What the first chunk is added to, so that the merge of one chunk is that chunk as LangChain makes it.
_EMPTY_CHUNK: dict[str, Any] = {"content": "", "additional_kwargs": {}, "response_metadata": {}, "tool_call_chunks": [],
                                "usage_metadata": None, "id": None, "chunk_position": None}


class LangGraph(Dialect):
    name = "langgraph"
    terminal_hint = "the end of the run (the server closes the stream; some send an `end` event)"
    expects_end = False
    done_is_terminal = False
    finish_reasons: ClassVar[dict[str, str]] = {
        "stop": STOP, "end_turn": STOP, "STOP": STOP, "stop_sequence": STOP, "length": LENGTH,
        "max_tokens": LENGTH, "MAX_TOKENS": LENGTH, "tool_calls": TOOL_CALLS, "tool_use": TOOL_CALLS,
        "content_filter": CONTENT_FILTER, "SAFETY": CONTENT_FILTER}

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self._content = self.merger.buffer((0, "content"))
        self._reasoning = self.merger.buffer((0, "reasoning"))
        #: The followed lane's messages in arrival order by key (AI messages merged, the others whole).
        self._messages: dict[str, dict[str, Any]] = {}
        #: Every id an AI message came with -> its key.
        self._aliases: dict[str, str] = {}
        #: The last AI message's key and the (node, step) that sent it.
        self._open: tuple[str, object] | None = None
        #: (message key, tool call chunk) -> the Result's tool call key.
        self._calls: dict[tuple[str, Any], int] = {}
        self._others: dict[str, int] = {}
        self._context = Context()

    @classmethod
    def claims(cls, value: object) -> bool:
        return is_run_metadata(value) or is_metadata_tuple(value)

    @property
    def _lane(self) -> str:
        """The namespace followed ("ns1|ns2"; "" the root graph, the default)."""
        return "" if self.lane in (None, ROOT) else str(self.lane)

    # -- events ----------------------------------------------------------------

    def fold(self, value: object, frame: int) -> None:
        name = self.event_name(frame) or ""
        mode, _, namespace = name.partition("|")
        if not mode:  # a capture without its `event:` lines: what the payload's shape says
            mode = "messages" if is_metadata_tuple(value) else "metadata" if is_run_metadata(value) else ""
        if mode == "messages":
            self._tuple(value, namespace, frame)
        elif mode in ("messages/partial", "messages/complete"):
            if self._follows(namespace, frame):
                for message in value if type(value) is list else ():
                    if type(message) is dict:
                        self._whole(message, frame, complete=mode == "messages/complete")
        elif mode == "metadata":
            if is_run_metadata(value):
                assert type(value) is dict
                self.merger.set_once(("id",), value["run_id"], frame)
        elif mode == "error":
            self._error(value, frame)
        elif mode == "end":
            self.terminate(frame)
        else:
            if mode not in _CONTEXT:
                self.report.diagnostic(
                    "unexpected-payload", frame, f"an event {name or '(unnamed)'!r} that names no LangGraph stream "
                    f"mode ({compact_json(value, 80)}); kept as context", severity=Severity.INFO,
                    once=("langgraph", mode))
            self._context.add(mode or "(unnamed)", value, followed=namespace == self._lane)

    def _follows(self, namespace: str, frame: int) -> bool:
        lane = namespace or ROOT
        self.saw_lane(lane, "subgraph" if namespace else "graph", frame)
        if namespace == self._lane:
            self.followed_lane = lane
            return True
        self._others.setdefault(lane, frame)
        return False

    def _tuple(self, value: object, namespace: str, frame: int) -> None:
        if not is_metadata_tuple(value):
            self.report.diagnostic("unexpected-payload", frame, "a `messages` event that is no [message, metadata] "
                                   f"pair ({compact_json(value, 80)}); ignored", once=("langgraph", "tuple"))
            return
        assert type(value) is list
        message, metadata = value
        if not namespace:  # without `subgraphs`, the event names no namespace: the message's task does
            checkpoint = metadata.get("langgraph_checkpoint_ns")
            namespace = checkpoint.rpartition("|")[0] if type(checkpoint) is str else ""
        if self._follows(namespace, frame):
            self._chunk(message, (metadata.get("langgraph_node"), metadata.get("langgraph_step")), frame)

    def _error(self, value: object, frame: int) -> None:
        error = value if type(value) is dict else {}
        kind, message = error.get("error"), error.get("message")
        text = f"{kind}: {message}" if type(kind) is str and type(message) is str else compact_json(value, 300)
        self.in_stream_error(frame, f"the run failed: {text}", raw=json.dumps(value, ensure_ascii=False)[:2000])
        self.terminate(frame)

    # -- messages of the messages-tuple mode ------------------------------------

    def _key(self, chunk: dict[str, Any], step: object) -> str:
        """The message a chunk belongs to (trap B10): by its id; a LangChain-made id (`lc_run-…`) and a provider's id
        are one message when they come from the same node and step one after the other (langchain-anthropic
        gives the provider's id to the first chunk only)."""
        chunk_id = chunk.get("id")
        if type(chunk_id) is not str or not chunk_id:
            return self._open[0] if self._open is not None else f"#{len(self._messages)}"
        if chunk_id in self._aliases:
            return self._aliases[chunk_id]
        made = chunk_id.startswith(LC_PREFIXES)
        if self._open is not None and self._open[1] == step:
            # One id of each kind a message: a second LangChain id is another model call of the same step.
            named = [alias for alias, key in self._aliases.items() if key == self._open[0]]
            if not any(alias.startswith(LC_PREFIXES) == made for alias in named):
                self._aliases[chunk_id] = self._open[0]
                return self._open[0]
        self._aliases[chunk_id] = chunk_id
        return chunk_id

    def _chunk(self, chunk: dict[str, Any], step: object, frame: int) -> None:
        if message_type(chunk) not in _AI:
            self._messages[str(chunk.get("id") or f"#{len(self._messages)}")] = chunk
            return
        key = self._key(chunk, step)
        self._open = (key, step)
        known = self._messages.get(key)
        if known is None:
            known = {**{name: item for name, item in chunk.items() if name not in _DERIVED}, **_EMPTY_CHUNK,
                     "content": [] if type(chunk.get("content")) is list else ""}
        try:
            self._messages[key] = merge_chunk(known, chunk)
        except MergeConflictError as conflict:
            self.report.diagnostic("langgraph-merge-conflict", frame, f"a chunk of message {key!r} cannot be added "
                                   f"as LangChain adds them ({conflict}; LangChain raises): its text and calls are "
                                   "folded, the merged message kept as it was", message_id=key)
            self._messages[key] = known
        self.merger.set_once((0, "role"), "assistant", frame)
        content = chunk.get("content")
        for block in [content] if type(content) is str else content if type(content) is list else ():
            if type(block) is str:
                self._content.add(block, frame)
            elif type(block) is dict and block.get("type") == "text":
                self._add(self._content, block.get("text"), frame)
            elif type(block) is dict and block.get("type") in ("thinking", "reasoning"):
                self._add(self._reasoning, block.get(block["type"]), frame)
        calls = chunk.get("tool_call_chunks")
        for position, call in enumerate(calls if type(calls) is list else ()):
            if type(call) is dict:
                index = call.get("index")
                # As merge_lists: chunks of one index (ids agreeing) are one call; one without an index its own.
                same = (key, index if type(index) is int else ("unindexed", frame, position))
                tool = self._calls.setdefault(same, len(self._calls))
                self._call(tool, call.get("id"), call.get("name"), call.get("args"), frame)
        self._ended_message(chunk, frame)

    def _call(self, tool: int, call_id: object, name: object, arguments: Any, frame: int) -> None:
        self.merger.set_once((0, "tool", tool, "id"), call_id, frame)
        self.merger.set_once((0, "tool", tool, "name"), name, frame)
        self.merger.append((0, "tool", tool, "arguments"), arguments, frame)

    def _ended_message(self, message: dict[str, Any], frame: int) -> None:
        """What a chunk or a message says of the reply as a whole: the usage (summed over the AI messages),
        the provider's finish reason and model name."""
        usage = sum_usage([message.get("usage_metadata") for message in self._messages.values()
                            if message_type(message) in _AI])
        if usage:
            self.merger.replace(("usage",), usage, frame)
        metadata = message.get("response_metadata")
        if type(metadata) is dict:
            for name in ("finish_reason", "stop_reason"):
                if type(metadata.get(name)) is str and metadata[name]:
                    self.merger.replace((0, "finish_reason"), metadata[name], frame)
            if type(metadata.get("model_name")) is str:
                self.merger.replace(("model",), metadata["model_name"], frame)

    @staticmethod
    def _add(buffer: TextBuffer, text: object, frame: int) -> None:
        if type(text) is str and text:
            buffer.add(text, frame)

    # -- messages of the legacy messages mode -----------------------------------

    def _whole(self, message: dict[str, Any], frame: int, *, complete: bool) -> None:
        """A `messages/partial` (the message so far) or `messages/complete` message: its text past what the
        message said before APPENDs; its tool calls are taken whole from the complete one."""
        if message_type(message) not in _AI:
            self._messages[str(message.get("id") or f"#{len(self._messages)}")] = message
            return
        key = str(message.get("id") or f"#{len(self._messages)}")
        was = _text_of(self._messages.get(key, {}).get("content"))
        now = _text_of(message.get("content"))
        if not now.startswith(was):
            self.report.diagnostic(
                "langgraph-partial-rewritten", frame, f"message {key!r} says its text anew, not as the text so far "
                "with more after it: the text folded before stays, what follows the common start is added",
                message_id=key)
        self._add(self._content, now[common_prefix_length(was, now):], frame)
        self.merger.set_once((0, "role"), "assistant", frame)
        calls = message.get("tool_calls")
        for position, call in enumerate(calls if complete and type(calls) is list else ()):
            if type(call) is dict:
                tool = self._calls.setdefault((key, position), len(self._calls))
                if not self.merger.text((0, "tool", tool, "arguments")):
                    self._call(tool, call.get("id"), call.get("name"), dumps_arguments(call.get("args", {})), frame)
        self._messages[key] = message
        self._ended_message(message, frame)

    # -- the end ---------------------------------------------------------------

    def finish(self, last_frame: int) -> None:
        super().finish(last_frame)
        for key in self._calls.values():
            self.check_arguments(0, key, last_frame)
        if len(self.frames) and not self.failed and self.frames.terminated(last_frame):
            self.finish_reply()  # the server closed the stream after a whole event: the run is over
        if self._others and self.followed_lane is not None:  # else `lane-not-found` lists them
            named = ", ".join(f"{lane} (from frame {at})" for lane, at in self._others.items())
            self.report.diagnostic(
                "langgraph-other-lanes", min(self._others.values()),
                f"messages of {len(self._others)} more graph namespace(s) than {self.followed_lane}, the one "
                f"folded: {named}; listed as frames but not folded (`--lane ID` folds another)",
                lanes=list(self._others))

    def normalise_usage(self, raw: object) -> dict[str, Any] | None:
        if type(raw) is not dict:
            return None
        inputs, outputs = raw.get("input_token_details"), raw.get("output_token_details")
        return {"input_tokens": raw.get("input_tokens"), "output_tokens": raw.get("output_tokens"),
                "reasoning_tokens": outputs.get("reasoning") if type(outputs) is dict else None,
                "cache_read_tokens": inputs.get("cache_read") if type(inputs) is dict else None,
                "total_tokens": raw.get("total_tokens")}

    def native(self) -> dict[str, Any] | None:
        """The followed lane's messages (AI messages as LangChain adds their chunks, the others whole), the
        context modes (the last `values`, the nodes of `updates`, `custom` data, a count of every mode) and
        the lanes."""
        out = self._context.snapshot()
        out["messages"] = list(self._messages.values())
        out["lane"] = self._lane or ROOT
        if self._others:
            out["other_lanes"] = list(self._others)
        return out


def _text_of(content: object) -> str:
    """A message content's text: the string, or its text blocks joined."""
    if type(content) is str:
        return content
    blocks = content if type(content) is list else ()
    return "".join(block if type(block) is str else str(block.get("text") or "") if type(block) is dict
                   and block.get("type") == "text" else "" for block in blocks)

