"""llama.cpp native `POST /completion` (and `/infill`), reference §4.8, traps F5 and B7.

SSE, data-only. Each event carries `content` (APPEND) and `stop: false`; the
final event has `stop: true` (terminal) with `stop_type` (`eos`/`word` ->
stop, `limit` -> length; builds before `stop_type` sent `stopped_eos`,
`stopped_word`, `stopped_limit` booleans, whose names are then the raw
value), `tokens_evaluated` (input), `tokens_predicted` (output), `timings`
(kept raw; `timings.cache_n`, when a build sends it, is the cached prompt
part) and `model`. There is no `[DONE]` in the documented shape; one is
tolerated. Heartbeats are `:` comments (framing drops them).

Errors: `data: {"error": {code, message, type}}` since ggml-org/llama.cpp#16109;
before it, an `error: {...}` SSE field, which spec clients ignore (F5). The
core turns that field into an in-stream error and calls `in_stream_error`,
which ends choice 0 with it; nothing more is needed here.

B7: with `n_probs`, each event's `completion_probabilities` (or `probs`)
entries carry the token's `bytes`. A token that is only part of a multi-byte
UTF-8 character shows U+FFFD in `content`. When every fragment has its bytes
the text is rebuilt from them (each frame keeps the characters its bytes
completed); otherwise the content is kept and the U+FFFD reported.
"""

from __future__ import annotations

import codecs
import json
import re
from typing import TYPE_CHECKING, Any, ClassVar

from .._base import LENGTH, STOP, Dialect, compact_json

if TYPE_CHECKING:
    from ...findings import Report
    from ...framing import FrameIssue, FrameView
    from ...merge import Merger
    from ...result import Result

__all__ = ["LlamaCpp"]

_USAGE_KEYS = ("tokens_evaluated", "tokens_predicted", "tokens_cached", "timings")
_OLD_STOP_FLAGS = ("stopped_eos", "stopped_word", "stopped_limit")
_REPLACEMENT_RUN = re.compile("\ufffd+")


