"""Hugging Face TGI `POST /generate_stream`, reference §4.8 and trap B6.

SSE, data-only, `data:` with no space (axum's `Event::json_data`). Each event
is `{index, token {id, text, logprob, special}, top_tokens, generated_text,
details}`; `index` is the token position, not a choice (single reply:
choice 0).

- APPEND `token.text` unless `token.special` (B6: `</s>`, `<|eot_id|>` are
  tokenizer markers, not reply text; a client that appends every token shows
  them).
- The last event is the one with a non-null `generated_text`: it is terminal
  and authoritative (REPLACE). When it differs from the joined tokens
  (`return_full_text` puts the prompt in front, a tokenizer decodes the whole
  sequence differently), `generated_text` is kept and the difference is
  reported.
- `details {finish_reason, generated_tokens, input_length, seed}` is only
  there when the request asked for `details: true`: finish reason
  (`eos_token`/`stop_sequence` -> stop, `length` -> length) and usage
  (`input_length` in, `generated_tokens` out) come from it.
- Errors: `{"error": "...", "error_type": "generation" | "overloaded" |
  "validation" | "incomplete_generation"}` (router `impl From<InferError> for
  Event`), the last event of the stream: an in-stream error.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

from ...findings import Severity
from .._base import LENGTH, STOP, Dialect, compact_json

if TYPE_CHECKING:
    from ...findings import Report
    from ...framing import FrameView
    from ...merge import Merger
    from ...result import Result

__all__ = ["TGI"]


class TGI(Dialect):
    name = "tgi"
    finish_reasons: ClassVar[dict[str, str]] = {"eos_token": STOP, "stop_sequence": STOP, "length": LENGTH}
    terminal_hint = "the last event, with a non-null `generated_text`"

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self._content = self.merger.buffer((0, "content"))
        #: Every streamed token object, for the non-streaming `details.tokens` of export.
        self._tokens: list[dict[str, Any]] = []
        self._details: dict[str, Any] | None = None

    @classmethod
    def claims(cls, value: object) -> bool:
        if type(value) is not dict:
            return False
        if type(value.get("token")) is dict and "generated_text" in value:
            return True
        # TGI's ErrorResponse: a stream that fails before its first token has only this.
        return type(value.get("error")) is str and type(value.get("error_type")) is str

    def fold(self, value: object, frame: int) -> None:
        if type(value) is not dict:
            self._unexpected(value, frame)
            return
        token = value.get("token")
        if type(token) is dict:
            self._tokens.append(token)
            text = token.get("text")
            if token.get("special") is True:
                self._special(text, frame)
            elif type(text) is str:
                self._content.add(text, frame)
        generated = value.get("generated_text")
        if generated is not None:
            self._last_event(value, generated, frame)
        elif "error" in value and value["error"] is not None:
            self._error(value, frame)

    def _special(self, text: object, frame: int) -> None:
        self.report.diagnostic(
            "special-token-skipped", frame,
            f"frame {frame} streams the special token {text!r} (`token.special: true`): it is a tokenizer "
            "marker, not reply text, so it was not added to the content. A client that appends every "
            "`token.text` shows it", severity=Severity.INFO, once="tgi-special", token=text)

    def _last_event(self, value: dict[str, Any], generated: object, frame: int) -> None:
        merger = self.merger
        details = value.get("details")
        if type(details) is dict:
            self._details = details
            finish = details.get("finish_reason")
            if type(finish) is str and finish:
                merger.replace((0, "finish_reason"), finish, frame)
            merger.replace(("usage",), details, frame)
        if type(generated) is str:
            joined = self._content.text()
            if generated != joined:
                self._replace(generated, joined, frame)
        self.terminate(frame)

    def _replace(self, generated: str, joined: str, frame: int) -> None:
        """REPLACE: `generated_text` is authoritative, so it is the content, from the last frame."""
        if joined and generated.endswith(joined):
            cause = (f"it is the joined tokens with {len(generated) - len(joined)} characters in front (the "
                     "request had `return_full_text: true`, so TGI puts the prompt first)")
        elif not joined:
            cause = "no token text was streamed before it"
        else:
            cause = "the tokens decoded one by one do not add up to the text TGI decoded in one go"
        # One piece from the last frame: provenance stays in frame order (blocks span first..last frame).
        self.merger.replace_text((0, "content"), [(generated, frame)])
        self.report.diagnostic(
            "final-text-mismatch", frame,
            f"the last event's `generated_text` ({len(generated)} characters) differs from the joined "
            f"`token.text` values ({len(joined)} characters): {cause}. `generated_text` is kept, because "
            "TGI makes it authoritative; a client that joins tokens shows the other text",
            field="content", final_length=len(generated), joined_length=len(joined))

    def _error(self, value: dict[str, Any], frame: int) -> None:
        error = value["error"]
        kind = value.get("error_type")
        detail = f" ({kind})" if type(kind) is str and kind else ""
        message = error if type(error) is str else compact_json(error)
        self.in_stream_error(frame, f"TGI sent an error inside the HTTP 200 stream{detail}: {message}",
                             raw=json.dumps(value, ensure_ascii=False))

    def _unexpected(self, value: object, frame: int) -> None:
        self.report.diagnostic(
            "unexpected-payload", frame,
            f"expected a JSON object (a TGI stream event), got {type(value).__name__}; ignored")

    def normalise_usage(self, raw: object) -> dict[str, Any] | None:
        if type(raw) is not dict:
            return None
        input_tokens = raw.get("input_length")
        output_tokens = raw.get("generated_tokens")
        total = None
        if isinstance(input_tokens, int) and isinstance(output_tokens, int):
            total = input_tokens + output_tokens
        return {"input_tokens": input_tokens, "output_tokens": output_tokens, "reasoning_tokens": None,
                "cache_read_tokens": None, "total_tokens": total}

    def native(self) -> dict[str, Any] | None:
        """With `details` (the request asked for them): its finish reason, token count and seed,
        and every streamed token object, for the response's `details`; else nothing. (The streamed
        details' `input_length` is kept too, though a non-streaming `Details` has no such field: it is
        the usage's input tokens, which the export would otherwise lose.)"""
        details = self._details
        if details is None:
            return None
        kept = {name: details.get(name) for name in ("finish_reason", "generated_tokens", "seed")}
        if "input_length" in details:
            kept["input_length"] = details["input_length"]
        return {"details": kept, "tokens": list(self._tokens)}

    @classmethod
    def export(cls, result: Result) -> dict[str, Any]:
        """The `POST /generate` response: `{generated_text, details?}` (details only if it was asked for)."""
        choice = result.choice(0)
        out: dict[str, Any] = {"generated_text": choice.content if choice is not None else ""}
        native = result.native
        if isinstance(native, dict) and isinstance(native.get("details"), dict):
            out["details"] = {**native["details"], "prefill": [], "tokens": native.get("tokens", [])}
        return out

    @classmethod
    def read_response(cls, value: object) -> dict[str, Any] | None:
        """The `POST /generate` response: `{generated_text, details?}`."""
        if not (isinstance(value, dict) and isinstance(value.get("generated_text"), str)
                and set(value) <= {"generated_text", "details"}):
            return None
        details = value.get("details")
        details = details if isinstance(details, dict) else None
        return {"content": value["generated_text"], "reasoning": None, "tool_calls": [],
                "finish_reason": details.get("finish_reason") if details else None, "usage": details}

    @classmethod
    def summarize(cls, value: object) -> str:
        if type(value) is not dict:
            return compact_json(value)
        parts: list[str] = []
        token = value.get("token")
        if type(token) is dict:
            special = " (special)" if token.get("special") is True else ""
            parts.append(f"token {compact_json(token.get('text'), 80)}{special}")
        if value.get("generated_text") is not None:
            parts.append(f"generated_text {compact_json(value['generated_text'], 60)}")
        details = value.get("details")
        if type(details) is dict:
            parts.append(f"finish {details.get('finish_reason')}")
        if value.get("error") is not None:
            parts.append(f"error {compact_json(value['error'], 100)}")
        return ", ".join(parts) or compact_json(value)
