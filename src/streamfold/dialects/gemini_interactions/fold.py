"""Gemini Interactions API stream (`POST /v1beta/interactions`, `stream: true`), dialect `gemini-interactions`.

SSE, one JSON object an event, dispatched on `event_type` (google-genai 3.6.1
`_gaos/types/interactions/interactionsseevent.py`, `InteractionSSEEvent`):

- `interaction.created` names the interaction (`interaction.id`, the Result's id);
- `step.start {index, step}` opens step `index`: a `thought`, a `model_output`
  (its `content` may already hold text) or a `function_call {id, name, arguments}`;
- `step.delta {index, delta}` APPENDs to that step: `text` to the reply,
  `thought_summary` (`content.text`) to the reasoning, `arguments_delta` to the
  call's arguments (PARSE-AT-END); `thought_signature` is kept for the export;
- `step.stop {index, usage}`; `interaction.status_update` may carry usage;
- `error {error: {code, message}}` is an in-stream error;
- `interaction.completed` is terminal: `status` is the finish reason and
  `usage` the usage. Its `steps` are left empty "to reduce the payload size":
  the deltas are the reply, so a completed event with no steps changes nothing.
  When it does carry a function call whole, the call fills one that never streamed.

The legacy content-based events (`interaction.start`, `content.start/delta/stop`,
`interaction.complete`, "used when steps are disabled") fold the same way, the
`content` of `content.start` standing for the step.

The export is the non-streaming `Interaction`: id, status, model, the steps the
stream built (thought, model_output, function_call) and the usage.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

from ...findings import Report, Severity
from ...framing import FrameView
from ...merge import EMPTY_VALUES, Merger
from .._base import ERROR, INCOMPLETE, LENGTH, STOP, TOOL_CALLS, Dialect, arguments_text, compact_json, dumps_arguments

if TYPE_CHECKING:
    from ...merge import ToolCallPath
    from ...result import Result

__all__ = ["GeminiInteractions"]

_STEP_TYPES = frozenset({"step.start", "step.delta", "step.stop", "content.start", "content.delta", "content.stop"})
EVENT_TYPES = _STEP_TYPES | {"interaction.created", "interaction.start", "interaction.status_update",
                        "interaction.completed", "interaction.complete", "error"}
_TERMINAL = ("interaction.completed", "interaction.complete")


class GeminiInteractions(Dialect):
    name = "gemini-interactions"
    #: google-genai 3.6.1 `InteractionSseEventInteractionStatus`.
    finish_reasons: ClassVar[dict[str, str]] = {
        "completed": STOP,
        "requires_action": TOOL_CALLS,
        "incomplete": LENGTH,
        "budget_exceeded": LENGTH,
        "requires_continuation": INCOMPLETE,
        "failed": ERROR,
        "cancelled": ERROR,
    }
    terminal_hint = "`interaction.completed`"

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self._content = self.merger.buffer((0, "content"))
        #: Step index -> step type, in the order the steps opened.
        self._steps: dict[int, str] = {}
        #: The call steps' indexes in the order they opened (a dict: asked once per call event).
        self._tool_keys: dict[int, None] = {}
        self._call_ids: dict[int, str] = {}
        #: Step index -> the object `arguments` a call step stated, and its frame.
        self._whole: dict[int, tuple[dict[str, Any], int]] = {}
        self._signatures: list[str] = []
        self._interaction: dict[str, Any] = {}

    @classmethod
    def claims(cls, value: object) -> bool:
        if not (isinstance(value, dict) and type(kind := value.get("event_type")) is str and kind in EVENT_TYPES):
            return False
        if kind in _STEP_TYPES:
            return type(value.get("index")) is int
        if kind == "error":
            return type(value.get("error")) is dict and "type" not in value
        if kind == "interaction.status_update":
            return type(value.get("interaction_id")) is str
        return type(value.get("interaction")) is dict

    def fold(self, value: object, frame: int) -> None:
        if type(value) is not dict:
            self._unexpected(f"expected a JSON object, got {type(value).__name__}; ignored", frame, "not-object")
            return
        kind = value.get("event_type")
        if kind in ("step.start", "content.start"):
            step = value.get("step") if kind == "step.start" else value.get("content")
            self._start(value.get("index"), step, frame)
        elif kind in ("step.delta", "content.delta"):
            self._delta(value.get("index"), value.get("delta"), frame)
        elif kind in ("step.stop", "content.stop", "interaction.status_update"):
            self._usage(value.get("usage"), frame)
        elif kind in ("interaction.created", "interaction.start"):
            self._lifecycle(value.get("interaction"), frame)
        elif kind in _TERMINAL:
            self._completed(value.get("interaction"), frame)
        elif kind == "error":
            found = value.get("error")
            error: dict[str, Any] = found if type(found) is dict else {}
            message = error.get("message") or error.get("code") or "the Interactions stream sent an error"
            self.in_stream_error(frame, f"Gemini Interactions error: {message}",
                                 raw=json.dumps(value, ensure_ascii=False)[:2000])
            self.terminate(frame)
        else:
            self._unexpected(f"unknown `event_type` {kind!r}; ignored", frame, kind)

    # -- steps -----------------------------------------------------------------

    def _start(self, index: object, step: object, frame: int) -> None:
        if type(index) is not int or type(step) is not dict:
            self._unexpected("a step event without an integer `index` or a `step` object; ignored", frame, "step")
            return
        kind = step.get("type")
        self._steps[index] = str(kind)
        self.merger.set_once((0, "role"), "assistant", frame)
        if kind == "function_call":
            self._call(index, step, frame)
        elif kind == "text":  # the legacy `content.start` of a text block
            self._text(step.get("text"), frame)
        elif kind == "model_output":
            for part in _list(step.get("content")):
                if type(part) is dict and part.get("type") == "text":
                    self._text(part.get("text"), frame)
        elif kind == "thought":
            for part in _list(step.get("summary")):
                if type(part) is dict and part.get("type") == "text":
                    self._reasoning(part.get("text"), frame)
            if type(step.get("signature")) is str:
                self._signatures.append(step["signature"])

    def _call(self, index: int, step: dict[str, Any], frame: int) -> None:
        """A function call opened (or stated whole): name and id SET-ONCE. Its object `arguments` is `{}` at
        `step.start` when `arguments_delta` fragments follow, so it is held back and stands for the arguments
        only when no fragment came (`_settle`)."""
        self._tool_keys.setdefault(index)
        path: ToolCallPath = (0, "tool", index)
        if step.get("name") not in EMPTY_VALUES:
            self.merger.set_once((*path, "name"), step["name"], frame)
        if type(step.get("id")) is str:
            self.merger.set_once((*path, "id"), step["id"], frame)
            self._call_ids.setdefault(index, step["id"])
        arguments = step.get("arguments")
        if type(arguments) is str:
            self.merger.append((*path, "arguments"), arguments, frame)
        elif type(arguments) is dict and (arguments or index not in self._whole):
            self._whole[index] = (arguments, frame)

    def _settle(self) -> None:
        """Each call that no fragment streamed takes its whole `arguments` object."""
        for key, (arguments, frame) in self._whole.items():
            if not self.merger.text((0, "tool", key, "arguments")):
                self.merger.replace_text((0, "tool", key, "arguments"), [(dumps_arguments(arguments), frame)])
        self._whole.clear()

    def _delta(self, index: object, delta: object, frame: int) -> None:
        if type(index) is not int or type(delta) is not dict:
            self._unexpected("a delta without an integer `index` or a `delta` object; ignored", frame, "delta")
            return
        kind = delta.get("type")
        if kind == "text":
            self._text(delta.get("text"), frame)
        elif kind == "thought_summary":
            content = delta.get("content")
            if type(content) is dict and content.get("type") == "text":
                self._reasoning(content.get("text"), frame)
        elif kind == "thought_signature":
            if type(delta.get("signature")) is str:
                self._signatures.append(delta["signature"])
        elif kind == "arguments_delta":
            if index not in self._tool_keys:
                self._tool_keys[index] = None
                self._steps.setdefault(index, "function_call")
            if type(delta.get("arguments")) is str:
                self.merger.append((0, "tool", index, "arguments"), delta["arguments"], frame)
        elif kind == "function_call":  # legacy content.delta: the call whole
            self._call(index, delta, frame)
        elif kind == "thought":  # legacy content.delta of a thought block
            self._reasoning(delta.get("thought") or delta.get("text"), frame)

    def _text(self, text: object, frame: int) -> None:
        if type(text) is str and text:
            self._content.add(text, frame)

    def _reasoning(self, text: object, frame: int) -> None:
        if type(text) is str and text:
            self.merger.append((0, "reasoning"), text, frame)

    # -- the interaction -----------------------------------------------------

    def _lifecycle(self, interaction: object, frame: int) -> None:
        if type(interaction) is not dict:
            return
        self.merger.set_once(("id",), interaction.get("id"), frame)
        for name in ("model", "agent", "object", "created", "updated", "service_tier"):
            if interaction.get(name) is not None:
                self._interaction[name] = interaction[name]
        self._usage(interaction.get("usage"), frame)

    def _usage(self, usage: object, frame: int) -> None:
        if type(usage) is dict and usage:
            self.merger.replace(("usage",), usage, frame)

    def _completed(self, interaction: object, frame: int) -> None:
        self._lifecycle(interaction, frame)
        if type(interaction) is dict:
            # Empty "to reduce the payload size": only a call the deltas never built is taken from here.
            steps = interaction.get("steps") or interaction.get("outputs")
            for position, step in enumerate(steps if type(steps) is list else ()):
                if type(step) is dict and step.get("type") == "function_call" and position not in self._steps:
                    self._steps[position] = "function_call"
                    self._call(position, step, frame)
            status = interaction.get("status")
            if type(status) is str and status:
                self.merger.replace((0, "finish_reason"), status, frame)
                self._interaction["status"] = status
            if status == "failed":
                self.in_stream_error(frame, "Gemini ended the interaction with status 'failed'",
                                     raw=json.dumps(interaction, ensure_ascii=False)[:2000])
        self._settle()
        for key in self._tool_keys:
            self.merger.parse((0, "tool", key, "arguments"), frame)
        self.terminate(frame)

    def _unexpected(self, message: str, frame: int, once: object) -> None:
        self.report.diagnostic("unexpected-payload", frame, message, severity=Severity.INFO,
                               once=("gemini-interactions", once))

    # -- end of stream -------------------------------------------------------

    def finish(self, last_frame: int) -> None:
        super().finish(last_frame)
        self._settle()
        for key in self._tool_keys:
            self.check_arguments(0, key, last_frame)

    def normalise_usage(self, raw: object) -> dict[str, Any] | None:
        return interactions_usage(raw)

    def native(self) -> dict[str, Any] | None:
        """The interaction's own fields (model, status, ...), the call ids and the thought signatures."""
        out: dict[str, Any] = dict(self._interaction)
        if self._call_ids:
            out["call_ids"] = [self._call_ids.get(key) for key in sorted(self._tool_keys)]  # as tool_calls are
        if self._signatures:
            out["signatures"] = list(self._signatures)
        return out or None

    @classmethod
    def export(cls, result: Result) -> dict[str, Any]:
        """The non-streaming `Interaction`: `{id, status, model, steps, usage}`."""
        native = result.native if type(result.native) is dict else {}
        choice = result.choice(0)
        out: dict[str, Any] = {"id": result.id, "object": native.get("object", "interaction")}
        out.update({key: value for key, value in native.items() if key not in ("call_ids", "signatures")})
        steps: list[dict[str, Any]] = []
        if choice is not None and (choice.reasoning or native.get("signatures")):
            thought: dict[str, Any] = {"type": "thought"}
            if choice.reasoning:
                thought["summary"] = [{"type": "text", "text": choice.reasoning}]
            if native.get("signatures"):
                thought["signature"] = native["signatures"][-1]
            steps.append(thought)
        if choice is not None and choice.content:
            steps.append({"type": "model_output", "content": [{"type": "text", "text": choice.content}]})
        ids = native.get("call_ids") or []
        for position, call in enumerate(choice.tool_calls if choice is not None else ()):
            steps.append({"type": "function_call", "id": ids[position] if position < len(ids) else None,
                          "name": call.name, "arguments": call.parsed if call.error is None else call.arguments})
        out["steps"] = steps
        out["status"] = choice.finish_reason_raw if choice is not None else native.get("status")
        if result.usage is not None:
            out["usage"] = result.usage.raw
        return out

    @classmethod
    def read_response(cls, value: object) -> dict[str, Any] | None:
        """A non-streaming `Interaction`: `{id, status, steps, usage}`."""
        if not (isinstance(value, dict) and isinstance(value.get("steps"), list) and "status" in value
                and "id" in value and "candidates" not in value):
            return None
        steps = [step for step in value["steps"] if isinstance(step, dict)]
        content = "".join(_texts(step.get("content")) for step in steps if step.get("type") == "model_output")
        reasoning = "".join(_texts(step.get("summary")) for step in steps if step.get("type") == "thought")
        called = [step for step in steps if step.get("type") == "function_call"]
        return {"content": content, "reasoning": reasoning or None,
                "tool_calls": [(step.get("name"), arguments_text(step.get("arguments"))) for step in called],
                "tool_call_ids": [step.get("id") for step in called],
                "finish_reason": value.get("status"), "usage": value.get("usage")}

    @classmethod
    def summarize(cls, value: object) -> str:
        if type(value) is not dict:
            return compact_json(value)
        kind = value.get("event_type")
        if kind in ("step.delta", "content.delta") and type(delta := value.get("delta")) is dict:
            detail = delta.get("text") or delta.get("arguments") or delta.get("content") or delta.get("signature")
            return f"{kind} [{value.get('index')}] {delta.get('type')} {compact_json(detail, 80)}".rstrip()
        if kind in ("step.start", "content.start"):
            step = value.get("step") if kind == "step.start" else value.get("content")
            what = step.get("type") if type(step) is dict else None
            return f"{kind} [{value.get('index')}] {what}"
        if kind in _TERMINAL or kind in ("interaction.created", "interaction.start"):
            interaction = value.get("interaction")
            status = interaction.get("status") if type(interaction) is dict else None
            return f"{kind} {status}"
        return str(kind) if kind else compact_json(value)


def _list(value: object) -> list[Any]:
    return value if type(value) is list else []


def _texts(parts: object) -> str:
    """The text parts of a content list, joined."""
    return "".join(part["text"] for part in _list(parts) if type(part) is dict and type(part.get("text")) is str)


def interactions_usage(raw: object) -> dict[str, Any] | None:
    """The Interactions `Usage`: total_input/output/thought/cached tokens."""
    if type(raw) is not dict:
        return None
    return {"input_tokens": raw.get("total_input_tokens"), "output_tokens": raw.get("total_output_tokens"),
            "reasoning_tokens": raw.get("total_thought_tokens"), "cache_read_tokens": raw.get("total_cached_tokens"),
            "total_tokens": raw.get("total_tokens")}