class LlamaCpp(Dialect):
    name = "llama-cpp"
    finish_reasons: ClassVar[dict[str, str]] = {
        "eos": STOP,
        "word": STOP,
        "limit": LENGTH,
        "stopped_eos": STOP,
        "stopped_word": STOP,
        "stopped_limit": LENGTH,
    }
    terminal_hint = "an event with `stop: true`"

    @staticmethod
    def carried_error(issue: FrameIssue) -> tuple[str, str] | None:
        """llama.cpp before ggml-org/llama.cpp#16109 sent errors as an SSE `error:` field, which SSE
        clients ignore as an unknown field: the in-stream error it stands for, as (message, raw)."""
        if issue.code != "unknown-field" or issue.text.partition(":")[0] != "error":
            return None
        value = issue.text.partition(":")[2].strip()
        return f"the server sent an error as a non-standard `error:` field (SSE clients ignore it): {value}", value

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self._content = self.merger.buffer((0, "content"))
        #: First frame whose content holds U+FFFD (B7), if any.
        self._replacement: int | None = None
        #: (token bytes, frame) per fragment while every fragment had them; None once one had none.
        self._bytes: list[tuple[bytes, int]] | None = []
        self._final: dict[str, Any] | None = None

    @classmethod
    def claims(cls, value: object) -> bool:
        return (type(value) is dict and type(value.get("stop")) is bool
                and ("content" in value or "prompt_progress" in value)
                and "type" not in value and "choices" not in value and "object" not in value)

    def fold(self, value: object, frame: int) -> None:
        if type(value) is not dict:
            self.report.diagnostic(
                "unexpected-payload", frame,
                f"expected a JSON object (a llama.cpp completion event), got {type(value).__name__}; ignored")
            return
        content = value.get("content")
        final = value.get("stop") is True
        if type(content) is str and content:
            self._content.add(content, frame)
            if self._replacement is None and "\ufffd" in content:
                self._replacement = frame
        else:
            content = ""
        if self._bytes is not None and (content or not final):
            # The final event of a stream repeats every token's probabilities in some builds:
            # only its own fragment (when it has text) counts.
            chunk = _token_bytes(value)
            if chunk is not None:
                self._bytes.append((chunk, frame))
            elif content:
                self._bytes = None  # a fragment without bytes: the text cannot be rebuilt
        if final:
            self._final_event(value, frame)
        elif value.get("error") is not None:
            self._error(value["error"], frame)

    def _final_event(self, value: dict[str, Any], frame: int) -> None:
        merger = self.merger
        raw = value.get("stop_type")
        if type(raw) is not str or not raw:
            raw = next((flag for flag in _OLD_STOP_FLAGS if value.get(flag) is True), None)
        if raw is not None:
            merger.replace((0, "finish_reason"), raw, frame)
        usage = {key: value[key] for key in _USAGE_KEYS if key in value}
        if usage:
            merger.replace(("usage",), usage, frame)
        model = value.get("model")
        if type(model) is str:
            merger.set_once(("model",), model, frame)
        self._final = value
        self.terminate(frame)

    def _error(self, error: object, frame: int) -> None:
        if type(error) is dict:
            message = error.get("message") or compact_json(error)
            code = error.get("type") or error.get("code")
        else:
            message, code = error if type(error) is str else compact_json(error), None
        detail = f" ({code})" if code not in (None, "") else ""
        self.in_stream_error(frame, f"llama.cpp sent an error inside the HTTP 200 stream{detail}: {message}",
                             raw=json.dumps(error, ensure_ascii=False))

    # -- end of stream -------------------------------------------------------

    def finish(self, last_frame: int) -> None:
        super().finish(last_frame)
        if self._replacement is not None:
            self._rebuild_from_bytes()

    def _rebuild_from_bytes(self) -> None:
        """B7: rebuild the text from the token bytes when every fragment had them."""
        at = self._replacement
        content = self._content.text()
        count = content.count("\ufffd")
        fragments = self._bytes
        if fragments:
            decoder = codecs.getincrementaldecoder("utf-8")("replace")
            pieces = [(text, frame) for chunk, frame in fragments if (text := decoder.decode(chunk))]
            tail = decoder.decode(b"", True)
            if tail:
                pieces.append((tail, fragments[-1][1]))
            rebuilt = "".join(text for text, _ in pieces)
            if _agrees(content, rebuilt):
                self.merger.replace_text((0, "content"), pieces)
                self.report.diagnostic(
                    "text-rebuilt-from-bytes", at,
                    f"the streamed content has {count} U+FFFD replacement character(s), the first from frame "
                    f"{at}: a token that is only part of a multi-byte UTF-8 character was sent as text. "
                    "Every fragment carried its token bytes, so the content was rebuilt from them (now "
                    f"{rebuilt.count(chr(0xFFFD))} U+FFFD). A client that joins `content` shows the broken "
                    "characters", replaced=count)
                return
            reason = "the token bytes do not spell the streamed text, so they were not used"
        else:
            reason = ("not every fragment carries its token bytes (`completion_probabilities[].bytes`, sent "
                      "with `n_probs`), so the text cannot be rebuilt")
        self.report.diagnostic(
            "replacement-char-in-text", at,
            f"the streamed content has {count} U+FFFD replacement character(s), the first from frame {at}: "
            f"probably a token that is only part of a multi-byte UTF-8 character; {reason}. The content "
            "is kept as streamed", replaced=count)

    def normalise_usage(self, raw: object) -> dict[str, Any] | None:
        if type(raw) is not dict:
            return None
        input_tokens = raw.get("tokens_evaluated")
        output_tokens = raw.get("tokens_predicted")
        timings = raw.get("timings")
        cached = timings.get("cache_n") if type(timings) is dict else None
        total = None
        if isinstance(input_tokens, int) and isinstance(output_tokens, int):
            total = input_tokens + output_tokens
        return {"input_tokens": input_tokens, "output_tokens": output_tokens, "reasoning_tokens": None,
                "cache_read_tokens": cached if isinstance(cached, int) else None, "total_tokens": total}

    def native(self) -> dict[str, Any] | None:
        """The final event (`stop: true`), the non-streaming response's envelope, as sent but for
        its `content` fragment, left empty (the export puts the whole reply there)."""
        final = self._final
        if final is None or "content" not in final:
            return final
        return {**final, "content": ""}

    @classmethod
    def export(cls, result: Result) -> dict[str, Any]:
        """The non-streaming `/completion` response: the final object, with the whole `content`."""
        choice = result.choice(0)
        final = result.native
        out: dict[str, Any] = dict(final) if isinstance(final, dict) else {"stop_type": "none"}
        out["content"] = choice.content if choice is not None else ""
        out["stop"] = True
        return out

    @classmethod
    def read_response(cls, value: object) -> dict[str, Any] | None:
        """The non-streaming `/completion` response: the whole `content`, `stop: true`, its stop type."""
        if not (isinstance(value, dict) and isinstance(value.get("content"), str) and value.get("stop") is True
                and ("stop_type" in value or any(key in value for key in (*_USAGE_KEYS, *_OLD_STOP_FLAGS)))):
            return None
        raw = value.get("stop_type")
        if not isinstance(raw, str) or not raw:
            raw = next((flag for flag in _OLD_STOP_FLAGS if value.get(flag) is True), None)
        usage = {key: value[key] for key in _USAGE_KEYS if key in value}
        return {"content": value["content"], "reasoning": None, "tool_calls": [], "finish_reason": raw,
                "usage": usage or None}

    @classmethod
    def summarize(cls, value: object) -> str:
        if type(value) is not dict:
            return compact_json(value)
        parts: list[str] = []
        if value.get("content"):
            parts.append(f"content {compact_json(value['content'], 80)}")
        if value.get("stop") is True:
            stop = value.get("stop_type") or next((f for f in _OLD_STOP_FLAGS if value.get(f) is True), "?")
            parts.append(f"stop {stop}")
        if "prompt_progress" in value:
            parts.append("prompt progress")
        if value.get("error") is not None:
            parts.append(f"error {compact_json(value['error'], 100)}")
        return ", ".join(parts) or "(empty)"


def _token_bytes(value: dict[str, Any]) -> bytes | None:
    """The concatenated `bytes` of the event's token probabilities, or None if any is missing."""
    probs = value.get("completion_probabilities")
    if type(probs) is not list:
        probs = value.get("probs")
    if type(probs) is not list or not probs:
        return None
    out = bytearray()
    for entry in probs:
        if type(entry) is not dict:
            return None
        raw = entry.get("bytes")
        if type(raw) is not list:
            return None
        try:
            out += bytes(raw)
        except (TypeError, ValueError):
            return None
    return bytes(out)


def _agrees(content: str, rebuilt: str) -> bool:
    """Does `rebuilt` equal `content` with each run of U+FFFD standing for 1+ characters?"""
    segments = _REPLACEMENT_RUN.split(content)
    if len(segments) == 1:
        return content == rebuilt
    first, *middle, last = segments
    if not rebuilt.startswith(first):
        return False
    position = len(first)
    for segment in middle:
        found = rebuilt.find(segment, position + 1)
        if found < 0:
            return False
        position = found + len(segment)
    return len(rebuilt) - len(last) >= position + 1 and rebuilt.endswith(last)
