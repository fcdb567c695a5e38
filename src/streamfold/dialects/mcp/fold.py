"""MCP Streamable HTTP (spec 2025-06-18, 2025-11-25 and 2026-07-28, "Transports"): the SSE stream a
server answers a POST with, each event's data one JSON-RPC 2.0 message.

Strategy. A message is sorted by its members, as JSON-RPC says: `method` with `id` is a request
from the server (sampling, elicitation), `method` alone a notification, `id` with `result` or
`error` a response. The POST carried one request (batching left the spec in 2025-06-18), so the
first response is the reply: its `result` is kept whole in the native snapshot, and for a
`tools/call` result (`content` is a list) the reply text is the text content joined by "\\n",
`structuredContent` is kept and `isError: true` makes the finish reason `error`. A JSON-RPC
error response, and an `event: error` frame, are in-stream errors. Notifications (progress, log
messages, anything else) are kept in their order. The reply ends the stream as the official
client reads it (`mcp/client/streamable_http.py` stops at the first response); later frames
still fold, so a second response is seen and reported.

Priming events (an `id:` and empty data, sent first so a client can resume) never reach here:
the fold skips empty data with an `empty-data` note, the trap of clients that JSON-parse every
data field (modelcontextprotocol/python-sdk#1672, microsoft/vscode#309104). When the stream is
cut before its response, the last `id:` it carried says where a client resumes.

Findings for protocol violations: a message without `"jsonrpc": "2.0"`, a response to an id
that is not the request's, a batch (a JSON array of messages), an SSE event the SDK's reader
skips (any name but `message`).

2026-07-28 (the stream's own messages say so: a result's `resultType`, which its servers MUST send,
or a `subscriptions/listen` stream's subscription id in `_meta`) changed what a stream may be:
sessions and `Last-Event-ID` resumption are gone, so a cut stream is not resumable (the client sends
the request again; `not-resumable`, not `resumable-cut`); a server no longer sends requests on a POST's
stream (`request-on-stream`) but answers an `InputRequiredResult` (`resultType: "input_required"`), a
finish of its own (`input_required`, the reply incomplete until the client answers and retries); and a
`subscriptions/listen` request's response is a long-lived stream of change notifications, acknowledged
first and ended by a `SubscriptionsListenResult` only when the server closes it gracefully. A stream
without such a message is read by the rules of the version the request's `MCP-Protocol-Version` header
names, when the capture has its request (a HAR, a stored capture), else by the earlier versions' rules. Its
`Mcp-Method` header names the method answered (`subscriptions/listen`: a listen stream); a 2026-07-28
request without it (or without `Mcp-Name` where the method names a tool, resource or prompt) is one a
server must refuse: `mcp-header-missing`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from ..._json import COMPLETE_SHALLOW, loads_utf8
from ...framing import SSEParser
from .._base import ERROR, INCOMPLETE, STOP, Dialect, compact_json, fast_decoder

if TYPE_CHECKING:
    from ...findings import Report
    from ...framing import FrameView
    from ...merge import Merger
    from .fast import Notification

__all__ = ["MCP"]

_FAST_SHAPES = fast_decoder(f"{__package__}.fast", "decode_notification")
#: `event:` lines the mcp SDK's reader takes (a frame without one is a `message` too).
_MESSAGE_EVENTS = (None, b"event: message", b"event:message")

#: A result's raw finish reasons: a result, a tool result with `isError: true`, or (2026-07-28) a request
#: for input before the result.
RESULT, TOOL_ERROR, INPUT_REQUIRED = "result", "isError", "input_required"
#: The protocol version a stream's own messages can show, and where a listen stream names its subscription.
MODERN = "2026-07-28"
#: A protocol version as MCP spells them (a date): compared as text.
_VERSION = re.compile(r"\d{4}-\d{2}-\d{2}")
#: The methods whose target (`params.name` or `params.uri`) a 2026-07-28 request repeats in `Mcp-Name`.
_NAMED_METHODS = frozenset({"tools/call", "resources/read", "prompts/get"})
_SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"


def _subscription(value: dict[str, Any]) -> bool:
    """Does a message carry a listen stream's subscription id (in its params' or result's `_meta`)?"""
    body = value.get("params") if "method" in value else value.get("result")
    meta = body.get("_meta") if type(body) is dict else None
    return type(meta) is dict and _SUBSCRIPTION in meta


