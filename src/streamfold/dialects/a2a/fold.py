"""A2A streaming replies (a2a-protocol.org specification, "message/stream" / "SendStreamingMessage"):
SSE `data:` lines, each a JSON-RPC 2.0 response whose `result` is a Task, a Message, a status
update or an artifact update (`shapes` reads A2A 0.3 and 1.0 alike). One stream is one reply
(choice 0):

- the reply text is the artifacts' text parts, artifact after artifact in the order they first
  came: an `artifact-update` with `append: true` APPENDS its parts to the artifact with that
  `artifactId`, without it REPLACES them (a client that always appends repeats text); a Task
  snapshot's artifacts replace them all; `lastChunk` closes an artifact. An agent's Message result
  adds its text too. When neither came, the last agent status message's text is the reply (an
  `input-required` question, a failure's explanation);
- the id is the task id (the message id for a Message reply); the finish reason is the last state:
  `completed` stop, `input-required`/`auth-required`/`canceled` incomplete, `failed` an in-stream
  error with its status message, `rejected` other;
- the end: a status update with `final: true` (0.3), a terminal or interrupted state (1.0, which
  has no `final`), or a Message reply, which is the only event of its stream. A JSON-RPC `error`
  response is an in-stream error;
- A2A has no usage, reasoning or tool calls of its own (file and data parts are kept, for export).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from ..._json import COMPLETE_SHALLOW, loads_utf8
from ...findings import Report, Severity
from ...framing import FrameView
from ...merge import Merger
from .._base import ERROR, INCOMPLETE, OTHER, STOP, Dialect, compact_json, fast_decoder
from .shapes import event_of, is_agent, state_name, texts, well_typed

if TYPE_CHECKING:
    from .fast import ArtifactUpdate

__all__ = ["A2A"]

_TERMINAL = frozenset({"completed", "canceled", "failed", "rejected"})
_INTERRUPTED = frozenset({"input-required", "auth-required"})
_FAST_SHAPES = fast_decoder(f"{__package__}.fast", "decode_artifact_chunk")


#: The parts of one text part, up to its text (`fold_fast_run` reads them by decoding the text alone).
_ONE_TEXT_PART = b'[{"kind":"text","text":'
_TEXT_AT = len(_ONE_TEXT_PART)


def _not_hot(value: object) -> None:
    raise AssertionError("no artifact is hot")


class A2A(Dialect):
    name = "a2a"
    finish_reasons: ClassVar[dict[str, str]] = {
        **{state: value for name, value in (("completed", STOP), ("input-required", INCOMPLETE),
                                            ("auth-required", INCOMPLETE), ("canceled", INCOMPLETE),
                                            ("failed", ERROR), ("rejected", OTHER), ("unknown", OTHER))
           for state in (name, "TASK_STATE_" + name.upper().replace("-", "_"))}}
    terminal_hint = "a status update with `final: true` or a terminal state"

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self._version: str | None = None
        #: artifactId -> {"artifact": the artifact as sent, its parts joined (a copy: `append` extends it in
        #: place), "pieces": [(text, frame)], "closed"}.
        self._artifacts: dict[str, dict[str, Any]] = {}
        #: The agent Messages' text, with frames; and the Message replies, as sent.
        self._message_pieces: list[tuple[str, int]] = []
        self._messages: list[dict[str, Any]] = []
        self._task: dict[str, Any] = {}
        self._history: list[Any] = []
        self._status: dict[str, Any] | None = None
        self._status_frame = 0
        self.merger.set_once((0, "role"), "assistant", 0)
        self.fast_decoder = _FAST_SHAPES

    @classmethod
    def claims(cls, value: object) -> bool:
        found = event_of(value)
        return found is not None and well_typed(found[2])

    # -- the fold loop -------------------------------------------------------

    def fold(self, value: object, frame: int) -> None:
        found = event_of(value)
        if found is None:
            self._not_an_event(value, frame)
            return
        version, kind, body = found
        if self._version is None:
            self._version = version
        elif version != self._version:
            self.report.diagnostic(
                "unexpected-payload", frame, f"an A2A {version} event in a stream of A2A {self._version} events; "
                "folded, but a client of one version does not read the other's", once=("version",))
        if kind == "artifact-update":
            self._artifact(body, frame)
        elif kind == "status-update":
            self._status_update(body, frame)
        elif kind == "task":
            self._task_snapshot(body, frame)
        else:
            self._message(body, frame)

    def fold_fast_run(self, pieces: Sequence[bytes], position: int, start: int, frame: int,
                      events: Sequence[bytes | None] | None) -> int:
        """0.3 chunks decoded by `fast`, each appending to the last artifact, still open, of this
        stream's task, before any Message reply: their parts added as `fold` adds them (nothing to
        report then), in one loop, the run's text in one `extend`. It stops at anything else (a new,
        replaced or closed artifact, another task or version, parts that are not UTF-8 JSON or long
        enough to nest past the core's cap), which is `fold`'s."""
        decode, at, first = self.fast_decoder, position, frame - position
        assert decode is not None
        content = self.merger.buffer((0, "content"))
        added: list[str] = []  # the run's text so far, and its frames, for one `extend`
        frames: list[int] = []
        # The artifact the last chunk appended to (its id, task and state), while nothing but its chunks comes:
        # what the first chunk of it was checked for holds for the next.
        hot_key = hot_task = None
        hot: dict[str, Any] | None = None
        add_part: Callable[[Any], None] = _not_hot  # the hot artifact's `parts.append` and `pieces.append`
        add_piece: Callable[[Any], None] = _not_hot
        try:
            for at in range(position, len(pieces)):
                body: ArtifactUpdate = decode(pieces[at][start:]).result
                if body.append is not True:
                    return at - position
                key, task_id = body.artifact.artifactId, body.taskId
                if key == hot_key and task_id == hot_task and hot is not None:
                    held = hot
                else:
                    found = self._artifacts.get(key)
                    if (found is None or found["closed"] or self._version != "0.3" or self._message_pieces
                            or next(reversed(self._artifacts)) != key):
                        return at - position
                    task = self.merger.values.get(("id",))
                    if task is None or task[0] != task_id:
                        return at - position
                    held = hot = found
                    hot_key, hot_task = key, task_id
                    add_part, add_piece = held["artifact"]["parts"].append, held["pieces"].append
                index = first + at
                raw = bytes(body.artifact.parts)
                # The commonest parts, one text part as the SDKs write it, are read by decoding only their
                # string: when what stands between the part's opening and its closing is one JSON string, the
                # parts are exactly that one part (a string cannot nest, so no cap on depth applies).
                text = None
                if raw.startswith(_ONE_TEXT_PART) and raw.endswith(b"}]"):
                    try:  # noqa: SIM105 - contextlib.suppress would cost a context manager a frame
                        text = loads_utf8(raw[_TEXT_AT:-2])
                    except ValueError:
                        pass  # another member, or not one string: the parts are read whole below
                if type(text) is str:
                    add_part({"kind": "text", "text": text})
                    add_piece((text, index))
                    if text:
                        added.append(text)
                        frames.append(index)
                else:
                    if len(raw) >= COMPLETE_SHALLOW:
                        return at - position
                    parts = loads_utf8(raw)  # as the plain decoder reads them: each part as sent, in order
                    if type(parts) is not list:
                        return at - position
                    held["artifact"]["parts"] += parts
                    for text in texts(parts):
                        add_piece((text, index))
                        if text:
                            added.append(text)
                            frames.append(index)
                if body.lastChunk is True:
                    held["closed"] = True
                    hot_key = hot_task = hot = None
        except (ValueError, RecursionError):
            return at - position
        finally:
            content.extend(added, frames)
        return len(pieces) - position

    def _not_an_event(self, value: object, frame: int) -> None:
        error = value.get("error") if type(value) is dict else None
        if type(error) is dict:
            self.in_stream_error(frame, f"the agent answered with JSON-RPC error {error.get('code')}: "
                                        f"{error.get('message')}", raw=json.dumps(value, ensure_ascii=False))
            return
        self.report.diagnostic("unexpected-payload", frame, "not an A2A stream event (a JSON-RPC response whose "
                               f"`result` is a Task, Message or update): {compact_json(value, 80)}; ignored",
                               once=("not-an-event",))

    def _same_task(self, task_id: object, frame: int) -> None:
        held = self.merger.set_once(("id",), task_id, frame)
        if held is not None and task_id not in (None, held):
            self.report.diagnostic("unexpected-payload", frame, f"an event of task {task_id!r} in the stream of task "
                                   f"{held!r}; folded into the one reply", once=("task",))

    def _artifact(self, body: dict[str, Any], frame: int) -> None:
        self._same_task(body.get("taskId"), frame)
        artifact = body.get("artifact")
        if type(artifact) is not dict or type(artifact.get("artifactId")) is not str:
            self.wrong_type(artifact, frame, "an artifact update's `artifact` (with a string `artifactId`)",
                            "an object")
            return
        key, parts = artifact["artifactId"], artifact.get("parts")
        if type(parts) is not list:
            self.wrong_type(parts, frame, f"the `parts` of artifact {key!r}", "an array", "taken as no parts")
            parts = []
            artifact = {**artifact, "parts": parts}
        pieces = [(text, frame) for text in texts(parts)]
        held = self._artifacts.get(key)
        if held is not None and held["closed"]:
            self.report.diagnostic("unexpected-payload", frame, f"artifact {key!r} gets a chunk after its `lastChunk`; "
                                   "folded", severity=Severity.WARNING, once=("closed", key))
        if held is not None and body.get("append") is True:
            # In place: the held artifact and its parts list are this fold's own copies (a new dict per
            # append made a long artifact quadratic). The keys keep their places, as `{**held, **new}` would.
            joined = held["artifact"]
            joined.update((k, v) for k, v in artifact.items() if k != "parts")
            joined["parts"] += parts
            held["pieces"] += pieces
            last = next(reversed(self._artifacts)) == key
            if last and not self._message_pieces:
                for text, at in pieces:
                    self.merger.append((0, "content"), text, at)
            else:
                self._rebuild()
        else:
            if held is None and body.get("append") is True:
                self.report.diagnostic("unexpected-payload", frame, f"an `append` chunk for artifact {key!r}, which no "
                                       "chunk opened; it starts the artifact", once=("append-new", key))
            replacing = held is not None
            self._artifacts[key] = {"artifact": {**artifact, "parts": list(parts)}, "pieces": pieces, "closed": False}
            if replacing or self._message_pieces:
                self._rebuild()
            else:
                for text, at in pieces:
                    self.merger.append((0, "content"), text, at)
        if body.get("lastChunk") is True:
            self._artifacts[key]["closed"] = True

    def _rebuild(self) -> None:
        """The reply text again, artifact after artifact, then the messages (a chunk replaced an artifact)."""
        pieces = [piece for held in self._artifacts.values() for piece in held["pieces"]]
        self.merger.replace_text((0, "content"), [*pieces, *self._message_pieces])

    def _status_update(self, body: dict[str, Any], frame: int) -> None:
        self._same_task(body.get("taskId"), frame)
        self._task.setdefault("contextId", body.get("contextId"))
        self._set_status(body.get("status"), frame)
        state = state_name(body.get("status"))
        if body.get("final") is True or (self._version == "1.0" and state in _TERMINAL | _INTERRUPTED):
            self.terminate(frame)
        elif state in _TERMINAL | _INTERRUPTED:
            self.finish_reply()

    def _set_status(self, status: object, frame: int) -> None:
        if type(status) is not dict:
            self.wrong_type(status, frame, "a task's `status`", "an object")
            return
        if self._status is not None and type(self._status.get("message")) is dict:
            self._history.append(self._status["message"])  # as an A2A server's task store keeps it
        self._status, self._status_frame = status, frame
        state = status.get("state")
        if type(state) is str and state_name(status) in _TERMINAL | _INTERRUPTED:
            # Only where the task stopped: `submitted` or `working` is no finish.
            self.merger.replace((0, "finish_reason"), state, frame)
        if state_name(status) == "failed":
            said = " ".join(texts(status["message"].get("parts"))) if type(status.get("message")) is dict else ""
            self.in_stream_error(frame, "the task failed" + (f": {said}" if said else ""),
                                 raw=json.dumps(status, ensure_ascii=False))

    def _task_snapshot(self, body: dict[str, Any], frame: int) -> None:
        self._same_task(body.get("id"), frame)
        self._task.update({key: body[key] for key in ("contextId", "metadata") if key in body})
        history = body.get("history")
        if type(history) is list and not self._history:
            self._history = list(history)
        artifacts = body.get("artifacts")
        if type(artifacts) is list and artifacts:
            # A snapshot: its artifacts are all of them.
            self._artifacts = {}
            for artifact in artifacts:
                if type(artifact) is dict and type(artifact.get("artifactId")) is str:
                    parts: list[Any] = list(artifact["parts"]) if type(artifact.get("parts")) is list else []
                    self._artifacts[artifact["artifactId"]] = {
                        "artifact": {**artifact, "parts": parts}, "pieces": [(text, frame) for text in texts(parts)],
                        "closed": True}
            self._rebuild()
        self._set_status(body.get("status"), frame)
        state = state_name(body.get("status"))
        if state in _TERMINAL | _INTERRUPTED:
            self.finish_reply()

    def _message(self, body: dict[str, Any], frame: int) -> None:
        self._messages.append(body)
        if is_agent(body):
            self.merger.set_once(("id",), body.get("taskId") or body.get("messageId"), frame)
            pieces = [(text, frame) for text in texts(body.get("parts"))]
            self._message_pieces += pieces
            for text, at in pieces:
                self.merger.append((0, "content"), text, at)
        if not self._artifacts and self._status is None:
            self.terminate(frame)  # a Message reply is the stream's only event

    # -- end of stream -------------------------------------------------------

    def finish(self, last_frame: int) -> None:
        status = self._status
        if (not self._artifacts and not self._message_pieces and status is not None
                and is_agent(status.get("message"))):
            for text in texts(status["message"].get("parts")):
                self.merger.append((0, "content"), text, self._status_frame)

    def native(self) -> dict[str, Any] | None:
        """The version, the task's context, history and last status, its artifacts as sent (parts
        joined by `append`), and the Message replies; the reply text is the Result's."""
        return {"version": self._version, "task": {**self._task, "status": self._status, "history": self._history},
                "artifacts": [held["artifact"] for held in self._artifacts.values()], "messages": self._messages}


