"""OpenAI Chat Completions (`chat.completion.chunk`) and the compatible family: the fold.

Reference §4.1 and traps O1-O16, U1. Everything vendor-specific about the
family lives in this package: Azure's empty-choices prelude and delta-less filter
annotations (O1, O2), the usage-only last chunk (O3), usage under `x_groq`
or inside the choice (U1), every reasoning field name (O11), Mistral's
content arrays and object-valued arguments (B4), and the many ways tool-call
identity goes wrong (O4-O8; the identity rules are in `tools.py`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

from ...findings import Report
from ...framing import FrameView
from ...merge import Merger, ToolPath
from .._base import CONTENT_FILTER, ERROR, LENGTH, STOP, TOOL_CALLS, fast_decoder
from .extras import StreamExtras
from .native import snapshot
from .tools import ChoiceState, ToolCallFolding

if TYPE_CHECKING:
    from .fast import Chunk

_FAST_SHAPES = fast_decoder(f"{__package__}.fast", "decode_chunk")

__all__ = ["OpenAIChat"]

_THINK_TAGS = ("<think>", "<thinking>", "<thought>")


class OpenAIChat(ToolCallFolding):
    name = "openai-chat"
    finish_reasons: ClassVar[dict[str, str]] = {
        "stop": STOP,
        "eos": STOP,
        "length": LENGTH,
        "tool_calls": TOOL_CALLS,
        "function_call": TOOL_CALLS,
        "content_filter": CONTENT_FILTER,
        "error": ERROR,
        "insufficient_system_resource": ERROR,
    }

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self._choices: dict[int, ChoiceState] = {}
        self._identified = False
        self._extras = StreamExtras()

    @classmethod
    def claims(cls, value: object) -> bool:
        if not isinstance(value, dict):
            return False
        kind = value.get("object")
        if kind == "chat.completion.chunk":
            return True
        if kind == "" and ("prompt_filter_results" in value or "prompt_annotations" in value):
            return True  # Azure's prelude (O1)
        choices = value.get("choices")
        if not (bool(choices) and isinstance(choices, list) and isinstance(choices[0], dict)):
            return False
        if kind in ("text_completion", "completion.chunk") and "text" in choices[0]:
            return False  # a completions stream (Together adds `delta` next to `text`)
        return "delta" in choices[0]  # older TGI chat chunks say `object: "text_completion"`

    # -- the fold loop (once per frame: keep it lean) -------------------------

    def fold(self, chunk: Any, frame: int) -> None:
        if type(chunk) is not dict:
            self._unexpected(chunk, frame)
            return
        merger = self.merger
        if not self._identified:
            # SET-ONCE skips Azure's empty prelude values (O1).
            found_id = merger.set_once(("id",), chunk.get("id"), frame)
            found_model = merger.set_once(("model",), chunk.get("model"), frame)
            merger.set_once(("created",), chunk.get("created") or None, frame)
            merger.set_once(("dialect", "system_fingerprint"), chunk.get("system_fingerprint"), frame)
            merger.set_once(("dialect", "service_tier"), chunk.get("service_tier"), frame)
            self._identified = found_id is not None and found_model is not None
            if self._identified:
                # From here on, fold reads nothing from a chunk outside its choices, usage and error.
                self.fast_decoder = _FAST_SHAPES
        choices = chunk.get("choices")
        if choices:
            if type(choices) is list:
                for choice in choices:
                    if type(choice) is not dict:
                        continue
                    # The common chunk, one content fragment, is folded inline.
                    delta = choice.get("delta")
                    if (type(delta) is dict and len(delta) == 1 and not choice.get("finish_reason")
                            and type(content := delta.get("content")) is str and len(choice) <= 4
                            and choice.get("logprobs") is None
                            and type(index := choice.get("index")) is int):
                        state = self._choices.get(index)
                        if state is not None and state.finish_frame is None:
                            state.content.add(content, frame)
                            continue
                    self._choice(choice, frame)
            else:
                self.report.diagnostic("unexpected-payload", frame,
                                       f"`choices` is a {type(choices).__name__}, not a list; ignored")
        usage = chunk.get("usage")
        if usage:
            merger.replace(("usage",), usage, frame)
        groq = chunk.get("x_groq")
        if groq and type(groq) is dict and groq.get("usage"):
            merger.replace(("usage",), groq["usage"], frame)  # U1: vercel/ai#1651
        error = chunk.get("error")
        if error:
            self._in_stream_error(error, frame)  # O12: OpenAI and OpenRouter shape
        elif chunk.get("object") == "error":
            self._in_stream_error(chunk, frame)  # O12: vLLM shape, block/goose#8031

    def fold_fast(self, chunk: Chunk, frame: int, event: bytes | None) -> bool:
        """A chunk decoded as `fast.Chunk`: one choice's text or argument fragments, appended
        as `fold` would; anything that needs more of `fold` (a new choice, role or tool call, a finish
        reason or a finished choice, reasoning under both names, an error object) is left to it."""
        choices = chunk.choices
        if chunk.object == "error" or len(choices) > 1:
            return False
        if not choices:
            return True  # an empty-choices chunk with nothing else: fold does nothing with it either
        choice = choices[0]
        state = self._choices.get(choice.index)
        if state is None or state.finish_frame is not None or choice.finish_reason:
            return False
        delta = choice.delta
        if delta.role and (choice.index, "role") not in self.merger.values:
            return False  # the first role is set by fold; a repeated one changes nothing (SET-ONCE)
        reasoning, alias, tool_calls = delta.reasoning_content, delta.reasoning, delta.tool_calls
        if reasoning is not None and alias is not None:
            return False
        if tool_calls:
            keys = state.tool_by_index
            for call in tool_calls:
                if call.index not in keys:
                    return False
        if delta.content:
            state.content.add(delta.content, frame)
        if reasoning or alias:
            self.merger.append((choice.index, "reasoning"), reasoning or alias, frame)
        if tool_calls:
            for call in tool_calls:
                key = keys[call.index]
                buffer = state.arguments.get(key)
                if buffer is None:
                    path: ToolPath = (choice.index, "tool", key, "arguments")
                    self.merger.append(path, call.function.arguments, frame)
                    if path in self.merger.texts:
                        state.arguments[key] = self.merger.texts[path]
                else:
                    buffer.add(call.function.arguments, frame)
                state.last_tool = key  # as _tool_key does: a later fragment without an index continues it
        return True

    def _choice(self, choice: dict[str, Any], frame: int) -> None:
        index = choice.get("index")
        if type(index) is not int:
            if index is not None:
                self.wrong_type(index, frame, "a choice's `index`", "an integer", "taken as choice 0")
            index = 0  # what the Mistral SDK assumes too
        state = self._choices.get(index)
        if state is None:
            state = self._choices[index] = ChoiceState(self.merger.buffer((index, "content")))
        delta = choice.get("delta")
        if delta:
            if type(delta) is dict:
                self._delta(index, state, delta, frame)
        logprobs = choice.get("logprobs")
        if logprobs is not None:
            self._extras.logprobs(index, logprobs)  # EXTEND, token by token
        finish = choice.get("finish_reason")
        if finish:
            self._finish(index, state, finish, frame)
        usage = choice.get("usage")
        if usage:
            self.merger.replace(("usage",), usage, frame)  # U1: Moonshot puts it in the choice

    def _delta(self, index: int, state: ChoiceState, delta: dict[str, Any], frame: int) -> None:
        merger = self.merger
        content = delta.get("content")
        if content:
            if state.finish_frame is not None and frame > state.finish_frame:
                self._after_finish(index, state, frame, "content")
            if type(content) is str:
                merger.append((index, "content"), content, frame)
            elif type(content) is list:
                self._content_parts(index, content, frame)
            else:
                merger.append((index, "content"), content, frame)  # not text: the merger reports it
            if len(delta) == 1:
                return
        role = delta.get("role")
        if role:
            merger.set_once((index, "role"), role, frame)
        reasoning = delta.get("reasoning_content")
        alias = delta.get("reasoning")
        if reasoning or alias:
            merger.append((index, "reasoning"), reasoning, frame)
            if alias != reasoning and type(alias) is str:
                # O11: vLLM's back-compat layer sends both names with the same text.
                merger.append((index, "reasoning"), alias, frame)
        details = delta.get("reasoning_details")
        if details:
            self._extras.reasoning_details(index, details)  # kept whole: signatures go back with the next turn
            if not (reasoning or alias):
                self._reasoning_text(index, details, frame)
        refusal = delta.get("refusal")
        if refusal:
            merger.append((index, "refusal"), refusal, frame)
        tool_calls = delta.get("tool_calls")
        if tool_calls:
            if state.finish_frame is not None and frame > state.finish_frame:
                self._after_finish(index, state, frame, "tool call arguments")
            self._tool_calls(index, state, tool_calls if type(tool_calls) is list else [tool_calls], frame)
        function_call = delta.get("function_call")
        if function_call and type(function_call) is dict:
            self._legacy_function_call(index, state, function_call, frame)

    # -- rarer shapes -------------------------------------------------------

    def _content_parts(self, index: int, parts: list[Any], frame: int) -> None:
        """Mistral: content as an array of text and thinking chunks (B4)."""
        for part in parts:
            if type(part) is not dict:
                continue
            kind = part.get("type")
            if kind == "text":
                self.merger.append((index, "content"), part.get("text"), frame)
            elif kind == "thinking":
                thinking = part.get("thinking")
                for inner in thinking if type(thinking) is list else ():
                    if type(inner) is dict and inner.get("type") == "text":
                        self.merger.append((index, "reasoning"), inner.get("text"), frame)

    def _reasoning_text(self, index: int, details: object, frame: int) -> None:
        """The text of OpenRouter `reasoning_details`, read only when no plain reasoning string came."""
        for detail in details if type(details) is list else ():
            if type(detail) is dict:
                kind = detail.get("type")
                if kind == "reasoning.text":
                    self.merger.append((index, "reasoning"), detail.get("text"), frame)
                elif kind == "reasoning.summary":
                    self.merger.append((index, "reasoning"), detail.get("summary"), frame)

    def _finish(self, index: int, state: ChoiceState, raw: object, frame: int) -> None:
        if type(raw) is not str:
            self.wrong_type(raw, frame, f"the `finish_reason` of choice {index}", "a string")
            return
        held = self.merger.get((index, "finish_reason"))
        if held is not None and held != raw:
            self.report.diagnostic(
                "finish-reason-conflict", frame,
                f"choice {index} finish_reason changed from {held!r} to {raw!r}; the last value is kept "
                "(clients that stop at the first finish_reason report the other one)",
                once=(index,), choice=index, previous=held, value=raw)
        self.merger.replace((index, "finish_reason"), raw, frame)
        if state.finish_frame is None:
            state.finish_frame = frame
        if self.transport not in (None, "sse"):
            # Chunk objects logged one per line (JSONL) never carry [DONE]: a finish reason ends them.
            self.finish_reply()
        for key in state.tool_keys:
            # The choice is finished, so its tool calls are closed blocks.
            self.merger.parse((index, "tool", key, "arguments"), frame)

    def _after_finish(self, index: int, state: ChoiceState, frame: int, what: str) -> None:
        self.report.diagnostic(
            "content-after-finish", frame,
            f"frame {frame} adds {what} to choice {index} after frame {state.finish_frame} set its "
            "finish_reason; it is folded, but a client that stops at the finish_reason loses it",
            once=(index,), choice=index, finish_frame=state.finish_frame)

    def _in_stream_error(self, error: object, frame: int) -> None:
        if type(error) is dict:
            message = error.get("message") or error.get("type") or json.dumps(error)
            code = error.get("code") or error.get("type")
        else:
            message, code = str(error), None
        detail = f" ({code})" if code not in (None, "") else ""
        self.in_stream_error(frame, f"the server sent an error inside the HTTP 200 stream{detail}: {message}",
                             raw=json.dumps(error, ensure_ascii=False) if not isinstance(error, str) else error)

    def _unexpected(self, value: object, frame: int) -> None:
        self.report.diagnostic(
            "unexpected-payload", frame,
            f"expected a JSON object (a chat.completion.chunk), got {type(value).__name__}; ignored")

    # -- end of stream ------------------------------------------------------

    def finish(self, last_frame: int) -> None:
        for index, state in self._choices.items():
            for key in state.tool_keys:
                self.check_arguments(index, key, last_frame)
            self._check_think_tags(index)

    def _check_think_tags(self, index: int) -> None:
        buffer = self.merger.texts.get((index, "content"))
        if buffer is None:
            return
        text = buffer.text()
        for tag in _THINK_TAGS:
            at = text.find(tag)
            if at >= 0:
                frame = buffer.frame_at(at)
                self.report.diagnostic(
                    "reasoning-in-content", frame,
                    f"choice {index} content contains {tag} at character {at} (from frame {frame}): the server "
                    "put reasoning inside the reply text instead of a reasoning field; it is left in content",
                    choice=index, position=at, tag=tag)
                return

    def normalise_usage(self, raw: object) -> dict[str, Any] | None:
        if type(raw) is not dict:
            return None
        details = raw.get("completion_tokens_details")
        prompt_details = raw.get("prompt_tokens_details")
        cached = prompt_details.get("cached_tokens") if type(prompt_details) is dict else None
        if cached is None:
            cached = raw.get("prompt_cache_hit_tokens")  # DeepSeek (U2)
        input_tokens = raw.get("prompt_tokens")
        output_tokens = raw.get("completion_tokens")
        total = raw.get("total_tokens")
        if total is None and isinstance(input_tokens, int) and isinstance(output_tokens, int):
            total = input_tokens + output_tokens
        return {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "reasoning_tokens": details.get("reasoning_tokens") if type(details) is dict else None,
            "cache_read_tokens": cached,
            "total_tokens": total,
        }

    # -- what the Result does not hold ---------------------------------------------------

    def native(self) -> dict[str, Any]:
        """What `export` needs beyond the Result: the chunk envelope's `created`, `system_fingerprint`
        and `service_tier` (each as first sent), and the extras a client sends back or keeps
        (`extras.py`: reasoning details, a tool call's extra content, logprobs)."""
        return snapshot(self.merger, self._extras)


