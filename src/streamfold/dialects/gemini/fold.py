"""Google Gemini `streamGenerateContent` (AI Studio and Vertex AI): the dialect.

Reference §4.4 and traps G1-G8, O9, U1, F6, F9. Both transports carry the
same `GenerateContentResponse` objects: SSE with `?alt=sse`, a streamed JSON
array without it; the framing layer hands this dialect one object per frame
either way, so both fold to the same reply.

Candidates keep their own `index` as the choice index (absent means 0, G2).
Parts have no identity across chunks: each chunk's parts are new fragments
(`parts`: text runs, whole parts, function calls). `usageMetadata` is
cumulative: REPLACE, never sum (G1). There is no terminal frame: the reply is
over when every candidate has a `finishReason` (G4: a trailing chunk after it
still folds). A prompt blocked before any candidate
(`promptFeedback.blockReason`, G7) finishes choice 0 as `content_filter`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from ..._json import raw_decode
from ...findings import Severity
from .._base import CONTENT_FILTER, INCOMPLETE, LENGTH, STOP, dumps_arguments, fast_decoder
from ..gemini_live.events import LIVE_ONLY_FIELDS
from .native import snapshot as _snapshot
from .native import usage as _usage
from .parts import Parts
from .state import CONTINUATION, Candidate, Endings, ErrorSpan

if TYPE_CHECKING:
    from ...findings import Report
    from ...framing import FrameView
    from ...merge import Merger
    from .fast import GeminiChunk

_FAST_SHAPES = fast_decoder(f"{__package__}.fast", "decode_gemini_chunk")

__all__ = ["Gemini"]

class Gemini(Parts):
    name = "gemini"
    terminal_hint = "a chunk with `finishReason`"
    finish_reasons: ClassVar[dict[str, str]] = {
        "STOP": STOP,
        "MAX_TOKENS": LENGTH,
        "SAFETY": CONTENT_FILTER,
        "RECITATION": CONTENT_FILTER,
        "LANGUAGE": CONTENT_FILTER,
        "BLOCKLIST": CONTENT_FILTER,
        "PROHIBITED_CONTENT": CONTENT_FILTER,
        "SPII": CONTENT_FILTER,
        "IMAGE_SAFETY": CONTENT_FILTER,
        "IMAGE_PROHIBITED_CONTENT": CONTENT_FILTER,
        "IMAGE_RECITATION": CONTENT_FILTER,
        "IMAGE_OTHER": CONTENT_FILTER,
        "MODEL_ARMOR": CONTENT_FILTER,
        "ESCALATION": CONTENT_FILTER,
        "PUP_LIMITED_DISABLED": CONTENT_FILTER,
        "OTHER": INCOMPLETE,
        "MALFORMED_FUNCTION_CALL": INCOMPLETE,
        "CONTINUATION": INCOMPLETE,
        "UNEXPECTED_TOOL_CALL": INCOMPLETE,
        "TOO_MANY_TOOL_CALLS": INCOMPLETE,
        "MISSING_THOUGHT_SIGNATURE": INCOMPLETE,
        "MALFORMED_RESPONSE": INCOMPLETE,
        "NO_IMAGE": INCOMPLETE,
    }

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self._candidates: dict[int, Candidate] = {}
        #: Candidates past `max_choices`, which the merger drops: only whether each ended is kept (for
        #: `_endings`), not a `Candidate` each.
        self._dropped: dict[int, bool] = {}
        self._endings = Endings()
        self._identified = False
        self.fast_decoder = _FAST_SHAPES
        #: The blockReason that finished choice 0 before any candidate (G7), while it stands.
        self._blocked: str | None = None
        self._prompt_feedback: Any = None
        self._create_time: Any = None
        self._model_status: Any = None
        self._prefix_checked = False

    @classmethod
    def claims(cls, value: object) -> bool:
        if type(value) is not dict or "invocationId" in value:  # (an ADK event: its usage is a Gemini call's)
            return False
        if "candidates" in value or "promptFeedback" in value:
            return True
        if "usageMetadata" in value:
            return LIVE_ONLY_FIELDS.isdisjoint(value)  # a Live message may carry its usage too
        # Google's error envelope: {"error": {"code": 429, "message": ..., "status": "RESOURCE_EXHAUSTED"}}
        error = value.get("error")
        return type(error) is dict and type(error.get("status")) is str and "message" in error and len(value) == 1

    # -- the fold loop (once per frame) ---------------------------------------

    def fold(self, chunk: Any, frame: int) -> None:
        if type(chunk) is not dict:
            if type(chunk) is list:
                # A whole array body framed as one payload: its elements are the chunks.
                for element in chunk:
                    self.fold(element, frame)
                return
            self.report.diagnostic(
                "unexpected-payload", frame,
                f"expected a JSON object (a GenerateContentResponse), got {type(chunk).__name__}; ignored")
            return
        merger = self.merger
        if not self._identified:
            if not self._prefix_checked:
                self._check_prefix(frame)
            found_id = merger.set_once(("id",), chunk.get("responseId"), frame)
            found_model = merger.set_once(("model",), chunk.get("modelVersion"), frame)
            if self._create_time is None:
                self._create_time = chunk.get("createTime")
            self._identified = found_id is not None and found_model is not None
        candidates = chunk.get("candidates")
        if candidates:
            if type(candidates) is list:
                for candidate in candidates:
                    if type(candidate) is dict:
                        if len(candidate) == 1:
                            # The common chunk: candidate 0, one text part extending the open text run.
                            content = candidate.get("content")
                            if type(content) is dict:
                                parts = content.get("parts")
                                if type(parts) is list and len(parts) == 1:
                                    part = parts[0]
                                    if type(part) is dict and len(part) == 1:
                                        text = part.get("text")
                                        state = self._candidates.get(0)
                                        if type(text) is str and state is not None and state.role is not None:
                                            run = state.run
                                            if run is not None:
                                                if text:
                                                    buffer = state.content
                                                    buffer.add(text, frame)
                                                    run.end = buffer.length
                                                    run.last_frame = frame
                                                continue
                        self._candidate(candidate, frame)
            else:
                self.report.diagnostic(
                    "unexpected-payload", frame, f"`candidates` is a {type(candidates).__name__}, not a list; ignored")
        usage = chunk.get("usageMetadata")
        if usage:
            merger.replace(("usage",), usage, frame)  # G1: cumulative, last wins
        feedback = chunk.get("promptFeedback")
        if feedback:
            self._feedback(feedback, bool(candidates), frame)
        status = chunk.get("modelStatus")
        if status is not None:
            self._model_status = status
        error = chunk.get("error")
        if error:
            self._in_stream_error(error, frame)

    def _check_prefix(self, frame: int) -> None:
        """google-genai reads only `data: ` lines with the space; a proxy that writes `data:` breaks it."""
        self._prefix_checked = True
        if not 0 <= frame < len(self.frames):
            return
        raw = self.frames.raw(frame)
        if raw.startswith(b"data:") and not raw.startswith(b"data: "):
            self.report.diagnostic(
                "data-without-space", frame,
                "the stream writes `data:` without the space after the colon. That is valid SSE and streamfold "
                "reads it, but google-genai only recognises `data: ` and fails on every such line "
                "(UnknownApiResponseError)", severity=Severity.INFO)

    def _state(self, index: int) -> Candidate:
        state = self._candidates.get(index)
        if state is None:
            state = self._candidates[index] = Candidate(self.merger.buffer((index, "content")))
        return state

    def fold_fast(self, chunk: GeminiChunk, frame: int, event: bytes | None) -> bool:
        """A chunk decoded by `fast`: one candidate's text parts extending its open text run,
        folded as `fold` folds them, and the usage replaced. A new candidate, one without its role
        yet, a finish reason or any other part is left to `fold`."""
        if not self._identified or len(chunk.candidates) != 1:
            return False
        candidate = chunk.candidates[0]
        state = self._candidates.get(candidate.index or 0)
        if state is None or not state.real or state.role is None or state.run is None:
            return False
        run, buffer = state.run, state.content
        for part in candidate.content.parts:
            if part.text:
                buffer.add(part.text, frame)
                run.end = buffer.length
                run.last_frame = frame
        if chunk.usageMetadata:
            self.merger.replace(("usage",), chunk.usageMetadata, frame)  # G1: cumulative, last wins
        return True

    def fold_fast_run(self, pieces: Sequence[bytes], position: int, start: int, frame: int,
                      events: Sequence[bytes | None] | None) -> int:
        """`fold_fast` of each chunk in one loop, the texts a candidate's run grows by handed over in one
        `extend` and the usage, cumulative, replaced by the run's first and last (the value and the frames
        `replace` a chunk keeps). With events journalled, each chunk's changes are its own, in order: the
        chunks then go one by one."""
        if self.merger.journal is not None:
            return super().fold_fast_run(pieces, position, start, frame, events)
        decode, first, at = self.fast_decoder, frame - position, position
        assert decode is not None
        hot: Candidate | None = None
        added: list[str] = []  # the hot candidate's texts since its last hand-over, and their frames
        frames: list[int] = []
        usage: Any = None  # the run's last usage and its frame, replaced at the end
        usage_frame = 0
        try:
            for at in range(position, len(pieces)):
                chunk: GeminiChunk = decode(pieces[at][start:])
                if not self._identified or len(chunk.candidates) != 1:
                    return at - position
                candidate = chunk.candidates[0]
                state = self._candidates.get(candidate.index or 0)
                if state is not hot or state is None:
                    if state is None or not state.real or state.role is None or state.run is None:
                        return at - position
                    _hand_over(hot, added, frames)
                    hot = state
                index = first + at
                for part in candidate.content.parts:
                    if part.text:
                        added.append(part.text)
                        frames.append(index)
                if chunk.usageMetadata:
                    if usage is None:  # the first: where the usage starts, if it is new
                        self.merger.replace(("usage",), chunk.usageMetadata, index)
                    usage, usage_frame = chunk.usageMetadata, index
        except (ValueError, RecursionError):
            pass
        else:
            at = len(pieces)
        finally:
            _hand_over(hot, added, frames)
            if usage is not None:
                self.merger.replace(("usage",), usage, usage_frame)
        return at - position

    def _candidate(self, candidate: dict[str, Any], frame: int) -> None:
        index = candidate.get("index")
        if type(index) is not int:
            index = 0  # G2: proto3 JSON leaves out the zero index
        state = self._candidates.get(index)
        if state is None or not state.real:
            if index in self._dropped or (state is None and not self.merger.opens_choice(index, frame)):
                self._dropped_candidate(index, candidate.get("finishReason"), frame)
                return
            if state is None:
                state = self._state(index)
            state.real = True
            if index == 0 and self._blocked is not None:
                self._blocked = None
            self._started(index)
        content = candidate.get("content")
        if type(content) is dict:
            parts = content.get("parts")
            if parts and type(parts) is list:
                for part in parts:
                    if type(part) is dict:
                        text = part.get("text")
                        if type(text) is str and len(part) == 1:
                            # The common part: one text fragment, folded inline when it extends the run.
                            if text:
                                run = state.run
                                if run is not None:
                                    buffer = state.content
                                    buffer.add(text, frame)
                                    run.end = buffer.length
                                    run.last_frame = frame
                                else:
                                    self._text(index, state, text, False, None, frame)
                        else:
                            self._part(index, state, part, frame)
            if state.role is None:
                role = content.get("role")
                if role:
                    state.role = self.merger.set_once((index, "role"), role, frame)
        finish = candidate.get("finishReason")
        if finish:
            self._finish(index, state, finish, frame)
        if len(candidate) > 1:
            for field, value in state.keep_fields(candidate):
                self.wrong_type(value, frame, f"a citation's `{field}` in candidate {index}", "an integer",
                                "the citation is kept as sent")

    def _finish(self, index: int, state: Candidate, raw: object, frame: int) -> None:
        if type(raw) is not str:
            self.wrong_type(raw, frame, f"the `finishReason` of candidate {index}", "a string")
            return
        held = self.merger.get((index, "finish_reason"))
        if held is not None and held != raw and held != CONTINUATION:
            self.report.diagnostic(
                "finish-reason-conflict", frame,
                f"candidate {index} finishReason changed from {held!r} to {raw!r}; the last value is kept",
                once=(index,), choice=index, previous=held, value=raw)
        self.merger.replace((index, "finish_reason"), raw, frame)
        if raw == CONTINUATION:
            self.report.diagnostic(
                "reply-continues", frame,
                f"candidate {index} stopped with finishReason CONTINUATION: the reply goes on in another request "
                "made with its continuationToken (google-genai 3.x automatic continuation). This capture holds one "
                "hop, so the reply is incomplete",
                severity=Severity.INFO, once=(index, frame), choice=index)
        elif state.finish_frame is None:
            state.finish_frame = frame
            state.run = None  # later text is content after the finish: off the hot path
        if not state.ended:
            state.ended = True
            self._ended(index)

    def _dropped_candidate(self, index: int, finish: object, frame: int) -> None:
        """A candidate past `max_choices`: nothing of it is folded, but it counts for the end of the reply."""
        if index not in self._dropped:
            self._dropped[index] = False
            self._started(index)
        if finish and type(finish) is not str:
            self.wrong_type(finish, frame, f"the `finishReason` of candidate {index}", "a string")
        elif finish and not self._dropped[index]:
            self._dropped[index] = True
            self._ended(index)

    def _started(self, index: int) -> None:
        self._endings.arrive(index)
        self._update_finished()

    def _ended(self, index: int) -> None:
        self._take_errors(index, self._endings.end(index))
        self._update_finished()

    def _update_finished(self) -> None:
        arrived, ended = self._endings.arrived, self._endings.ended
        self.finish_reply((arrived > 0 and ended == arrived) or (arrived == 0 and self._blocked is not None))

    def _take_errors(self, index: int, errors: ErrorSpan | None) -> None:
        """The in-stream errors that came while candidate `index` was open (the first and the last): the
        last one's message REPLACEs its error, spanning their frames."""
        if errors is not None and index in self._candidates:
            first, last = errors
            self.merger.replace((index, "error"), first[0], first[1])
            if last is not first:
                self.merger.replace((index, "error"), last[0], last[1])

    def _feedback(self, feedback: object, has_candidates: bool, frame: int) -> None:
        self._prompt_feedback = feedback  # REPLACE
        if type(feedback) is not dict or has_candidates:
            return
        reason = feedback.get("blockReason")
        first = self._candidates.get(0)
        if not reason or type(reason) is not str or (first is not None and first.real):
            return
        # G7: the prompt was blocked, no candidate will come.
        self._blocked = reason
        self._state(0)
        self.merger.replace((0, "finish_reason"), reason, frame)
        message = feedback.get("blockReasonMessage")
        detail = f" ({message})" if message else ""
        self.report.diagnostic(
            "prompt-blocked", frame,
            f"the prompt was blocked (promptFeedback.blockReason {reason}){detail}: the chunk has no `candidates`, "
            "so code that reads candidates[0] crashes and code that skips it reports an empty success. "
            "Choice 0 is finished as content_filter",
            once=True, reason=reason)
        self._update_finished()

    def _in_stream_error(self, error: object, frame: int, how: str = "") -> None:
        if type(error) is dict:
            message = error.get("message") or error.get("status") or dumps_arguments(error)
            code = " ".join(str(part) for part in (error.get("code"), error.get("status")) if part not in (None, ""))
        else:
            message, code = str(error), ""
        detail = f" ({code})" if code else ""
        self.report.error(
            "in-stream-error", frame,
            f"the server sent an error{detail} inside the HTTP 200 stream{how}: {message}",
            raw=error if type(error) is str else json.dumps({"error": error}, ensure_ascii=False))
        if not self._endings.error(str(message), frame):  # else each open candidate takes it when it ends
            self._state(0)
            self.merger.replace((0, "error"), str(message), frame)

    # -- end of stream --------------------------------------------------------------

    def finish(self, last_frame: int) -> None:
        for index, state in self._candidates.items():
            if state.streamed is not None:
                self._close_streamed(index, state, last_frame, unfinished=True)
            closing = state.parts[-1:]
            if state.capped is not None:
                closing += state.capped.values()  # the runs extended past MAX_PARTS, not only the last part
            for part in closing:
                self.merger.replace((index, "block", part.key), part.block, part.last_frame)
            state.forget_calls()
        self._unframed_errors()
        for index, errors in self._endings.still_open():
            self._take_errors(index, errors)

    def _unframed_errors(self) -> None:
        """F6: error JSON sent raw (pretty-printed, no `data:`) inside an SSE stream.

        SSE clients ignore such lines (each is an unknown field); the google-genai
        SDK brace-balances them and raises. They are frames without data here.
        """
        for index, raw in self.frames.dataless():
            if b"{" not in raw:
                continue
            text = raw.decode("utf-8", "replace")
            try:
                value, _ = raw_decode(text, text.index("{"))
            except ValueError:
                continue
            if type(value) is dict and value.get("error"):
                self._in_stream_error(
                    value["error"], index,
                    " as raw JSON lines without `data:` (SSE clients ignore each line as an unknown field; "
                    "google-genai brace-balances them and raises)")

    def normalise_finish(self, raw: str, has_tool_calls: bool) -> str:
        if self._blocked is not None and raw == self._blocked:
            return CONTENT_FILTER  # G7: any blockReason, OTHER included
        return super().normalise_finish(raw, has_tool_calls)

    def normalise_usage(self, raw: object) -> dict[str, Any] | None:
        return _usage(raw)

    # -- the non-streaming response -----------------------------------------------------

    def native(self) -> dict[str, Any]:
        """Per real candidate its parts (text runs as offsets, calls by key, whole parts as
        sent), kept fields, citations and logprobs; the prompt feedback and envelope fields."""
        return _snapshot(self._candidates, self._prompt_feedback, self._create_time, self._model_status)


def _hand_over(state: Candidate | None, texts: list[str], frames: list[int]) -> None:
    """The texts a fast run added to `state`'s open text run, into its buffer in one call; the lists emptied."""
    if state is not None and texts:
        buffer, run = state.content, state.run
        assert run is not None
        buffer.extend(texts, frames)
        run.end = buffer.length
        run.last_frame = frames[-1]
    texts.clear()
    frames.clear()
