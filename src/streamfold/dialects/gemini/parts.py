"""The parts of a Gemini candidate, the base of the dialect. Each part is one
block of the choice.

Text APPENDs to content, `thought: true` text to reasoning; a run of text parts
of one kind is one part. A `functionCall` part is WHOLE: one part is one call,
its `args` object serialised as the arguments string, and a copy of a call
already seen (same id, or same name and args) is dropped, not concatenated
(G3); a copy with the same id and new args replaces it. Vertex streams long
arguments as `partialArgs` fragments (`willContinue`): they are assembled into
the args object (`partial_args`) and serialised once, when the call says it is
finished. `executableCode`, `codeExecutionResult`, `inlineData` and other parts
are kept whole, and every `thoughtSignature` stays with the part it rode on
(G5), for the export.
"""

from __future__ import annotations

from sys import intern
from typing import Any

from ..._json import MAX_DEPTH
from ...merge import TextBuffer, ToolCallPath, ToolPath
from .._base import Dialect, compact_json, dumps_arguments
from .._calls import content_key
from .partial_args import apply_fragment
from .state import MAX_PARTS, PART_EXTRAS, Candidate, Part, StreamedCall, snake

__all__ = ["Parts"]


class Parts(Dialect):
    """The parts of a candidate; `Gemini` (the subclass) folds everything else."""

    def _part(self, index: int, state: Candidate, part: dict[str, Any], frame: int) -> None:
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
        data = [key for key in part if key not in PART_EXTRAS]
        if not data:
            if signature:
                # A signature alone (G5): it belongs with the text run before it.
                self._text(index, state, "", part.get("thought") is True, signature, frame)
            return
        # executableCode, codeExecutionResult, inlineData, fileData, ...: WHOLE.
        if len(state.parts) >= MAX_PARTS:
            self._parts_capped(index, frame)
            return
        new = self._open(index, state, snake(data[0]), frame)
        new.whole = part
        new.signature = signature

    def _text(self, index: int, state: Candidate, text: str, thought: bool, signature: str | None,
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
            if len(parts) >= MAX_PARTS:
                last = self._capped_run(index, state, kind, buffer, frame)
            else:
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

    def _capped_run(self, index: int, state: Candidate, kind: str, buffer: TextBuffer, frame: int) -> Part:
        """Past `MAX_PARTS`: the run of this kind that every further fragment of it extends (the last one,
        or a new one when the candidate has none). A run's text is one slice of its buffer, which holds that
        kind only, so the last run of a kind can take all that follows."""
        capped = state.capped
        if capped is None:
            capped = state.capped = {}
            for held in reversed(state.parts):  # once per candidate
                if held.kind in ("text", "reasoning"):
                    capped.setdefault(held.kind, held)
            self._parts_capped(index, frame)
        run = capped.get(kind)
        if run is None:
            run = capped[kind] = self._open(index, state, kind, frame)
            run.start = run.end = buffer.length
        return run

    def _parts_capped(self, index: int, frame: int) -> None:
        self.report.diagnostic(
            "parts-capped", frame,
            f"candidate {index} has more than {MAX_PARTS} parts: from frame {frame} on, its text and thought "
            "fragments extend its last text and thought parts (the reply's text is whole, but the export no "
            "longer interleaves them as sent) and further whole parts (code, inline data, ...) are left out",
            once=(index,), choice=index, max_parts=MAX_PARTS)

    def _open(self, index: int, state: Candidate, kind: str, frame: int) -> Part:
        """Start a new part (block): close the previous one at its last frame."""
        parts = state.parts
        if parts:
            last = parts[-1]
            self.merger.replace((index, "block", last.key), last.block, last.last_frame)
        part = Part(kind, len(parts), frame)
        parts.append(part)
        state.run = None
        self.merger.replace((index, "block", part.key), part.block, frame)
        return part

    def _after_finish(self, index: int, state: Candidate, frame: int, what: str) -> None:
        self.report.diagnostic(
            "content-after-finish", frame,
            f"frame {frame} adds {what} to candidate {index} after frame {state.finish_frame} gave its "
            "finishReason; it is folded, but a client that stops at the finishReason loses it",
            once=(index,), choice=index, finish_frame=state.finish_frame)

    # -- function calls ------------------------------------------------------------

    def _function_call(self, index: int, state: Candidate, call: dict[str, Any], signature: str | None,
                       frame: int) -> None:
        name = self.string(call.get("name"), frame, f"a `functionCall` `name` in candidate {index}") or None
        if name is not None:
            name = intern(name)  # held by the call's merger value and its dedupe key: one copy per name
        call_id = self.string(call.get("id"), frame, f"a `functionCall` `id` in candidate {index}") or None
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
            state.tool_parts[key] = part
            streamed = state.streamed = StreamedCall(key, part)
            state.set_tool(key, call_id, name, "")
            if call_id is not None:
                state.tool_ids[call_id] = key
            path: ToolCallPath = (index, "tool", key)
            self.merger.set_once((*path, "id"), call_id, frame)
            self.merger.set_once((*path, "name"), name, frame)
            streamed.name, streamed.id = name, call_id
            self._continue_streamed(index, state, streamed, call, None, frame)
            return
        args = call.get("args")
        arguments = "" if args is None else dumps_arguments(args)
        if name is None and args is None:
            self.report.diagnostic(
                "unexpected-payload", frame,
                f"candidate {index}: a `functionCall` with no name, args or partialArgs outside a streamed call; "
                "ignored")
            return
        known = self._known_call(state, call_id, name, arguments)
        if known is not None:
            self._repeated_call(index, state, known, call_id, name, arguments, signature, frame)
            return
        key = len(state.tools)
        state.set_tool(key, call_id, name, arguments)
        if call_id is not None:
            state.tool_ids[call_id] = key
        part = self._open(index, state, "tool_call", frame)
        part.tool, part.signature = key, signature
        state.tool_parts[key] = part
        path = (index, "tool", key)
        merger = self.merger
        merger.set_once((*path, "id"), call_id, frame)
        merger.set_once((*path, "name"), name, frame)
        merger.append_whole((*path, "arguments"), arguments, frame)
        merger.parse((*path, "arguments"), frame)  # a whole call is a closed block

    def _known_call(self, state: Candidate, call_id: str | None, name: str | None, arguments: str) -> int | None:
        """G3: the key of a call this one repeats (same id; or, without ids, same name and args)."""
        if call_id is not None:
            key = state.tool_ids.get(call_id)
            if key is not None:
                return key
        return state.tools_by_content.first(content_key(name, arguments), call_id is not None)

    def _repeated_call(self, index: int, state: Candidate, key: int, call_id: str | None, name: str | None,
                       arguments: str, signature: str | None, frame: int) -> None:
        held_id, held_name, held_arguments = state.tools[key]
        part = state.tool_parts[key]
        if signature and not part.signature:
            part.signature = signature
        path: ToolCallPath = (index, "tool", key)
        if held_arguments == arguments and (name is None or held_name in (None, name)):
            self.report.diagnostic(
                "tool-call-repeated", frame,
                f"candidate {index}: function call {key} ({held_name}) was sent again in frame {frame}; it is kept "
                "once. Function calls arrive whole: a client that turns each copy into an argument delta glues "
                "them into `{..}{..}`, one that lists each copy runs the tool twice",
                choice=index, tool_call=key, changed=False)
            return
        # Same id, new content: keep the last version (G3).
        state.set_tool(key, held_id or call_id, held_name or name, arguments)
        self.merger.replace_text((*path, "arguments"), [(arguments, frame)])
        self.merger.parse((*path, "arguments"), frame)
        if held_name is None:
            self.merger.set_once((*path, "name"), name, frame)
        part.last_frame = frame
        self.merger.replace((index, "block", part.key), part.block, frame)
        self.report.diagnostic(
            "tool-call-repeated", frame,
            f"candidate {index}: function call {key} (id {held_id!r}) was sent again in frame {frame} with "
            "different arguments; the last version is kept. A client that appends both copies gets `{..}{..}`",
            choice=index, tool_call=key, changed=True)

    # -- Vertex streamed arguments (partialArgs / willContinue) ----------------

    def _continue_streamed(self, index: int, state: Candidate, streamed: StreamedCall, call: dict[str, Any],
                           signature: str | None, frame: int) -> None:
        path: ToolCallPath = (index, "tool", streamed.key)
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

    def _partial_arg(self, index: int, streamed: StreamedCall, fragment: dict[str, Any], frame: int) -> None:
        moved = apply_fragment(streamed, fragment)
        if moved is None:
            self.report.diagnostic(
                "unexpected-payload", frame,
                f"candidate {index}: a partialArgs fragment with jsonPath "
                f"{compact_json(fragment.get('jsonPath'), 80)}, which is not a path into the arguments (or goes "
                f"deeper than {MAX_DEPTH} levels, or sets an array or an object); ignored",
                once=(index, streamed.key, "path"))
        for asked, placed in moved or ():
            self.report.diagnostic(
                "unexpected-payload", frame,
                f"candidate {index}: a partialArgs fragment with jsonPath {compact_json(fragment.get('jsonPath'), 80)} "
                f"points at array index {asked}, far past the array's end ({placed} items so far); its value was put "
                f"at index {placed} instead of filling the gap with nulls. A client that fills the gap allocates "
                f"{asked} items", choice=index, tool_call=streamed.key, index=asked, placed=placed)

    def _close_streamed(self, index: int, state: Candidate, frame: int, *, unfinished: bool = False) -> None:
        streamed = state.streamed
        assert streamed is not None
        state.streamed = None
        arguments = dumps_arguments(streamed.args)
        state.set_tool(streamed.key, streamed.id, streamed.name, arguments)
        path: ToolPath = (index, "tool", streamed.key, "arguments")
        self.merger.append_whole(path, arguments, frame)
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