def _is_message(value: object) -> bool:
    return type(value) is dict and value.get("jsonrpc") == "2.0" and (
        "method" in value or "result" in value or "error" in value)


def _is_a2a_result(value: dict[str, Any]) -> bool:
    """A2A streams JSON-RPC too: its results are tasks, messages and task events, tagged by `kind`
    (A2A 0.3) or the one key of a `StreamResponse` (A2A 1.0: `{"task": {...}}`, `{"statusUpdate": ...}`)."""
    result = value.get("result")
    if type(result) is not dict:
        return False
    if "kind" in result or "taskId" in result:
        return True
    # An MCP task result is `{"task": {"taskId", "status": "working"}}`: an A2A task's status is an object.
    ((key, body),) = result.items() if len(result) == 1 else ((None, None),)
    if type(body) is not dict:
        return False
    return ((key in ("task", "statusUpdate") and type(body.get("status")) is dict)
            or (key == "artifactUpdate" and type(body.get("artifact")) is dict)
            or (key == "message" and "messageId" in body and "parts" in body))


class MCP(Dialect):
    name = "mcp"
    terminal_hint = "the JSON-RPC response to the request"
    done_is_terminal = False
    text_keys = ("text",)
    finish_reasons: ClassVar[dict[str, str]] = {RESULT: STOP, TOOL_ERROR: ERROR, INPUT_REQUIRED: INCOMPLETE}

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self._content = self.merger.buffer((0, "content"))
        self._reply_id: object = None
        self._reply: dict[str, Any] | None = None
        self._reply_frame: int | None = None
        #: In their order: each an entry, or (method, its params as JSON) when it came the fast way:
        #: a tuple of a str and bytes, which the garbage collector stops tracking (see `fast`).
        self._notifications: list[dict[str, Any] | tuple[str, bytes]] = []
        self._requests: list[dict[str, Any]] = []
        #: The frame of each request the server sent (the native snapshot is frame-free).
        self._request_frames: list[int] = []
        #: MODERN once a message shows the stream is 2026-07-28's; `_listen`: a subscriptions/listen stream.
        self.version: str | None = None
        self._listen = False
        self.fast_decoder = _FAST_SHAPES

    @classmethod
    def claims(cls, value: object) -> bool:
        if type(value) is list:
            return bool(value) and all(_is_message(item) for item in value) and not any(
                _is_a2a_result(item) for item in value)
        return _is_message(value) and not _is_a2a_result(value)  # type: ignore[arg-type]

    def fold(self, value: object, frame: int) -> None:
        if type(value) is list:
            self.report.diagnostic(
                "batch-not-allowed", frame,
                f"frame {frame} holds a JSON-RPC batch of {len(value)} messages: MCP removed batching in "
                "2025-06-18, and the official client reads one message an event (it fails on an array); "
                "each message is folded", count=len(value))
            for item in value:
                self._message(item, frame)
            return
        self._message(value, frame)

    def fold_fast_run(self, pieces: Sequence[bytes], position: int, start: int, frame: int,
                      events: Sequence[bytes | None] | None) -> int:
        """Notifications decoded by `fast`, in frames the mcp SDK reads (no event name, or `message`),
        kept as `_method` keeps them, in one loop; their params unread until `native`. It stops at
        params that are not UTF-8, or long enough to nest past the core's cap, and at anything
        else: `fold` says what they are."""
        if self.carrier is not None:
            return 0
        decode, kept, at = self.fast_decoder, self._notifications, position
        assert decode is not None
        try:
            for at in range(position, len(pieces)):
                if events is not None and events[at] not in _MESSAGE_EVENTS:
                    return at - position
                value: Notification = decode(pieces[at][start:])
                params = bytes(value.params)
                if len(params) >= COMPLETE_SHALLOW - 2:
                    return at - position  # `{"params": ...}` may nest deeper than the cap: the plain decoder tells
                if (b"_meta" in params or b"\\u" in params
                        or value.method == "notifications/subscriptions/acknowledged"):
                    return at - position  # maybe a listen stream's (its `_meta`, a key spelled with escapes)
                if not params.isascii():
                    params.decode()  # UnicodeDecodeError is a ValueError: `fold` says so
                kept.append((value.method, params))
        except (ValueError, RecursionError):
            return at - position
        return len(pieces) - position

    def _message(self, value: object, frame: int) -> None:
        if type(value) is not dict:
            self.wrong_type(value, frame, "a JSON-RPC message", "an object")
            return
        if value.get("jsonrpc") != "2.0":
            got = "no `jsonrpc` member" if "jsonrpc" not in value else f"`jsonrpc: {compact_json(value['jsonrpc'])}`"
            self.report.diagnostic(
                "jsonrpc-missing", frame,
                f"frame {frame} is a JSON-RPC message with {got}, not `\"jsonrpc\": \"2.0\"`; the official "
                "client rejects it (its models require the member); folded as if it had it")
        event = self.event_name(frame)
        if event == "error":
            self._error_event(value, frame)
            return
        if event is not None and event != "message":
            self.report.diagnostic(
                "event-ignored-by-sdk", frame,
                f"frame {frame} is an SSE `event: {event}`: the mcp SDK's reader handles only `message` events "
                "and skips it; folded anyway", once=("mcp-event", event), event=event)
        if _subscription(value) or value.get("method") == "notifications/subscriptions/acknowledged":
            self.version, self._listen = MODERN, True
        if "method" in value:
            self._method(value, frame)
        elif "result" in value or "error" in value:
            self._response(value, frame)
        else:
            self.report.diagnostic("unexpected-payload", frame,
                                   f"frame {frame} is neither a request, a notification nor a response; ignored")

    def _method(self, value: dict[str, Any], frame: int) -> None:
        method = value.get("method")
        if type(method) is not str:
            self.wrong_type(method, frame, "a message's `method`", "a string")
            return
        # (no frame index: the native snapshot is the reply's, the same however the stream was framed)
        entry = {"method": method, "params": value.get("params")}
        if "id" in value:
            self._requests.append({"id": value["id"], **entry})  # sampling, elicitation, roots: the client answers
            self._request_frames.append(frame)
        else:
            self._notifications.append(entry)

    def _response(self, value: dict[str, Any], frame: int, how: str = "sent a JSON-RPC error response") -> None:
        message_id = value.get("id")
        if self._reply is not None:
            same = message_id == self._reply_id
            self.report.diagnostic(
                "response-to-unknown-id", frame,
                f"frame {frame} is a second response, to id {compact_json(message_id)}"
                + (" again" if same else f", but this stream answers the request with id "
                   f"{compact_json(self._reply_id)} (frame {self._reply_frame})")
                + ": a POST carries one request, and the official client stops reading at the first "
                  "response; not folded", id=message_id)
            return
        if any(request["id"] == message_id for request in self._requests):
            self.report.diagnostic(
                "response-to-unknown-id", frame,
                f"frame {frame} responds to id {compact_json(message_id)}, the id of a request the server itself "
                "sent on this stream: the client answers that one, not the server; taken as the reply", id=message_id)
        self._reply, self._reply_id, self._reply_frame = value, message_id, frame
        if type(message_id) in (int, str):
            self.merger.replace(("id",), str(message_id), frame)
        if "error" in value:
            self._error(value.get("error"), frame, how)
        else:
            self._result(value.get("result"), frame)
        self.finish_reply()

    def _result(self, result: object, frame: int) -> None:
        if type(result) is not dict:
            self.wrong_type(result, frame, "the response's `result`", "an object")
            return
        if "resultType" in result:
            self.version = MODERN
        if result.get("resultType") == INPUT_REQUIRED:
            self._input_required(result, frame)
            return
        content = result.get("content")
        if type(content) is not list:
            self.merger.replace((0, "finish_reason"), RESULT, frame)
            return  # not a tool result (initialize, tools/list, ...): kept whole in the native snapshot
        texts = [item.get("text") for item in content if type(item) is dict and item.get("type") == "text"]
        joined = "\n".join(text for text in texts if type(text) is str)
        if joined:
            self._content.add(joined, frame)
        failed = result.get("isError") is True
        self.merger.replace((0, "finish_reason"), TOOL_ERROR if failed else RESULT, frame)
        if failed:
            self.report.diagnostic(
                "tool-result-error", frame,
                f"frame {frame}: the tool reported an error (`isError: true`): the text is the error, for the "
                "model to read, not a result")

    def _input_required(self, result: dict[str, Any], frame: int) -> None:
        requests = result.get("inputRequests")
        named = [f"{key} ({item.get('method')})" if type(item) is dict else str(key)
                 for key, item in (requests.items() if type(requests) is dict else ())]
        self.merger.replace((0, "finish_reason"), INPUT_REQUIRED, frame)
        self.report.diagnostic(
            "input-required", frame,
            f"frame {frame}: the server needs input before it answers (an InputRequiredResult, 2026-07-28): "
            + (f"{len(named)} request(s) to fulfil, {', '.join(named[:5])}" if named else "no input requests")
            + ("; the client sends the request again with the answers and the `requestState`" if "requestState"
               in result else "; the client sends the request again with the answers"), requests=len(named))

    def _error_event(self, value: dict[str, Any], frame: int) -> None:
        """`event: error`: whatever its data, an error; the SDK's reader never sees it."""
        how = ("sent an `event: error` frame, which the mcp SDK's reader skips (it handles only `message` "
               "events, so it goes on waiting for the response)")
        if "error" in value and "method" not in value:
            self._response(value, frame, how)
        else:
            self._error(value, frame, how)
            self.finish_reply()

    def _error(self, error: object, frame: int, what: str) -> None:
        if type(error) is dict:
            code, message = error.get("code"), error.get("message")
            detail = f" {code}" if code is not None else ""
            text = message if type(message) is str else compact_json(error)
        else:
            detail, text = "", compact_json(error)
        self.in_stream_error(frame, f"the MCP server {what}{detail}: {text}", raw=json.dumps(error, ensure_ascii=False))

    def finish(self, last_frame: int) -> None:
        self._read_request()
        if self.version == MODERN and self._requests:
            self.report.diagnostic(
                "request-on-stream", self._request_frames[0],
                f"frame {self._request_frames[0]} is a request from the server ({self._requests[0]['method']}) on a "
                "2026-07-28 stream, where a server sends none: it answers an InputRequiredResult and the client "
                "sends the request again", count=len(self._requests))
        if self._reply is not None or not len(self.frames):
            return
        if self.version == MODERN:
            self.report.diagnostic(
                "not-resumable", last_frame,
                ("the listen stream ended without the server closing it (no SubscriptionsListenResult): the client "
                 "listens again and refetches what it follows" if self._listen else
                 "the stream ended before its response: at 2026-07-28 no stream can be resumed (no `Last-Event-ID`), "
                 "so the client sends the request again"), listen=self._listen)
            return
        resume = self._last_event_id()
        if resume is not None:
            self.report.diagnostic(
                "resumable-cut", resume[0],
                f"the stream ended before its response, but frame {resume[0]} carried `id: {resume[1]}`: a client "
                f"resumes with a GET carrying `Last-Event-ID: {resume[1]}` and gets the rest", last_event_id=resume[1])

    def _last_event_id(self) -> tuple[int, str] | None:
        """The last frame that set an SSE event id, and the id (read by the SSE framer from its raw bytes)."""
        if self.transport not in (None, "sse"):
            return None
        for index in range(len(self.frames) - 1, -1, -1):
            raw = self.frames.raw(index)
            if b"id" not in raw:
                continue
            parser = SSEParser()
            frames = parser.feed(raw + b"\n\n") + parser.close()
            if frames and frames[0].id:
                return index, frames[0].id
        return None

    def _read_request(self) -> None:
        """What the request's headers say, where the stream's messages said nothing of their version."""
        headers = self.request_headers
        asked = headers.get("mcp-protocol-version", "").strip()
        if not (_VERSION.fullmatch(asked) and asked >= MODERN):
            return
        method = headers.get("mcp-method", "").strip()
        if self.version is None:
            self.version, self._listen = MODERN, method == "subscriptions/listen"
        missing = [name for name, needed in (("Mcp-Method", True), ("Mcp-Name", method in _NAMED_METHODS))
                   if needed and not headers.get(name.lower(), "").strip()]
        if missing:
            self.report.diagnostic(
                "mcp-header-missing", None,
                f"the request asked for MCP {asked} without the {' and '.join(missing)} header"
                f"{'s' if len(missing) > 1 else ''} that version requires (a server must refuse it: HTTP 400, "
                "-32020); this server streamed an answer anyway", missing=missing)

    def native(self) -> dict[str, Any] | None:
        kept = [entry[1] for entry in self._notifications if type(entry) is tuple]
        # The params of the fast way in one document: one decoder call, not one a notification.
        decoded = iter(loads_utf8(b"[" + b",".join(kept) + b"]") if kept else ())
        notifications = [entry if isinstance(entry, dict) else {"method": entry[0], "params": next(decoded)}
                         for entry in self._notifications]
        out: dict[str, Any] = {"response": self._reply, "notifications": notifications, "requests": self._requests}
        if self.version is not None:
            out["version"] = self.version
        return out


