"""The OpenAI Realtime API's server events (`gpt-realtime`, over a WebSocket).

A Realtime session is a conversation: one socket carries `session.*`,
`conversation.*` and `input_audio_buffer.*` events and any number of
responses, each from `response.created` to `response.done`. The fold follows
ONE reply, the first response of the session (the first `response.created`,
or the first `response_id` an event names), or the one `fold(..., lane=ID)` names;
the responses are the Result's lanes, and events of the others are
skipped and listed at the end (`realtime-other-responses`), as the
`websocket` transport lists a second Responses lane.

Text. A response has one output modality: text (`response.output_text.delta`,
beta name `response.text.delta`) or audio, whose words come as
`response.output_audio_transcript.delta` (beta `response.audio_transcript.delta`).
The reply's text is whichever of the two comes first in the response; the other,
if a beta session sends both, is kept aside in `native`. Audio bytes are not text
and are not kept. The user's own speech (`conversation.item.input_audio_transcription.*`)
is the prompt, not the reply: ignored.

Function calls are keyed by their item (`output_index` order): `call_id` is
the id, the name comes with `response.output_item.added`, arguments APPEND
from `response.function_call_arguments.delta` and are PARSE-AT-END at `.done`
(whose full `arguments` fill in a call that streamed none).

`response.done` ends the reply (FINISHED, not TERMINATED: the session goes on,
so later frames are still read to list other responses): `response.status` is
the finish reason (`incomplete`/`cancelled`: `status_details.reason`), its
`usage` the usage, `failed` an in-stream error. An `error` event is always an
error of the stream; it ends the reply only while the followed response is open
(Realtime errors are often about a client event, and the session stays open).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from ...findings import Report, Severity
from ...framing import FrameView
from ...merge import EMPTY_VALUES, Merger
from .._base import CONTENT_FILTER, ERROR, INCOMPLETE, LENGTH, STOP, Dialect, compact_json, event_type, fast_decoder
from .native import listed

if TYPE_CHECKING:
    from ...merge import ChoicePath, TextBuffer
    from .fast import TextDelta

__all__ = ["OpenAIRealtime"]

#: Beta event names and their GA names (the fold speaks GA).
_GA_NAMES = {
    "response.text.delta": "response.output_text.delta", "response.text.done": "response.output_text.done",
    "response.audio_transcript.delta": "response.output_audio_transcript.delta",
    "response.audio_transcript.done": "response.output_audio_transcript.done",
    "response.audio.delta": "response.output_audio.delta", "response.audio.done": "response.output_audio.done",
}
#: What a Realtime server event's `type` starts with (with an `event_id`, the mark of a Realtime event).
_PREFIXES = ("session.", "response.", "conversation.", "input_audio_buffer.", "output_audio_buffer.",
             "rate_limits.", "transcription_session.", "mcp_list_tools.")
#: Events of the session or of audio that hold nothing of the reply's text, calls or end: ignored without a word.
_QUIET = ("session.", "conversation.", "input_audio_buffer.", "output_audio_buffer.", "rate_limits.",
          "transcription_session.", "mcp_list_tools.", "response.content_part.", "response.output_audio.",
          "response.mcp_call")
_CHOICE = 0
_FAST_SHAPES = fast_decoder(f"{__package__}.fast", "decode_text_delta")
_ROLE: ChoicePath = (_CHOICE, "role")
#: The modality of each text delta type `fast` decodes.
_MODALITIES = {"response.output_text.delta": "text", "response.text.delta": "text",
               "response.output_audio_transcript.delta": "transcript", "response.audio_transcript.delta": "transcript"}


class OpenAIRealtime(Dialect):
    name = "openai-realtime"
    text_keys = ("delta", "transcript", "text")
    terminal_hint = "`response.done`"
    done_is_terminal = False
    #: Raw values: the response's `status`, or its `status_details.reason` when it has one.
    finish_reasons: ClassVar[dict[str, str]] = {
        "completed": STOP, "max_output_tokens": LENGTH, "content_filter": CONTENT_FILTER,
        "turn_detected": INCOMPLETE, "client_cancelled": INCOMPLETE, "cancelled": INCOMPLETE,
        "incomplete": INCOMPLETE, "failed": ERROR,
    }

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self.fast_decoder = _FAST_SHAPES
        self._content = self.merger.buffer((_CHOICE, "content"))
        #: "text" or "transcript": the modality the reply's text is (the first to come).
        self._modality: str | None = None
        self._aside: dict[str, list[str]] = {}
        self._response_id: str | None = None
        self._done = False
        #: Other responses of the session: id -> the first frame that named it.
        self._others: dict[str, int] = {}
        #: Output items in order: [type, item id, then message: modality, start, end; function_call: key].
        self._items: list[list[Any]] = []
        self._messages: dict[str, list[Any]] = {}
        self._calls: dict[str, int] = {}
        self._streamed_arguments: set[int] = set()
        self._envelope: dict[str, Any] = {}
        #: item id -> the status its last statement gave it (`output_item.done`, `response.done`'s output).
        self._item_status: dict[str, str] = {}
        self._handlers = {
            "session.created": self._session, "session.updated": self._session,
            "response.created": self._response_created,
            "response.output_item.added": self._item_added, "response.output_item.done": self._item_done,
            "response.output_text.delta": self._text_delta, "response.output_text.done": self._text_done,
            "response.output_audio_transcript.delta": self._text_delta,
            "response.output_audio_transcript.done": self._text_done,
            "response.function_call_arguments.delta": self._arguments_delta,
            "response.function_call_arguments.done": self._arguments_done,
            "response.done": self._response_done, "error": self._error,
        }

    @classmethod
    def claims(cls, value: object) -> bool:
        kind = event_type(value)
        if kind is None or type(value) is not dict or type(value.get("event_id")) is not str:
            return False
        return kind == "error" or kind.startswith(_PREFIXES)

    # -- the fold loop -------------------------------------------------------

    def fold(self, value: object, frame: int) -> None:
        kind = event_type(value)
        if kind is None or type(value) is not dict:
            self.report.diagnostic("unexpected-payload", frame,
                                   f"frame {frame} is not a Realtime event (an object with a `type`); ignored",
                                   severity=Severity.INFO, once=("openai-realtime", "untyped"))
            return
        kind = _GA_NAMES.get(kind, kind)
        handler = self._handlers.get(kind)
        if kind.startswith("response.") and not self._follows(value, frame):
            return
        if handler is not None:
            handler(value, frame)
        elif not kind.startswith(_QUIET):
            self.report.diagnostic("unexpected-payload", frame,
                                   f"event type {kind!r} is not one streamfold folds for the Realtime API; ignored",
                                   severity=Severity.INFO, once=("openai-realtime", kind))

    def fold_fast_run(self, pieces: Sequence[bytes], position: int, start: int, frame: int,
                      events: Sequence[bytes | None] | None) -> int:
        """Text deltas decoded by `fast`, of the followed response, in the reply's modality, each to a
        message item that has had text before: appended as `fold` appends them (the role is held then,
        so `fold`'s SET-ONCE of it is a no-op), in one loop, a stretch of one item's in one `extend`.
        It stops at anything else, which is `fold`'s."""
        if _ROLE not in self.merger.values:
            return 0
        decode, content, messages, at = self.fast_decoder, self._content, self._messages, position
        assert decode is not None
        response, modality, first = self._response_id, self._modality, frame - position
        extended: list[Any] | None = None  # the message the waiting `texts` are of
        texts: list[str] = []
        frames: list[int] = []
        try:
            for at in range(position, len(pieces)):
                value: TextDelta = decode(pieces[at][start:])
                if value.response_id != response or _MODALITIES[value.type] != modality:
                    return at - position
                message = messages.get(value.item_id)
                if message is None or message[3] is None:
                    return at - position
                if not value.delta:
                    continue
                if message is not extended:
                    _extend(content, extended, texts, frames)
                    texts, frames, extended = [], [], message
                texts.append(value.delta)
                frames.append(first + at)
        except (ValueError, RecursionError):
            return at - position
        finally:
            _extend(content, extended, texts, frames)
        return len(pieces) - position

    def _follows(self, value: dict[str, Any], frame: int) -> bool:
        """Is this `response.*` event of the followed response? The first response named is followed."""
        response = value.get("response")
        named = response.get("id") if type(response) is dict else value.get("response_id")
        if type(named) is not str or not named:
            return self._response_id is not None and not self._done
        if named == self._response_id:
            return True
        self.saw_lane(named, "response", frame)
        if self._response_id is None and self.follows(named):
            self._response_id = named
            self.merger.set_once(("id",), named, frame)
            return True
        self._others.setdefault(named, frame)
        return False

    # -- event handlers ---------------------------------------------------------

    def _session(self, value: dict[str, Any], frame: int) -> None:
        session = value.get("session")
        if type(session) is dict and type(session.get("model")) is str:
            self.merger.set_once(("model",), session["model"], frame)

    def _response_created(self, value: dict[str, Any], frame: int) -> None:
        response = value.get("response")
        if type(response) is dict:
            self._keep_envelope(response)

    def _keep_envelope(self, response: dict[str, Any]) -> None:
        for key in ("conversation_id", "output_modalities", "modalities", "status", "status_details", "metadata"):
            if key in response:  # a later statement (null included) replaces an earlier one
                self._envelope[key] = response[key]

    def _item_added(self, value: dict[str, Any], frame: int) -> None:
        item = value.get("item")
        if type(item) is not dict:
            return
        kind, item_id = item.get("type"), item.get("id")
        if kind == "message":
            self.merger.set_once((_CHOICE, "role"), item.get("role") or "assistant", frame)
            if type(item_id) is str:
                self._message(item_id)
        elif kind == "function_call":
            key = self._call(item_id if type(item_id) is str else item.get("call_id"), frame)
            if key is not None:
                self._call_fields(key, item, frame)

    def _message(self, item_id: str) -> list[Any]:
        message = self._messages.get(item_id)
        if message is None:
            message = self._messages[item_id] = ["message", item_id, None, None, None]
            self._items.append(message)
        return message

    def _call(self, item_id: object, frame: int) -> int | None:
        """The key of the function call of this item, opened on first sight."""
        if type(item_id) is not str or not item_id:
            return None
        key = self._calls.get(item_id)
        if key is None:
            key = self._calls[item_id] = len(self._calls)
            self._items.append(["function_call", item_id, key])
            self.merger.set_once((_CHOICE, "role"), "assistant", frame)
        return key

    def _call_fields(self, key: int, source: dict[str, Any], frame: int) -> None:
        merger = self.merger
        call_id, name = source.get("call_id"), source.get("name")
        if call_id not in EMPTY_VALUES:
            merger.set_once((_CHOICE, "tool", key, "id"), call_id, frame)
        if name not in EMPTY_VALUES:
            merger.set_once((_CHOICE, "tool", key, "name"), name, frame)

    def _text_delta(self, value: dict[str, Any], frame: int) -> None:
        delta = self.string(value.get("delta"), frame, "`delta`")
        if delta:
            self._text("transcript" if "transcript" in value["type"] else "text", value.get("item_id"), delta, frame)

    def _text(self, modality: str, item_id: object, piece: str, frame: int) -> None:
        if self._modality is None:
            self._modality = modality
        if modality != self._modality:
            self._aside.setdefault(modality, []).append(piece)
            return
        message = self._message(item_id) if type(item_id) is str else None
        if message is not None and message[3] is None:
            message[2], message[3] = modality, self._content.length
        self.merger.set_once((_CHOICE, "role"), "assistant", frame)
        self._content.add(piece, frame)
        if message is not None:
            message[4] = self._content.length

    def _text_done(self, value: dict[str, Any], frame: int) -> None:
        modality = "transcript" if "transcript" in value["type"] else "text"
        final = value.get(modality)
        item_id = value.get("item_id")
        message = self._messages.get(item_id) if type(item_id) is str else None
        streamed = message is not None and message[3] is not None
        if type(final) is str and final and not streamed and modality not in self._aside:
            self._text(modality, item_id, final, frame)  # a part that sent no deltas: its final text is it

    def _arguments_delta(self, value: dict[str, Any], frame: int) -> None:
        key = self._call(value.get("item_id") or value.get("call_id"), frame)
        delta = value.get("delta")
        if key is None or type(delta) is not str:
            return
        self._call_fields(key, value, frame)
        self._streamed_arguments.add(key)
        self.merger.append((_CHOICE, "tool", key, "arguments"), delta, frame)

    def _arguments_done(self, value: dict[str, Any], frame: int) -> None:
        key = self._call(value.get("item_id") or value.get("call_id"), frame)
        if key is None:
            return
        self._call_fields(key, value, frame)
        self._whole_arguments(key, value.get("arguments"), frame)
        self.merger.parse((_CHOICE, "tool", key, "arguments"), frame)

    def _whole_arguments(self, key: int, arguments: object, frame: int) -> None:
        if key not in self._streamed_arguments and type(arguments) is str:
            self._streamed_arguments.add(key)
            self.merger.append((_CHOICE, "tool", key, "arguments"), arguments, frame)

    def _item_done(self, value: dict[str, Any], frame: int) -> None:
        item = value.get("item")
        if type(item) is dict and type(item.get("id")) is str and type(item.get("status")) is str:
            self._item_status[item["id"]] = item["status"]
        if type(item) is dict and item.get("type") == "function_call":
            key = self._call(item.get("id") or item.get("call_id"), frame)
            if key is not None:
                self._call_fields(key, item, frame)
                self._whole_arguments(key, item.get("arguments"), frame)

    def _response_done(self, value: dict[str, Any], frame: int) -> None:
        response = value.get("response")
        if type(response) is not dict:
            response = {}
        self._keep_envelope(response)
        merger = self.merger
        usage = response.get("usage")
        if type(usage) is dict:
            merger.replace(("usage",), usage, frame)
        for item in listed(response.get("output")):
            if type(item) is dict:
                self._final_item(item, frame)
        status = response.get("status")
        details = response.get("status_details")
        reason = details.get("reason") if type(details) is dict else None
        raw = reason if type(reason) is str and reason and status != "failed" else status
        if type(raw) is str and raw:
            merger.replace((_CHOICE, "finish_reason"), raw, frame)
        if status == "failed":
            error = details.get("error") if type(details) is dict else None
            message = (error.get("message") or error.get("code") or compact_json(error)) if type(error) is dict \
                else "the response failed and says no more"
            self.in_stream_error(frame, f"the Realtime response failed: {message}",
                                 raw=json.dumps(details, ensure_ascii=False))
        for key in self._calls.values():
            merger.parse((_CHOICE, "tool", key, "arguments"), frame)
        self._done = True
        self.finish_reply()

    def _final_item(self, item: dict[str, Any], frame: int) -> None:
        """An item of `response.done`'s output: fills in what no event streamed (a call's arguments, a text)."""
        self._item_done({"item": item}, frame)
        if item.get("type") == "message" and type(item.get("id")) is str and not self._content.length:
            for part in listed(item.get("content")):
                if type(part) is dict:
                    for modality in ("text", "transcript"):
                        if type(part.get(modality)) is str and part[modality]:
                            self._text(modality, item["id"], part[modality], frame)

    def _error(self, value: dict[str, Any], frame: int) -> None:
        error = value.get("error")
        error = error if type(error) is dict else {}
        message = error.get("message") or error.get("code") or "an error event without a message"
        code = error.get("code") or error.get("type")
        detail = f" ({code})" if code else ""
        text = f"the server sent an `error` event{detail}: {message}"
        raw = json.dumps(value, ensure_ascii=False)
        if self._response_id is not None and not self._done:
            self.in_stream_error(frame, text, raw=raw)
        else:
            self.report.error("in-stream-error", frame, text + " (no response was open: the reply is not ended "
                              "by it)", raw=raw)

    # -- end of stream -------------------------------------------------------

    def finish(self, last_frame: int) -> None:
        super().finish(last_frame)
        for key in self._calls.values():
            self.check_arguments(_CHOICE, key, last_frame)
        if self._others and self._response_id is not None:  # else `lane-not-found` lists them
            first = min(self._others.values())
            listed = ", ".join(f"{rid} (from frame {at})" for rid, at in list(self._others.items())[:10])
            self.report.diagnostic(
                "realtime-other-responses", first,
                f"the session holds {len(self._others)} more response(s) than {self._response_id!r}, "
                f"{'the one asked for' if self.lane is not None else 'the first'}, which is the one folded: "
                f"{listed}; their events are listed as frames but not folded (`--lane ID` folds another)",
                responses=list(self._others))

    def normalise_usage(self, raw: object) -> dict[str, Any] | None:
        if type(raw) is not dict:
            return None
        details = raw.get("input_token_details")
        cached = details.get("cached_tokens") if type(details) is dict else None
        return {"input_tokens": raw.get("input_tokens"), "output_tokens": raw.get("output_tokens"),
                "reasoning_tokens": None, "cache_read_tokens": cached, "total_tokens": raw.get("total_tokens")}

    def native(self) -> dict[str, Any] | None:
        """The response's envelope (status, status details, conversation, modalities), its output items in
        order (a message's text as `[start, end]` in the content) with their final status, and text of
        the other modality."""
        out: dict[str, Any] = dict(self._envelope)
        if self._items:
            out["items"] = [list(item) for item in self._items]
        if self._item_status:
            out["item_status"] = dict(self._item_status)
        if self._aside:
            out["aside"] = {modality: "".join(pieces) for modality, pieces in self._aside.items()}
        return out or None


def _extend(content: TextBuffer, message: list[Any] | None, texts: list[str], frames: list[int]) -> None:
    """A message's deltas that waited, appended to the reply as `fold` appends each; the message's text
    then ends where the reply's does."""
    if texts:
        assert message is not None
        content.extend(texts, frames)
        message[4] = content.length
