"""AG-UI dialect: every capture's events are valid for the official `ag-ui-protocol` models and its export
holds valid `Message`s and the final state; streams written by the package's own `EventEncoder` fold to
what was encoded; each rule, trap and lifecycle finding is shown by the smallest stream, fed whole, byte
by byte and in random chunks (`tr_fold`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ag_ui.core import (
    Event,
    MessagesSnapshotEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from ag_ui.encoder import EventEncoder
from pydantic import TypeAdapter

from feeding import tr_fold
from streamfold import Result, fold
from streamfold.dialects import DIALECTS, detect, spec_of
from streamfold.dialects.ag_ui import AGUI

CAPTURES = Path(__file__).resolve().parents[1] / "captures" / "ag-ui"
STREAMS = sorted(path for path in CAPTURES.iterdir() if path.suffix in (".sse", ".ndjson"))
EVENT: TypeAdapter[Any] = TypeAdapter(Event)
START = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
FINISH = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}


def sse(*events: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(item).encode() + b"\n\n" for item in events)


def codes(folded: Result) -> list[str]:
    return [finding.code for finding in (*folded.errors, *folded.diagnostics)]


def events_of(path: Path) -> list[Any]:
    folded = fold(path.read_bytes())
    return [folded.payload(index).value for index, kind in enumerate(folded.frame_kinds) if kind.value == "json"]


# -- checked against the official package -------------------------------------------------

@pytest.mark.parametrize("path", STREAMS, ids=lambda path: path.name)
def test_every_event_of_the_captures_is_valid_for_the_package(path: Path) -> None:
    for value in events_of(path):
        EVENT.validate_python(value)


@pytest.mark.parametrize("path", STREAMS, ids=lambda path: path.name)
def test_the_export_holds_valid_messages_and_state(path: Path) -> None:
    exported = tr_fold(path.read_bytes()).export()
    MessagesSnapshotEvent.model_validate({"messages": exported["messages"]})
    StateSnapshotEvent.model_validate({"snapshot": exported["state"]})
    assert spec_of(AGUI).read_response(exported) is not None


def test_a_stream_the_package_encodes_folds_to_what_was_encoded() -> None:
    encoder = EventEncoder()
    events = [
        RunStartedEvent(thread_id="th", run_id="run-7"),
        StateSnapshotEvent(snapshot={"todo": ["write"]}),
        TextMessageStartEvent(message_id="m1", role="assistant"),
        TextMessageContentEvent(message_id="m1", delta="Adding "),
        TextMessageContentEvent(message_id="m1", delta="a task."),
        TextMessageEndEvent(message_id="m1"),
        ToolCallStartEvent(tool_call_id="c1", tool_call_name="add_task", parent_message_id="m1"),
        ToolCallArgsEvent(tool_call_id="c1", delta='{"title": "te'),
        ToolCallArgsEvent(tool_call_id="c1", delta='st"}'),
        ToolCallEndEvent(tool_call_id="c1"),
        StateDeltaEvent(delta=[{"op": "add", "path": "/todo/-", "value": "test"}]),
        RunFinishedEvent(thread_id="th", run_id="run-7"),
    ]
    folded = tr_fold("".join(encoder.encode(item) for item in events).encode())
    assert (folded.dialect, folded.complete, folded.id, codes(folded)) == ("ag-ui", True, "run-7", [])
    choice = folded.choices[0]
    assert choice.content == "Adding a task."
    assert [(call.id, call.name, call.parsed) for call in choice.tool_calls] == [("c1", "add_task", {"title": "test"})]
    assert choice.finish_reason == "tool_calls"
    exported = folded.export()
    assert exported["state"] == {"todo": ["write", "test"]}
    snapshot = MessagesSnapshotEvent.model_validate({"messages": exported["messages"]})
    assert len(snapshot.messages) == 1 and snapshot.messages[0].tool_calls is not None


# -- the captures -------------------------------------------------------------------------

def test_the_spec_examples_leave_no_finding() -> None:
    for name in ("text-message.sse", "tool-call.sse", "state-snapshot-and-deltas.sse", "reasoning-then-text.sse",
                 "messages-snapshot-raw-custom.sse", "chunks.ndjson", "compacted-run.sse"):
        folded = fold((CAPTURES / name).read_bytes())
        assert codes(folded) == [] and folded.complete, name


def test_the_final_state_is_every_patch_applied() -> None:
    folded = tr_fold((CAPTURES / "state-snapshot-and-deltas.sse").read_bytes())
    assert folded.export()["state"] == {"status": "complete", "progress": 1,
                                        "results": [{"title": "AG-UI spec"}, {"title": "JSON Patch"}]}


def test_a_failing_patch_leaves_the_state_as_it_was() -> None:
    folded = tr_fold((CAPTURES / "bad-patch.sse").read_bytes())
    assert codes(folded) == ["state-patch-failed"] and "test /count" in folded.diagnostics[0].message
    assert folded.export()["state"] == {"count": 1, "items": ["a"]}


def test_the_conversation_keeps_tool_results_and_snapshots() -> None:
    messages = fold((CAPTURES / "tool-call.sse").read_bytes()).export()["messages"]
    assert [(m["id"], m["role"]) for m in messages] == [("msg_2", "assistant"), ("msg_3", "tool"),
                                                        ("msg_4", "assistant")]
    assert messages[1] == {"id": "msg_3", "role": "tool", "toolCallId": "call_1", "content": "18°C, fog"}
    snapshot = fold((CAPTURES / "messages-snapshot-raw-custom.sse").read_bytes())
    assert [m["id"] for m in snapshot.export()["messages"]] == ["u_0", "a_0", "u_1", "msg_2"]
    assert snapshot.native is not None
    assert [event["type"] for event in snapshot.native["events"]] == ["RAW", "CUSTOM"]


def test_a_run_error_is_an_in_stream_error() -> None:
    folded = tr_fold((CAPTURES / "run-error.sse").read_bytes())
    assert codes(folded) == ["in-stream-error"] and not folded.complete
    assert "rate_limited" in folded.errors[0].message and folded.choices[0].content == "Working on it"


def test_a_run_that_never_finishes() -> None:
    folded = tr_fold((CAPTURES / "never-finishes.sse").read_bytes())
    assert codes(folded) == ["never-ended", "never-ended", "tool-args-invalid", "missing-terminal"]
    assert not folded.complete


def test_args_after_the_end_are_not_folded() -> None:
    folded = tr_fold((CAPTURES / "args-after-end.sse").read_bytes())
    assert codes(folded) == ["event-after-end"]
    assert folded.choices[0].tool_calls[0].parsed == {"action": "call_tool", "tool_args": {}}


def test_content_before_its_start() -> None:
    folded = tr_fold((CAPTURES / "content-before-start.sse").read_bytes())
    assert codes(folded) == ["event-before-start", "event-before-start"]
    assert folded.choices[0].content == "Hi there"


# -- rules shown by small streams --------------------------------------------------------

def test_an_interrupted_run_is_incomplete_as_a_reply() -> None:
    interrupt = {**FINISH, "outcome": {"type": "interrupt", "interrupts": [{"id": "i", "reason": "approval"}]}}
    folded = tr_fold(sse(START, interrupt))
    assert (folded.choices[0].finish_reason, folded.choices[0].finish_reason_raw) == ("incomplete", "interrupt")


def test_events_after_a_run_error_are_reported() -> None:
    folded = tr_fold(sse(START, {"type": "RUN_ERROR", "message": "boom"}, {"type": "CUSTOM", "name": "x", "value": 1}))
    assert codes(folded) == ["in-stream-error", "event-after-end"]


def test_a_second_run_reopens_the_reply() -> None:
    second = {"type": "RUN_STARTED", "threadId": "t", "runId": "r2"}
    folded = tr_fold(sse(START, FINISH, second))
    assert folded.id == "r2" and not folded.complete and "missing-terminal" in codes(folded)


def test_an_unknown_type_and_wrong_values_are_reported_not_raised() -> None:
    folded = tr_fold(sse(START, {"type": "THINKING_START"},
                         {"type": "TEXT_MESSAGE_START", "messageId": 5},
                         {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": 7},
                         {"type": "STATE_DELTA", "delta": "not a patch"}, FINISH))
    # (the message the content started is never ended either)
    assert codes(folded) == ["unknown-ag-ui-event", "unexpected-payload", "event-before-start",
                             "unexpected-payload", "state-patch-failed", "never-ended"]


def test_a_snapshot_with_wrong_types_is_folded_without_raising() -> None:
    snapshot = {"type": "MESSAGES_SNAPSHOT", "messages": [
        {"id": "a", "role": "assistant", "content": 5, "toolCalls": 7}, "not a message",
        {"id": "b", "role": "assistant", "toolCalls": [{"id": "c", "function": {"name": "f", "arguments": 1}}]}]}
    call = {"type": "TOOL_CALL_START", "toolCallId": "d", "toolCallName": "g", "parentMessageId": "a"}
    folded = tr_fold(sse(START, snapshot, call, {"type": "TOOL_CALL_END", "toolCallId": "d"}, FINISH))
    assert [c.id for c in folded.choices[0].tool_calls] == ["c", "d"]
    assert spec_of(AGUI).read_response(folded.export()) is not None


# -- detection --------------------------------------------------------------------------

def test_ag_ui_claims_its_event_types_only() -> None:
    assert detect(START) is AGUI and detect({"type": "TEXT_MESSAGE_CHUNK", "delta": "x"}) is AGUI
    for value in ({"type": "message_start"}, {"type": "text-delta", "delta": "x"}, {"type": "run_started"},
                  {"type": ["RUN_STARTED"]}, [START]):
        assert not AGUI.claims(value), value


def test_no_other_dialect_claims_an_ag_ui_event() -> None:
    others = [dialect for name, dialect in DIALECTS.items() if name != "ag-ui"]
    for path in STREAMS:
        for value in events_of(path):
            assert [d.name for d in others if d.claims(value)] == [], (path.name, value)
