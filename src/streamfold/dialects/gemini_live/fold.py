"""The Gemini Live API's server messages (`BidiGenerateContent` over a WebSocket; google-genai's
`LiveServerMessage`), as the `websocket` transport's received messages (text, or JSON in binary
messages, which is how the server sends them) or as NDJSON lines.

A Live session is a conversation: after `setupComplete`, each turn of the model streams `serverContent`
messages (`modelTurn.parts`, `outputTranscription` of an audio reply), may ask for function calls
(`toolCall`) and cancel them (`toolCallCancellation`), and ends with `turnComplete`, or early with
`interrupted` (the user spoke over it). The fold follows ONE reply, a turn (the lane: None or "1" is
the first turn, "2" the second...); the other turns' messages are listed (`live-other-turns`), as
`openai-realtime` lists later responses.

Text. A turn has one output modality: text parts, or audio (`inlineData`, not text and not kept) whose
words come as `outputTranscription`. The reply's text is whichever of the two comes first; the other is
kept aside in `native`. Thought parts (`thought: true`) are reasoning. The user's own speech
(`inputTranscription`) is the prompt, not the reply.

Chosen where the API says nothing: a turn begins with the first message that carries the model's output
(a part, a transcription, a tool call) after the previous turn ended; a message without output (usage,
a late `turnComplete` after `interrupted`) belongs to the turn before it. A `toolCall` pauses the turn
(the model waits for the client's response: a stream that stops there is finished with `tool_calls`);
output after it resumes the same turn. `generationComplete` says the model is done generating (the
reply is finished), `turnComplete` ends the turn (its `turnCompleteReason`, when given, is the raw finish
reason) unless `interactionStatus` says the server is still `IN_PROGRESS` (google-genai's `receive()`
reads it so); `interrupted` ends it too. Google's error envelope (`{"error": {...}}`) or a bare error object
(`{"code", "message", "status"}`) as a message is an in-stream error.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ...findings import Report, Severity
from ...framing import FrameView
from ...merge import Merger
from .._base import CONTENT_FILTER, ERROR, INCOMPLETE, OTHER, STOP, TOOL_CALLS, Dialect, compact_json, dumps_arguments
from ..gemini.native import usage as gemini_usage
from .events import CONTENT_FIELDS, MESSAGE_FIELDS, base64_size, claims_message

__all__ = ["GeminiLive"]

_CHOICE = 0
#: `turnCompleteReason` words that say the turn was refused by a safety or policy check.
_FILTERED = ("PROHIBITED", "SAFETY", "BLOCKLIST", "CELEBRITY", "PEOPLE", "MINORS", "CHILD", "NCII", "UNSAFE",
             "REJECTED", "INPUT_OTHER", "GENERATED_OTHER")


#: A bare error object (`{"code", "message", "status"}`), which google-genai's live client reads by its `code`.
_ERROR_FIELDS = frozenset({"code", "message", "status", "details"})


def _listed(value: object) -> list[Any] | tuple[()]:
    return value if type(value) is list else ()


def _completes(content: dict[str, Any]) -> bool:
    """Does this `serverContent` end the turn? `turnComplete`, unless the server says it is still `IN_PROGRESS`;
    an `IDLE` interaction status (google-genai's `_is_interaction_complete`)."""
    status = content.get("interactionStatus")
    return (content.get("turnComplete") is True and status != "IN_PROGRESS") or status == "IDLE"


class GeminiLive(Dialect):
    name = "gemini-live"
    terminal_hint = "`serverContent.turnComplete`"
    done_is_terminal = False
    text_keys = ("text",)
    #: Raw values: what ended the turn (`turnComplete`, or its `turnCompleteReason`), `interrupted`, a
    #: `toolCall` the stream stopped at, or `generationComplete` when no `turnComplete` came.
    finish_reasons: ClassVar[dict[str, str]] = {
        "turnComplete": STOP, "generationComplete": STOP, "TURN_COMPLETE_REASON_UNSPECIFIED": STOP,
        "NEED_MORE_INPUT": STOP, "interrupted": INCOMPLETE, "toolCall": TOOL_CALLS,
        "MALFORMED_FUNCTION_CALL": ERROR, "MAX_REGENERATION_REACHED": INCOMPLETE}

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self._content = self.merger.buffer((_CHOICE, "content"))
        self._turn = 0
        self._open = False
        #: The frame of a `toolCall` the turn waits on (None once output resumes it).
        self._paused: int | None = None
        self._text_after_calls = False
        self._modality: str | None = None
        self._aside: dict[str, list[str]] = {}
        #: The turn's function calls: id -> key (the last of an id sent twice).
        self._calls: dict[str, int] = {}
        self._call_count = 0
        #: The ids of the calls the server cancelled, in order (a dict as an ordered set).
        self._cancelled: dict[str, None] = {}
        self._audio_bytes = 0
        #: The last `goAway` and `sessionResumptionUpdate`, and the frame of that `goAway`.
        self._session: dict[str, Any] = {}
        self._go_away: int | None = None
        #: Other turns: number -> the first frame of theirs.
        self._others: dict[int, int] = {}

    @property
    def _followed(self) -> int:
        """The turn folded: the first, or the one `lane` names by its number (none, for any other name)."""
        if self.lane is None:
            return 1
        return int(self.lane) if self.lane.isascii() and self.lane.isdigit() and len(self.lane) < 10 else -1

    @classmethod
    def claims(cls, value: object) -> bool:
        return claims_message(value)

    # -- the fold loop ------------------------------------------------------------------

    def fold(self, value: object, frame: int) -> None:
        if type(value) is not dict:
            self.report.diagnostic("unexpected-payload", frame,
                                   f"frame {frame} is not a Live server message (an object); ignored",
                                   severity=Severity.INFO, once=("gemini-live", "not-object"))
            return
        error = value.get("error") if len(value) == 1 else value if _ERROR_FIELDS.issuperset(value) else None
        if type(error) is dict and ("message" in error or "status" in error):
            message = error.get("message") or error.get("status") or compact_json(error)
            self.in_stream_error(frame, f"the Live API sent an error ({error.get('code')}): {message}",
                                 compact_json(value, 2000))
            return
        for key in value.keys() - MESSAGE_FIELDS:
            self.report.diagnostic("unexpected-payload", frame,
                                   f"field {key!r} is not one of a Live server message's; ignored",
                                   severity=Severity.INFO, once=("gemini-live", key))
        self._session_fields(value, frame)
        content, call = value.get("serverContent"), value.get("toolCall")
        content = content if type(content) is dict else {}
        parts = _listed(content["modelTurn"].get("parts")) if type(content.get("modelTurn")) is dict else ()
        spoken = content.get("outputTranscription")
        said = spoken.get("text") if type(spoken) is dict else None
        if (parts or said or type(call) is dict) and not self._open:
            self._turn += 1
            self._open = True
            self.saw_lane(str(self._turn), "turn", frame)
            if self._turn == self._followed:
                self.followed_lane = str(self._turn)
        if self._turn != self._followed:
            if self._turn and (content or call or "usageMetadata" in value or "toolCallCancellation" in value):
                self._others.setdefault(self._turn, frame)
            if content.get("interrupted") is True or _completes(content):
                self._open = False
            return
        for part in parts:
            if type(part) is dict:
                self._part(part, frame)
        if type(said) is str and said:
            self._text("transcript", said, frame)
        if type(call) is dict:
            self._tool_call(call, frame)
        cancellation = value.get("toolCallCancellation")
        if type(cancellation) is dict:
            self._cancel(cancellation, frame)
        if type(value.get("usageMetadata")) is dict:
            self.merger.replace(("usage",), value["usageMetadata"], frame)
        if content:
            self._ends(content, frame)

    def _session_fields(self, value: dict[str, Any], frame: int) -> None:
        """What belongs to the session, not a turn: its id, the go-away notice, the resumption handle."""
        setup = value.get("setupComplete")
        if type(setup) is dict and type(setup.get("sessionId")) is str:
            self.merger.set_once(("id",), setup["sessionId"], frame)
        for key in ("goAway", "sessionResumptionUpdate"):
            if type(value.get(key)) is dict:
                self._session[key] = value[key]
        if type(value.get("goAway")) is dict:
            self._go_away = frame

    # -- a turn's output ------------------------------------------------------------------

    def _part(self, part: dict[str, Any], frame: int) -> None:
        text = part.get("text")
        if type(text) is str and text:
            if part.get("thought") is True:
                self.merger.append((_CHOICE, "reasoning"), text, frame)
                self._resume(frame)
            else:
                self._text("text", text, frame)
        inline = part.get("inlineData")
        if type(inline) is dict and type(inline.get("data")) is str:
            self._audio_bytes += base64_size(inline["data"])
            self._resume(frame)

    def _text(self, modality: str, piece: str, frame: int) -> None:
        self._resume(frame)
        if self._modality is None:
            self._modality = modality
        if modality != self._modality:
            self._aside.setdefault(modality, []).append(piece)
            return
        self.merger.set_once((_CHOICE, "role"), "model", frame)
        self._content.add(piece, frame)

    def _resume(self, frame: int) -> None:
        """Output after a tool call: the turn goes on (the client answered the call)."""
        if self._calls:
            self._text_after_calls = True
        if self._paused is not None:
            self._paused = None
            self.finish_reply(False)

    def _tool_call(self, call: dict[str, Any], frame: int) -> None:
        merger = self.merger
        for function in _listed(call.get("functionCalls")):
            if type(function) is not dict:
                continue
            ident = function.get("id")
            key = self._call_count  # (not len(self._calls): two calls may send one id)
            self._call_count += 1
            self._calls[ident if type(ident) is str and ident else f"#{key}"] = key
            merger.set_once((_CHOICE, "role"), "model", frame)
            merger.set_once((_CHOICE, "tool", key, "id"), ident, frame)
            merger.set_once((_CHOICE, "tool", key, "name"), function.get("name"), frame)
            arguments = function.get("args")
            merger.append_whole((_CHOICE, "tool", key, "arguments"),
                                dumps_arguments({} if arguments is None else arguments), frame)
        self._text_after_calls = False
        self._paused = frame
        self.finish_reply()

    def _cancel(self, cancellation: dict[str, Any], frame: int) -> None:
        for ident in _listed(cancellation.get("ids")):
            if type(ident) is not str:
                continue
            self._cancelled.setdefault(ident, None)
            key = self._calls.get(ident)
            name = self.merger.get((_CHOICE, "tool", key, "name")) if key is not None else None
            what = f"tool call {key} ({name}, id {ident})" if key is not None else f"a call with id {ident!r} that " \
                   "this turn never asked for"
            self.report.diagnostic(
                "live-call-cancelled", frame,
                f"the server cancelled {what} at frame {frame} (the turn was interrupted, as a rule): a client that "
                "ran it should not send its result and may undo what it did; it stays in the tool calls, marked "
                "cancelled in `native`",
                call_id=ident, tool_call=key)

    def _ends(self, content: dict[str, Any], frame: int) -> None:
        for key in content.keys() - CONTENT_FIELDS:
            self.report.diagnostic("unexpected-payload", frame,
                                   f"field {key!r} is not one of a Live `serverContent`'s; ignored",
                                   severity=Severity.INFO, once=("gemini-live", "serverContent", key))
        merger = self.merger
        raw = merger.get((_CHOICE, "finish_reason"))
        if content.get("interrupted") is True:
            merger.replace((_CHOICE, "finish_reason"), "interrupted", frame)
            self._close(frame)
            return
        if content.get("generationComplete") is True and raw is None:
            merger.replace((_CHOICE, "finish_reason"), "generationComplete", frame)
            self.finish_reply()
        if _completes(content):
            reason = content.get("turnCompleteReason")
            if raw != "interrupted":
                merger.replace((_CHOICE, "finish_reason"), reason if type(reason) is str and reason else
                               "turnComplete", frame)
            self._close(frame)

    def _close(self, frame: int) -> None:
        self._open = False
        self._paused = None
        self.finish_reply()

    # -- end of stream --------------------------------------------------------------------

    def finish(self, last_frame: int) -> None:
        super().finish(last_frame)
        if self._paused is not None and self.merger.get((_CHOICE, "finish_reason")) is None:
            self.merger.replace((_CHOICE, "finish_reason"), "toolCall", self._paused)
        if self._others:
            listed = ", ".join(f"turn {turn} (from frame {at})" for turn, at in list(self._others.items())[:10])
            self.report.diagnostic(
                "live-other-turns", min(self._others.values()),
                f"the session holds {len(self._others)} turn(s) besides turn {self._followed}, the one folded: "
                f"{listed}; their messages are listed as frames but not folded", turns=list(self._others))
        if self._go_away is not None and not self.ended:
            self.report.diagnostic(
                "live-go-away", self._go_away,
                f"the server said at frame {self._go_away} that it would close the connection (goAway, time left "
                f"{self._session['goAway'].get('timeLeft')!r}) and the turn never completed: the connection's "
                "lifetime ran out mid-turn; a client resumes the session with the last `sessionResumptionUpdate` "
                "handle")

    def normalise_finish(self, raw: str, has_tool_calls: bool) -> str:
        value = self.finish_reasons.get(raw)
        if value is None:
            return CONTENT_FILTER if any(word in raw for word in _FILTERED) else OTHER
        # Calls the client answered within the turn, and output after them: the turn ended as a stop.
        return TOOL_CALLS if value == STOP and has_tool_calls and not self._text_after_calls else value

    def normalise_usage(self, raw: object) -> dict[str, Any] | None:
        if type(raw) is dict and "candidatesTokenCount" not in raw:
            raw = {**raw, "candidatesTokenCount": raw.get("responseTokenCount")}
        return gemini_usage(raw)

    def native(self) -> dict[str, Any] | None:
        """The turn followed and the others' numbers, the ids of the calls the server cancelled, text of the other
        modality, how many bytes of audio the turn's parts held, the go-away notice and the last resumption
        update. (No frame numbers: a transparent fault of the replay server must leave the native part as it is.)"""
        out: dict[str, Any] = {"turn": self._followed}
        if self._cancelled:
            out["cancelled_calls"] = list(self._cancelled)
        if self._aside:
            out["aside"] = {modality: "".join(pieces) for modality, pieces in self._aside.items()}
        if self._audio_bytes:
            out["audio_bytes"] = self._audio_bytes
        if self._others:
            out["other_turns"] = list(self._others)
        out.update(self._session)
        return out
