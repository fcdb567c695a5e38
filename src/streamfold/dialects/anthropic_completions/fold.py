"""Anthropic's legacy Text Completions (`POST /v1/complete`, `stream: true`).

The stream, as the API sends it since `anthropic-version: 2023-06-01` (the anthropic SDKs' `Completion`
type, before 0.50 dropped the resource):

- `event: completion` frames, each `{"type": "completion", "id", "completion", "stop_reason", "model"}`:
  `completion` is the next piece of text (APPEND), `stop_reason` null until the last one says
  `stop_sequence` or `max_tokens` (the end: there is no other terminal event); `stop` names the stop
  sequence that was met. Older captures have no `type` and carry `log_id`; streams of the first API
  version ended with `data: [DONE]`, which ends this one too.
- `event: ping` frames (`{"type": "ping"}`), anywhere: keep-alives.
- `event: error` frames (`{"type": "error", "error": {"type", "message"}}`): the server failed mid-stream.

Chosen where the API said nothing: a later `completion` after the stop reason still folds (the end is a
finish, not a terminal frame, so nothing after it is lost); the 2023-01-01 API sent the whole text so far
in each frame, which no SDK asks for any more: such a stream is folded as pieces (its text repeats), not
guessed at.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ...findings import Report
from ...framing import FrameView
from ...merge import Merger
from .._base import LENGTH, STOP, Dialect, compact_json, event_type

__all__ = ["AnthropicCompletions", "claims_completion"]

#: The fields of a `completion` event folded into the Result; the rest is kept for the export.
_FOLDED = frozenset({"type", "id", "completion", "stop_reason", "model"})


def claims_completion(value: object) -> bool:
    """A `completion` event (with or without its `type`): its text and its stop reason side by side."""
    return (type(value) is dict and type(value.get("completion")) is str and "stop_reason" in value
            and value.get("type", "completion") == "completion")


class AnthropicCompletions(Dialect):
    name = "anthropic-completions"
    terminal_hint = "a `completion` event with a `stop_reason`"
    finish_reasons: ClassVar[dict[str, str]] = {"stop_sequence": STOP, "max_tokens": LENGTH}
    text_keys: ClassVar[tuple[str, ...]] = ("completion",)

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self._content = self.merger.buffer((0, "content"))
        #: The last `completion` event's fields beyond the folded ones (`stop`, `log_id`, ...).
        self._extra: dict[str, Any] = {}

    @classmethod
    def claims(cls, value: object) -> bool:
        return claims_completion(value)

    def fold(self, value: object, frame: int) -> None:
        if claims_completion(value):
            assert type(value) is dict
            self._completion(value, frame)
            return
        kind = event_type(value)
        if kind == "ping":
            return
        error = value.get("error") if type(value) is dict else None
        if kind == "error" or (kind is None and type(error) is dict):
            message = error.get("message") if type(error) is dict else None
            self.in_stream_error(frame, message if type(message) is str else compact_json(error, 200),
                                 compact_json(value, 2000))
            return
        self.report.diagnostic(
            "unexpected-payload", frame,
            f"a payload that is no Text Completions event ({compact_json(value, 80)}); ignored",
            once=("not-completion",))

    def _completion(self, value: dict[str, Any], frame: int) -> None:
        merger = self.merger
        if value["completion"]:
            self._content.add(value["completion"], frame)
        ident = self.string(value.get("id"), frame, "the id")
        model = self.string(value.get("model"), frame, "the model")
        if ident is not None:
            merger.replace(("id",), ident, frame)
        if model is not None:
            merger.replace(("model",), model, frame)
        stop = self.string(value.get("stop_reason"), frame, "the stop reason")
        if stop is not None:
            merger.replace((0, "finish_reason"), stop, frame)
            self.finish_reply()
        self._extra.update((key, item) for key, item in value.items() if key not in _FOLDED)

    def native(self) -> dict[str, Any] | None:
        return dict(self._extra) or None
