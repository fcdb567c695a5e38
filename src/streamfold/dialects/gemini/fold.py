"""Google Gemini `streamGenerateContent` (AI Studio and Vertex AI).

Reference §4.4 and traps G1-G8, O9, U1, F6, F9. Both transports carry the
same `GenerateContentResponse` objects: SSE with `?alt=sse`, a streamed JSON
array without it; the framing layer hands this dialect one object per frame
either way, so both fold to the same reply.

Candidates keep their own `index` as the choice index (absent means 0, G2).
Parts have no identity across chunks: each chunk's parts are new fragments.
Text APPENDs to content, `thought: true` text to reasoning; a run of text
parts of one kind is one block. A `functionCall` part is WHOLE: one part is
one call, its `args` object serialised as the arguments string, and a copy
of a call already seen (same id, or same name and args) is dropped, not
concatenated (G3). Vertex streams long arguments as `partialArgs` fragments
(`willContinue`): they are assembled into the args object and serialised
once, when the call says it is finished. `executableCode`,
`codeExecutionResult`, `inlineData` and other parts are kept whole, and every
`thoughtSignature` stays with the part it rode on (G5), for the export.

`usageMetadata` is cumulative: REPLACE, never sum (G1). There is no terminal
frame: the reply is over when every candidate has a `finishReason` (G4: a
trailing chunk after it still folds). A prompt blocked before any candidate
(`promptFeedback.blockReason`, G7) finishes choice 0 as `content_filter`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...framing import FrameView
from ...merge import Merger, TextBuffer
from ...findings import Report, Severity
from .._base import CONTENT_FILTER, INCOMPLETE, LENGTH, STOP, Dialect, compact_json

if TYPE_CHECKING:
    from ...result import Result
    from .._shapes import GeminiChunk

try:
    from .._shapes import DECODERS as _DECODERS

    _FAST_SHAPES: Callable[[bytes], Any] | None = _DECODERS["gemini"]
except ImportError:  # no msgspec: no fast way
    _FAST_SHAPES = None

__all__ = ["Gemini"]

_CONTINUATION = "CONTINUATION"
# Part keys that are not the part's data (they ride along with it).
_PART_EXTRAS = frozenset(("thought", "thoughtSignature", "partMetadata", "videoMetadata", "mediaResolution"))
# JSONPath (RFC 9535) segments Vertex uses in partialArgs: .name, [0], ['name'], ["name"].
_PATH_SEGMENT = re.compile(
    r"""\.([^.\[\]'"]+)|\[\s*(\d+)\s*\]|\[\s*'((?:[^'\\]|\\.)*)'\s*\]|\[\s*"((?:[^"\\]|\\.)*)"\s*\]""")
_decoder = json.JSONDecoder()


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class _Part:
    """One part of a candidate's reply, as the non-streaming response would list it."""

    __slots__ = ("kind", "key", "start", "end", "signature", "tool", "whole", "block", "last_frame")

    def __init__(self, kind: str, key: int, frame: int) -> None:
        #: "text", "reasoning", "tool_call" or a whole part's type ("executable_code", ...).
        self.kind = kind
        #: The block key: the part's position among the candidate's parts.
        self.key = key
        #: For text and reasoning: the run's span in the choice's content/reasoning buffer.
        self.start = 0
        self.end = 0
        self.signature: str | None = None
        #: For tool_call: the tool-call key.
        self.tool: int | None = None
        #: For whole parts: the part as sent.
        self.whole: dict[str, Any] | None = None
        self.block: dict[str, Any] = {"type": kind, "index": key}
        self.last_frame = frame


class _Streamed:
    """A Vertex function call whose arguments stream as `partialArgs` fragments."""

    __slots__ = ("key", "part", "name", "id", "args", "continuing")

    def __init__(self, key: int, part: _Part) -> None:
        self.key = key
        self.part = part
        self.name: str | None = None
        self.id: str | None = None
        self.args: dict[str, Any] = {}
        #: jsonPaths whose last string fragment said willContinue.
        self.continuing: set[str] = set()


class _Candidate:
    """Per-candidate bookkeeping: its parts (for blocks and export) and call identity."""

    __slots__ = ("content", "reasoning", "parts", "run", "tools", "tool_ids", "streamed", "finish_frame", "ended",
                 "real", "role", "citations", "citation_keys", "citation_field", "extras", "chosen", "top")

    def __init__(self, content: TextBuffer) -> None:
        self.content = content
        self.reasoning: TextBuffer | None = None
        self.parts: list[_Part] = []
        #: The last part, when it is a visible-text run a plain text fragment extends (the hot path).
        self.run: _Part | None = None
        #: tool key -> (id, name, serialised args) as first kept, for dedupe.
        self.tools: dict[int, tuple[str | None, str | None, str]] = {}
        self.tool_ids: dict[str, int] = {}
        self.streamed: _Streamed | None = None
        #: Frame of the first finishReason that ended it (CONTINUATION does not).
        self.finish_frame: int | None = None
        #: A finishReason (any) arrived: the stream said this candidate is over.
        self.ended = False
        #: A real candidate object arrived (not only choice 0 of a blocked prompt).
        self.real = False
        self.role: str | None = None
        self.citations: list[Any] = []
        self.citation_keys: set[tuple[Any, Any, Any]] = set()
        self.citation_field: str | None = None
        #: Candidate fields kept for export (REPLACE): safetyRatings, groundingMetadata, ...
        self.extras: dict[str, Any] = {}
        self.chosen: list[Any] = []
        self.top: list[Any] = []


class Gemini(Dialect):
    name = "gemini"
    terminal_hint = "a chunk with `finishReason`"
    finish_reasons = {
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

    def __init__(self, merger: Merger | None = None, report: Report | None = None, frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self._candidates: dict[int, _Candidate] = {}
        self._identified = False
        self.fast_decoder = _FAST_SHAPES
        #: The blockReason that finished choice 0 before any candidate (G7), while it stands.
        self._blocked: str | None = None
        self._prompt_feedback: Any = None
        self._create_time: Any = None
        self._model_status: Any = None
        self._prefix_checked = False

    @classmethod
    def claims(cls, value: Any) -> bool:
        if type(value) is not dict:
            return False
        if "candidates" in value or "usageMetadata" in value or "promptFeedback" in value:
            return True
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

    def _state(self, index: int) -> _Candidate:
        state = self._candidates.get(index)
        if state is None:
            state = self._candidates[index] = _Candidate(self.merger.buffer((index, "content")))
        return state

    def fold_fast(self, chunk: GeminiChunk, frame: int, event: bytes | None) -> bool:
        """A chunk decoded by `_shapes`: one candidate's text parts extending its open text run,
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

    def _candidate(self, candidate: dict[str, Any], frame: int) -> None:
        index = candidate.get("index")
        if type(index) is not int:
            index = 0  # G2: proto3 JSON leaves out the zero index
        state = self._candidates.get(index)
        if state is None:
            state = self._state(index)
        if not state.real:
            state.real = True
            if index == 0 and self._blocked is not None:
                self._blocked = None
            self._update_finished()
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
            self._candidate_extras(state, candidate)

    def _candidate_extras(self, state: _Candidate, candidate: dict[str, Any]) -> None:
        extras = state.extras
        for name in ("safetyRatings", "groundingMetadata", "urlContextMetadata", "finishMessage",
                     "avgLogprobs", "tokenCount", "continuationToken"):
            value = candidate.get(name)
            if value is not None:
                extras[name] = value  # REPLACE
        citations = candidate.get("citationMetadata")
        if type(citations) is dict:
            self._citations(state, citations)
        logprobs = candidate.get("logprobsResult")
        if type(logprobs) is dict:
            # EXTEND: each chunk's tokens follow the previous chunk's.
            chosen, top = logprobs.get("chosenCandidates"), logprobs.get("topCandidates")
            if type(chosen) is list:
                state.chosen.extend(chosen)
            if type(top) is list:
                state.top.extend(top)

    def _citations(self, state: _Candidate, metadata: dict[str, Any]) -> None:
        """G6: the Gemini API says `citationSources`, Vertex says `citations`; EXTEND with dedupe."""
        for field in ("citationSources", "citations"):
            items = metadata.get(field)
            if type(items) is not list:
                continue
            if state.citation_field is None:
                state.citation_field = field
            for item in items:
                if type(item) is not dict:
                    continue
                key = (item.get("startIndex"), item.get("endIndex"), item.get("uri"))
                if key not in state.citation_keys:
                    state.citation_keys.add(key)
                    state.citations.append(item)

    # -- parts ------------------------------------------------------------------

    def _part(self, index: int, state: _Candidate, part: dict[str, Any], frame: int) -> None:
        signature = part.get("thoughtSignature")
        if type(signature) is not str or not signature:
            signature = None
        text = part.get("text")
        if type(text) is str:
            if text or signature:
                self._text(index, state, text, part.get("thought") is True, signature, frame)
            return
        call = part.get("functionCall")
        if call is not None:
            if type(call) is dict:
                self._function_call(index, state, call, signature, frame)
            else:
                self.report.diagnostic(
                    "unexpected-payload", frame,
                    f"candidate {index}: a `functionCall` that is a {type(call).__name__}, not an object; ignored")
            return
        data = [key for key in part if key not in _PART_EXTRAS]
        if not data:
            if signature:
                # A signature alone (G5): it belongs with the text run before it.
                self._text(index, state, "", part.get("thought") is True, signature, frame)
            return
        # executableCode, codeExecutionResult, inlineData, fileData, ...: WHOLE.
        new = self._open(index, state, _snake(data[0]), frame)
        new.whole = part
        new.signature = signature

    def _open(self, index: int, state: _Candidate, kind: str, frame: int) -> _Part:
        """Start a new part (block): close the previous one at its last frame."""
        parts = state.parts
        if parts:
            last = parts[-1]
            self.merger.replace((index, "block", last.key), last.block, last.last_frame)
        part = _Part(kind, len(parts), frame)
        parts.append(part)
        state.run = None
        self.merger.replace((index, "block", part.key), part.block, frame)
        return part

    def _text(self, index: int, state: _Candidate, text: str, thought: bool, signature: str | None,
              frame: int) -> None:
        if thought:
            buffer = state.reasoning
            if buffer is None:
                buffer = state.reasoning = self.merger.buffer((index, "reasoning"))
            kind = "reasoning"
        else:
            buffer = state.content
            kind = "text"
        if text and state.finish_frame is not None and frame > state.finish_frame:
            self._after_finish(index, state, frame, "reasoning" if thought else "text")
        parts = state.parts
        last = parts[-1] if parts else None
        if last is None or last.kind != kind or (signature and last.signature and signature != last.signature):
            last = self._open(index, state, kind, frame)
            last.start = last.end = buffer.length
        if text:
            buffer.add(text, frame)
            last.end = buffer.length
        if signature:
            last.signature = signature
        last.last_frame = frame
        if kind == "text" and state.finish_frame is None:
            state.run = last

    def _function_call(self, index: int, state: _Candidate, call: dict[str, Any], signature: str | None,
                       frame: int) -> None:
        name = call.get("name") or None
        call_id = call.get("id") or None
        streamed = state.streamed
        if streamed is not None:
            if (name is not None and streamed.name is not None and name != streamed.name) or (
                    call_id is not None and streamed.id is not None and call_id != streamed.id):
                self._close_streamed(index, state, frame, unfinished=True)
            else:
                self._continue_streamed(index, state, streamed, call, signature, frame)
                return
        if state.finish_frame is not None and frame > state.finish_frame:
            self._after_finish(index, state, frame, "a function call")
        partial = call.get("partialArgs")
        if partial is not None or call.get("willContinue") is True:
            key = len(state.tools)
            part = self._open(index, state, "tool_call", frame)
            part.tool, part.signature = key, signature
            streamed = state.streamed = _Streamed(key, part)
            state.tools[key] = (call_id, name, "")
            if call_id is not None:
                state.tool_ids[call_id] = key
            path = (index, "tool", key)
            self.merger.set_once((*path, "id"), call_id, frame)
            self.merger.set_once((*path, "name"), name, frame)
            streamed.name, streamed.id = name, call_id
            self._continue_streamed(index, state, streamed, call, None, frame)
            return
        args = call.get("args")
        arguments = "" if args is None else _dumps(args)
        if name is None and args is None:
            self.report.diagnostic(
                "unexpected-payload", frame,
                f"candidate {index}: a `functionCall` with no name, args or partialArgs outside a streamed call; ignored")
            return
        known = self._known_call(state, call_id, name, arguments)
        if known is not None:
            self._repeated_call(index, state, known, call_id, name, arguments, signature, frame)
            return
        key = len(state.tools)
        state.tools[key] = (call_id, name, arguments)
        if call_id is not None:
            state.tool_ids[call_id] = key
        part = self._open(index, state, "tool_call", frame)
        part.tool, part.signature = key, signature
        path = (index, "tool", key)
        merger = self.merger
        merger.set_once((*path, "id"), call_id, frame)
        merger.set_once((*path, "name"), name, frame)
        merger.append((*path, "arguments"), arguments, frame)
        merger.parse((*path, "arguments"), frame)  # a whole call is a closed block

    def _known_call(self, state: _Candidate, call_id: str | None, name: str | None, arguments: str) -> int | None:
        """G3: the key of a call this one repeats (same id; or, without ids, same name and args)."""
        if call_id is not None:
            key = state.tool_ids.get(call_id)
            if key is not None:
                return key
        for key, (held_id, held_name, held_arguments) in state.tools.items():
            if held_name == name and held_arguments == arguments and (held_id is None or call_id is None):
                return key
        return None

    def _repeated_call(self, index: int, state: _Candidate, key: int, call_id: str | None, name: str | None,
                       arguments: str, signature: str | None, frame: int) -> None:
        held_id, held_name, held_arguments = state.tools[key]
        part = next(p for p in state.parts if p.tool == key)
        if signature and not part.signature:
            part.signature = signature
        path = (index, "tool", key)
        if held_arguments == arguments and (name is None or held_name in (None, name)):
            self.report.diagnostic(
                "tool-call-repeated", frame,
                f"candidate {index}: function call {key} ({held_name}) was sent again in frame {frame}; it is kept "
                "once. Function calls arrive whole: a client that turns each copy into an argument delta glues "
                "them into `{..}{..}`, one that lists each copy runs the tool twice (G3)",
                choice=index, tool_call=key, changed=False)
            return
        # Same id, new content: keep the last version (G3).
        state.tools[key] = (held_id or call_id, held_name or name, arguments)
        self.merger.replace_text((*path, "arguments"), [(arguments, frame)])
        self.merger.parse((*path, "arguments"), frame)
        if held_name is None:
            self.merger.set_once((*path, "name"), name, frame)
        part.last_frame = frame
        self.merger.replace((index, "block", part.key), part.block, frame)
        self.report.diagnostic(
            "tool-call-repeated", frame,
            f"candidate {index}: function call {key} (id {held_id!r}) was sent again in frame {frame} with "
            f"different arguments; the last version is kept. A client that appends both copies gets "
            "`{..}{..}` (G3)",
            choice=index, tool_call=key, changed=True)

    # -- Vertex streamed arguments (partialArgs / willContinue) ----------------

    def _continue_streamed(self, index: int, state: _Candidate, streamed: _Streamed, call: dict[str, Any],
                           signature: str | None, frame: int) -> None:
        path = (index, "tool", streamed.key)
        if streamed.name is None and call.get("name"):
            streamed.name = self.merger.set_once((*path, "name"), call["name"], frame)
        if streamed.id is None and call.get("id"):
            streamed.id = self.merger.set_once((*path, "id"), call["id"], frame)
            state.tool_ids.setdefault(call["id"], streamed.key)
        if signature and not streamed.part.signature:
            streamed.part.signature = signature
        args = call.get("args")
        if type(args) is dict:
            streamed.args.update(args)
        partial = call.get("partialArgs")
        if type(partial) is list:
            for fragment in partial:
                if type(fragment) is dict:
                    self._partial_arg(index, streamed, fragment, frame)
        streamed.part.last_frame = frame
        if call.get("willContinue") is not True:
            self._close_streamed(index, state, frame)

    def _partial_arg(self, index: int, streamed: _Streamed, fragment: dict[str, Any], frame: int) -> None:
        json_path = fragment.get("jsonPath")
        keys = _parse_json_path(json_path) if type(json_path) is str else None
        if not keys:
            self.report.diagnostic(
                "unexpected-payload", frame,
                f"candidate {index}: a partialArgs fragment with jsonPath {json_path!r}, which is not a path into "
                "the arguments; ignored", once=(index, streamed.key, "path"))
            return
        assert type(json_path) is str
        if "stringValue" in fragment:
            value: Any = fragment["stringValue"]
            if json_path in streamed.continuing:
                held = _get_path(streamed.args, keys)
                if type(held) is str and type(value) is str:
                    value = held + value  # APPEND to the string the previous fragment left open
        elif "numberValue" in fragment:
            value = fragment["numberValue"]
        elif "boolValue" in fragment:
            value = fragment["boolValue"]
        elif "nullValue" in fragment:
            value = None
        else:
            return
        _set_path(streamed.args, keys, value)
        if fragment.get("willContinue") is True:
            streamed.continuing.add(json_path)
        else:
            streamed.continuing.discard(json_path)

    def _close_streamed(self, index: int, state: _Candidate, frame: int, *, unfinished: bool = False) -> None:
        streamed = state.streamed
        assert streamed is not None
        state.streamed = None
        arguments = _dumps(streamed.args)
        state.tools[streamed.key] = (streamed.id, streamed.name, arguments)
        path = (index, "tool", streamed.key, "arguments")
        self.merger.append(path, arguments, frame)
        self.merger.parse(path, frame)
        part = streamed.part
        self.merger.replace((index, "block", part.key), part.block, part.last_frame)
        if unfinished:
            self.report.diagnostic(
                "streamed-call-unfinished", part.last_frame,
                f"candidate {index}: the streamed function call {streamed.key} ({streamed.name}) never said it was "
                "finished (its last fragment had willContinue: true); its arguments are the fragments that "
                "arrived, and may be incomplete",
                choice=index, tool_call=streamed.key)

    # -- finish, prompt feedback, errors ------------------------------------------

    def _finish(self, index: int, state: _Candidate, raw: Any, frame: int) -> None:
        if type(raw) is not str:
            return
        held = self.merger.get((index, "finish_reason"))
        if held is not None and held != raw and held != _CONTINUATION:
            self.report.diagnostic(
                "finish-reason-conflict", frame,
                f"candidate {index} finishReason changed from {held!r} to {raw!r}; the last value is kept",
                once=(index,), choice=index, previous=held, value=raw)
        self.merger.replace((index, "finish_reason"), raw, frame)
        if raw == _CONTINUATION:
            self.report.diagnostic(
                "reply-continues", frame,
                f"candidate {index} stopped with finishReason CONTINUATION: the reply goes on in another request "
                "made with its continuationToken (google-genai 3.x automatic continuation). This capture holds one "
                "hop, so the reply is incomplete (G8)",
                severity=Severity.INFO, once=(index, frame), choice=index)
        elif state.finish_frame is None:
            state.finish_frame = frame
            state.run = None  # later text is content after the finish: off the hot path
        if not state.ended:
            state.ended = True
            self._update_finished()

    def _update_finished(self) -> None:
        ended = [state.ended for state in self._candidates.values() if state.real]
        self.finish_reply((bool(ended) and all(ended)) or (not ended and self._blocked is not None))

    def _feedback(self, feedback: Any, has_candidates: bool, frame: int) -> None:
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
            "Choice 0 is finished as content_filter (G7)",
            once=True, reason=reason)
        self._update_finished()

    def _in_stream_error(self, error: Any, frame: int, how: str = "") -> None:
        if type(error) is dict:
            message = error.get("message") or error.get("status") or _dumps(error)
            code = " ".join(str(part) for part in (error.get("code"), error.get("status")) if part not in (None, ""))
        else:
            message, code = str(error), ""
        detail = f" ({code})" if code else ""
        self.report.error(
            "in-stream-error", frame,
            f"the server sent an error{detail} inside the HTTP 200 stream{how}: {message}",
            raw=error if type(error) is str else json.dumps({"error": error}, ensure_ascii=False))
        unfinished = [i for i, s in self._candidates.items() if not s.ended and s.real] or [0]
        for index in unfinished:
            self._state(index)
            self.merger.replace((index, "error"), str(message), frame)

    def _after_finish(self, index: int, state: _Candidate, frame: int, what: str) -> None:
        self.report.diagnostic(
            "content-after-finish", frame,
            f"frame {frame} adds {what} to candidate {index} after frame {state.finish_frame} gave its "
            "finishReason; it is folded, but a client that stops at the finishReason loses it",
            once=(index,), choice=index, finish_frame=state.finish_frame)

    # -- end of stream --------------------------------------------------------------

    def finish(self, last_frame: int) -> None:
        for index, state in self._candidates.items():
            if state.streamed is not None:
                self._close_streamed(index, state, last_frame, unfinished=True)
            if state.parts:
                last = state.parts[-1]
                self.merger.replace((index, "block", last.key), last.block, last.last_frame)
        self._unframed_errors()

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
                value, _ = _decoder.raw_decode(text, text.index("{"))
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

    def normalise_usage(self, raw: Any) -> dict[str, Any] | None:
        if type(raw) is not dict:
            return None
        prompt = _count(raw.get("promptTokenCount"))
        tool_prompt = _count(raw.get("toolUsePromptTokenCount"))
        candidates = _count(raw.get("candidatesTokenCount"))
        thoughts = _count(raw.get("thoughtsTokenCount"))
        total = _count(raw.get("totalTokenCount"))
        input_tokens = prompt if tool_prompt is None else (prompt or 0) + tool_prompt
        # Output counts what the model generated, thoughts included (as OpenAI's
        # completion_tokens and Anthropic's output_tokens do); Gemini counts them apart.
        output_tokens = None if candidates is None and thoughts is None else (candidates or 0) + (thoughts or 0)
        if total is None and input_tokens is not None and output_tokens is not None:
            total = input_tokens + output_tokens
        return {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "reasoning_tokens": thoughts,
            "cache_read_tokens": _count(raw.get("cachedContentTokenCount")),
            "total_tokens": total,
        }

    # -- export -----------------------------------------------------------------------

    def export(self, result: Result) -> dict[str, Any]:
        """The `GenerateContentResponse` a non-streaming `generateContent` would have returned (REST camelCase)."""
        candidates = []
        for choice in result.choices:
            state = self._candidates.get(choice.index)
            if state is None or not state.real:
                continue  # choice 0 of a blocked prompt has no candidate
            calls = {call.key: call for call in choice.tool_calls}
            parts: list[dict[str, Any]] = []
            for part in state.parts:
                item: dict[str, Any]
                if part.kind == "text":
                    item = {"text": choice.content[part.start:part.end]}
                elif part.kind == "reasoning":
                    item = {"text": (choice.reasoning or "")[part.start:part.end], "thought": True}
                elif part.kind == "tool_call":
                    call = calls.get(part.tool) if part.tool is not None else None
                    if call is None:
                        continue
                    function: dict[str, Any] = {"name": call.name,
                                                "args": call.parsed if type(call.parsed) is dict else {}}
                    if call.id is not None:
                        function = {"id": call.id, **function}
                    item = {"functionCall": function}
                else:
                    parts.append(dict(part.whole or {}))
                    continue
                if part.signature:
                    item["thoughtSignature"] = part.signature
                parts.append(item)
            candidate: dict[str, Any] = {"content": {"parts": parts, "role": state.role or "model"}}
            if choice.finish_reason_raw is not None:
                candidate["finishReason"] = choice.finish_reason_raw
            candidate["index"] = choice.index
            for name, value in state.extras.items():
                candidate[name] = value
            if state.citations:
                candidate["citationMetadata"] = {state.citation_field or "citationSources": state.citations}
            if state.chosen or state.top:
                candidate["logprobsResult"] = {"topCandidates": state.top, "chosenCandidates": state.chosen}
            candidates.append(candidate)
        out: dict[str, Any] = {}
        if candidates:
            out["candidates"] = candidates
        if self._prompt_feedback is not None:
            out["promptFeedback"] = self._prompt_feedback
        if result.usage is not None:
            out["usageMetadata"] = result.usage.raw
        if result.model is not None:
            out["modelVersion"] = result.model
        if result.id is not None:
            out["responseId"] = result.id
        if self._create_time is not None:
            out["createTime"] = self._create_time
        if self._model_status is not None:
            out["modelStatus"] = self._model_status
        return out

    @classmethod
    def read_response(cls, value: Any) -> dict[str, Any] | None:
        """A `GenerateContentResponse` (candidate 0): text and thought parts, function calls."""
        candidates = value.get("candidates") if isinstance(value, dict) else None
        if not (isinstance(candidates, list) and candidates and isinstance(candidates[0], dict)):
            feedback = value.get("promptFeedback") if isinstance(value, dict) else None
            if isinstance(feedback, dict) and feedback.get("blockReason"):
                # A blocked prompt (G7): no candidates. Whatever the block reason (even OTHER),
                # the fold ends choice 0 as content_filter, which is what SAFETY normalises to.
                return {"content": "", "reasoning": None, "tool_calls": [], "finish_reason": "SAFETY",
                        "usage": value.get("usageMetadata")}
            return None
        content = candidates[0].get("content")
        parts = [p for p in (content.get("parts", []) if isinstance(content, dict) else []) if isinstance(p, dict)]
        thoughts = "".join(p.get("text", "") for p in parts if p.get("thought"))
        return {
            "content": "".join(p.get("text", "") for p in parts if not p.get("thought")),
            "reasoning": thoughts or None,
            "tool_calls": [(p["functionCall"].get("name"), json.dumps(p["functionCall"].get("args", {}),
                                                                      separators=(",", ":"), ensure_ascii=False))
                           for p in parts if isinstance(p.get("functionCall"), dict)],
            "finish_reason": candidates[0].get("finishReason"),
            "usage": value.get("usageMetadata"),
        }

    @classmethod
    def summarize(cls, value: Any) -> str:
        if type(value) is not dict:
            return compact_json(value)
        out: list[str] = []
        error = value.get("error")
        if error:
            out.append(f"error {compact_json(error, 120)}")
        candidates = value.get("candidates")
        for candidate in candidates if type(candidates) is list else ():
            if type(candidate) is not dict:
                continue
            index = candidate.get("index")
            prefix = f"[{index}] " if type(index) is int and index else ""
            content = candidate.get("content")
            parts = content.get("parts") if type(content) is dict else None
            for part in parts if type(parts) is list else ():
                if type(part) is not dict:
                    continue
                signed = " (signed)" if part.get("thoughtSignature") else ""
                if type(part.get("text")) is str:
                    kind = "thought" if part.get("thought") is True else "text"
                    if part["text"] or signed:
                        out.append(f"{prefix}{kind} {compact_json(part['text'], 80)}{signed}")
                elif type(part.get("functionCall")) is dict:
                    call = part["functionCall"]
                    name = f" {call['name']}" if call.get("name") else ""
                    args = call.get("args") if "args" in call else call.get("partialArgs")
                    more = " …" if call.get("willContinue") is True else ""
                    out.append(f"{prefix}call{name} {compact_json(args, 60)}{more}{signed}")
                else:
                    kinds = [key for key in part if key not in _PART_EXTRAS]
                    out.append(f"{prefix}{kinds[0] if kinds else 'part'}{signed}")
            if candidate.get("finishReason"):
                out.append(f"{prefix}finish {candidate['finishReason']}")
        feedback = value.get("promptFeedback")
        if type(feedback) is dict and feedback.get("blockReason"):
            out.append(f"prompt blocked {feedback['blockReason']}")
        usage = value.get("usageMetadata")
        if type(usage) is dict:
            out.append(f"usage total {usage.get('totalTokenCount', '?')}")
        return ", ".join(out) or "(empty chunk)"


def _count(value: Any) -> int | None:
    return value if type(value) is int else None


def _parse_json_path(path: str) -> list[str | int] | None:
    """`$.a.b[0]['c d']` -> ["a", "b", 0, "c d"]; None when it is not such a path."""
    text = path.strip()
    if text.startswith("$"):
        text = text[1:]
    elif text and text[0] not in ".[":
        text = "." + text  # a bare member name, as some gateways send
    keys: list[str | int] = []
    position = 0
    while position < len(text):
        match = _PATH_SEGMENT.match(text, position)
        if match is None:
            return None
        member, number, single, double = match.groups()
        if number is not None:
            keys.append(int(number))
        else:
            name = member if member is not None else (single if single is not None else double)
            keys.append(re.sub(r"\\(.)", r"\1", name) if member is None else name)
        position = match.end()
    return keys


def _get_path(root: Any, keys: list[str | int]) -> Any:
    node = root
    for key in keys:
        if type(key) is int and type(node) is list and key < len(node):
            node = node[key]
        elif type(key) is str and type(node) is dict and key in node:
            node = node[key]
        else:
            return None
    return node


def _set_path(root: dict[str, Any], keys: list[str | int], value: Any) -> None:
    node: Any = root
    for position, key in enumerate(keys):
        last = position == len(keys) - 1
        following = None if last else keys[position + 1]
        fresh: Any = value if last else ([] if type(following) is int else {})
        if type(key) is int:
            if type(node) is not list:
                return  # the path contradicts what was built so far
            while len(node) <= key:
                node.append(None)
            if last or type(node[key]) not in (dict, list):
                node[key] = fresh
            node = node[key]
        else:
            if type(node) is not dict:
                return
            if last or type(node.get(key)) not in (dict, list):
                node[key] = fresh
            node = node[key]
