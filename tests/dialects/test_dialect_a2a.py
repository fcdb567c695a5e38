"""A2A streaming (`a2a`): each test builds the smallest stream that shows one rule of the
specification, every capture folds the same however fed, and the captures are checked against the
a2a-sdk package: each event is one the SDK reads (0.3: its pydantic `SendStreamingMessageResponse`;
1.0: its `StreamResponse`, parsed strictly), the SDK's own `append_artifact_to_task` builds the
same artifacts from the events, and the export is a `Task` (or `Message`) the SDK accepts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from feeding import tr_fold
from streamfold import Result, fold
from streamfold.dialects import DIALECTS, detect, spec_of
from streamfold.dialects.a2a import A2A

CAPTURES = Path(__file__).resolve().parents[1] / "captures"
OWN = sorted((CAPTURES / "a2a").glob("*.sse"))
TID, CID = "task-1", "ctx-1"


def sse(*values: Any) -> bytes:
    return b"".join(b"data: " + json.dumps(value).encode() + b"\n\n" for value in values)


def rpc(result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "result": result}


def task(state: str = "submitted", **fields: Any) -> dict[str, Any]:
    return rpc({"kind": "task", "id": TID, "contextId": CID, "status": {"state": state}, **fields})


def status(state: str, final: bool = False, said: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"state": state}
    if said is not None:
        body["message"] = {"kind": "message", "role": "agent", "messageId": "m", "parts": [{"kind": "text", "text": said}]}
    return rpc({"kind": "status-update", "taskId": TID, "contextId": CID, "status": body, "final": final})


def chunk(artifact: str, text: str, append: bool = False, last: bool = False) -> dict[str, Any]:
    return rpc({"kind": "artifact-update", "taskId": TID, "contextId": CID, "append": append, "lastChunk": last,
                "artifact": {"artifactId": artifact, "parts": [{"kind": "text", "text": text}]}})


def codes(result: Result) -> list[str]:
    return [d.code for d in result.diagnostics]


# -- detection ---------------------------------------------------------------

def test_claims_a2a_results_of_both_versions_only() -> None:
    for value in (task(), status("working"), chunk("a", "x"),
                  rpc({"kind": "message", "role": "agent", "messageId": "m", "parts": []}),
                  rpc({"statusUpdate": {"taskId": "t", "status": {"state": "TASK_STATE_WORKING"}}}),
                  rpc({"artifactUpdate": {"taskId": "t", "artifact": {"artifactId": "a", "parts": []}}})):
        assert A2A.claims(value), value
    for other in ({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "x"}]}},  # MCP tools/call
                  {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "x"}},  # any JSON-RPC error
                  {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}},
                  rpc({"kind": "task", "id": "t"}), rpc({"task": {"id": "t"}}), rpc({"kind": "other"}),
                  rpc({"task": {"id": "t", "status": "working"}}),  # an MCP-like task, its status a string
                  {"type": "message", "role": "assistant"}, []):
        assert not A2A.claims(other), other
    found = detect(task())
    assert found is A2A and DIALECTS["a2a"] is A2A


@pytest.mark.parametrize("path", sorted(p for p in CAPTURES.rglob("*") if p.is_file() and p.parent.name != "a2a"
                                        and not p.name.endswith((".json", ".md"))),
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_other_capture_is_taken_for_a2a(path: Path) -> None:
    assert fold(path.read_bytes()).dialect != "a2a"


@pytest.mark.parametrize("path", OWN, ids=lambda p: p.name)
def test_a_capture_folds_the_same_however_fed(path: Path) -> None:
    assert tr_fold(path.read_bytes()).dialect == "a2a"


# -- artifacts, messages, states ------------------------------------------------------

def test_append_joins_and_a_chunk_without_it_replaces() -> None:
    result = fold(sse(task(), chunk("a", "one"), chunk("a", " two", append=True), chunk("b", "B", last=True),
                      chunk("a", "ONE", last=True), status("completed", final=True)))
    assert result.choices[0].content == "ONEB" and result.complete
    assert [a["parts"] for a in result.export()["artifacts"]] == [[{"kind": "text", "text": "ONE"}],
                                                                 [{"kind": "text", "text": "B"}]]


def test_status_messages_are_not_reply_text_when_artifacts_came() -> None:
    result = fold(sse(task(), status("working", said="Thinking..."), chunk("a", "answer", last=True),
                      status("completed", final=True)))
    assert result.choices[0].content == "answer"
    exported = result.export()
    assert exported["history"][0]["parts"][0]["text"] == "Thinking..." and exported["status"]["state"] == "completed"


def test_the_question_of_an_interrupted_task_is_the_reply() -> None:
    result = fold(sse(task(), status("input-required", final=True, said="Which city?")))
    choice = result.choices[0]
    assert (choice.content, choice.finish_reason, result.complete) == ("Which city?", "incomplete", True)


def test_a_failed_task_is_an_in_stream_error_with_its_message() -> None:
    result = fold(sse(task(), chunk("a", "part"), status("failed", final=True, said="quota exceeded")))
    assert not result.complete and result.choices[0].finish_reason == "error"
    assert "quota exceeded" in result.errors[0].message


def test_the_stream_ends_at_final_not_at_a_terminal_state_alone() -> None:
    assert fold(sse(task(), status("working"))).complete is False
    ended = fold(sse(task(), status("completed", final=True), chunk("a", "late")))
    assert ended.complete and ended.choices[0].content == "" and "frame-after-terminal" in codes(ended)


def test_v1_ends_at_the_terminal_state() -> None:
    v1 = fold(sse(rpc({"task": {"id": TID, "status": {"state": "TASK_STATE_WORKING"}}}),
                  rpc({"statusUpdate": {"taskId": TID, "status": {"state": "TASK_STATE_COMPLETED"}}})))
    assert v1.complete and v1.choices[0].finish_reason == "stop"
    assert "kind" not in v1.export()


def test_an_append_for_an_unknown_artifact_and_a_mixed_version_are_reported() -> None:
    result = fold(sse(task(), chunk("zz", "x", append=True),
                      rpc({"statusUpdate": {"taskId": TID, "status": {"state": "TASK_STATE_COMPLETED"}}})))
    assert result.choices[0].content == "x" and codes(result).count("unexpected-payload") == 2


def test_a_message_reply_is_the_whole_stream() -> None:
    message = {"kind": "message", "role": "agent", "messageId": "m9", "parts": [{"kind": "text", "text": "Hi"}]}
    result = fold(sse(rpc(message)))
    assert (result.id, result.choices[0].content, result.complete) == ("m9", "Hi", True)
    assert result.export() == message


def test_a_jsonrpc_error_is_an_in_stream_error() -> None:
    result = fold(sse(task(), {"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "Task not found"}}))
    assert [e.code for e in result.errors] == ["in-stream-error"] and "-32001" in result.errors[0].message


def test_bad_values_are_reported_not_raised() -> None:
    bad = rpc({"kind": "artifact-update", "taskId": TID, "artifact": "nope"})
    result = fold(sse(task(), bad, rpc({"kind": "status-update", "taskId": TID, "status": 3}), {"x": 1}))
    assert codes(result).count("unexpected-payload") == 3


def test_parts_that_are_not_a_list_are_reported_and_appends_still_fold() -> None:
    odd = rpc({"kind": "artifact-update", "taskId": TID, "artifact": {"artifactId": "a", "parts": 7}})
    result = fold(sse(task(), odd, chunk("a", "x", append=True), status("completed", final=True)))
    assert result.choices[0].content == "x" and "unexpected-payload" in codes(result)
    assert result.export()["artifacts"] == [{"artifactId": "a", "parts": [{"kind": "text", "text": "x"}]}]


def test_appended_artifacts_are_what_joining_each_chunk_anew_gives() -> None:
    """Appends extend the held artifact in place (a new dict per chunk was quadratic): the export is
    still each chunk's fields over the last ones, keys in their first places, parts joined; and the
    chunks' own values are left as sent."""
    chunks = [chunk("a", "A0"), chunk("b", "B0")]
    for i in range(1, 40):
        update = chunk("ab"[i % 2], f"{'AB'[i % 2]}{i}", append=i % 7 != 0)
        update["result"]["artifact"].update({"name": f"n{i}"} if i % 3 else {"description": f"d{i}"})
        chunks.append(update)
    sent = json.loads(json.dumps(chunks))
    joined: dict[str, dict[str, Any]] = {}
    for value in chunks:
        body = value["result"]
        artifact, key = body["artifact"], body["artifact"]["artifactId"]
        if body["append"] and key in joined:
            joined[key] = {**joined[key], **{k: v for k, v in artifact.items() if k != "parts"},
                           "parts": [*joined[key]["parts"], *artifact["parts"]]}
        else:
            joined[key] = dict(artifact)
    result = tr_fold(sse(task(), *chunks, status("completed", final=True)))
    assert [list(a.items()) for a in result.export()["artifacts"]] == [list(a.items()) for a in joined.values()]
    assert result.choices[0].content == "".join(p["text"] for a in joined.values() for p in a["parts"])
    dialect = A2A()  # driven by hand, as a caller with values of its own would
    for frame, value in enumerate(chunks):
        dialect.fold(value, frame)
    assert chunks == sent


def test_summaries_name_the_event() -> None:
    assert spec_of(A2A).summary(chunk("a", "Hi", append=True, last=True)) == 'artifact-update a append last "Hi"'
    assert spec_of(A2A).summary(status("completed", final=True)) == "status-update completed final"
    assert spec_of(A2A).summary({"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "m"}}) == 'error 1 "m"'


# -- the a2a-sdk package ---------------------------------------------------------------

def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in path.read_text().splitlines() if line.startswith("data: ")]


def _sdk_events(path: Path) -> list[Any]:
    """Each event as the SDK reads it, as an a2a 1.0 `StreamResponse` (0.3 events converted by its compat layer)."""
    from a2a.compat.v0_3 import conversions
    from a2a.compat.v0_3 import types as v03
    from a2a.types import StreamResponse
    from google.protobuf import json_format

    out = []
    for value in _events(path):
        if "error" in value:
            continue
        if "kind" in value["result"]:
            event = v03.SendStreamingMessageResponse.model_validate(_zoned(value)).root.result
            convert = {"task": ("task", conversions.to_core_task),
                       "message": ("message", conversions.to_core_message),
                       "status-update": ("status_update", conversions.to_core_task_status_update_event),
                       "artifact-update": ("artifact_update", conversions.to_core_task_artifact_update_event)}
            field, to_core = convert[value["result"]["kind"]]
            out.append(StreamResponse(**{field: to_core(event)}))
        else:
            out.append(json_format.ParseDict(value["result"], StreamResponse()))  # strict: no unknown field
    return out


def _zoned(value: Any) -> Any:
    """The 0.3 spec's example timestamps have no zone (`2025-04-02T16:59:25.331844`), which the SDK's
    0.3-to-1.0 conversion (protobuf `Timestamp.FromJsonString`) refuses: read as UTC for it."""
    if isinstance(value, dict):
        return {key: (item + "Z" if key == "timestamp" and isinstance(item, str) and item[-1:].isdigit() else
                      _zoned(item)) for key, item in value.items()}
    return [_zoned(item) for item in value] if isinstance(value, list) else value


@pytest.mark.parametrize("path", OWN, ids=lambda p: p.name)
def test_the_sdk_builds_the_same_artifacts_and_state(path: Path) -> None:
    pytest.importorskip("a2a", reason="a2a-sdk is not installed")
    from a2a.server.tasks.task_manager import append_artifact_to_task
    from a2a.types import Task
    from google.protobuf import json_format

    task_, texts = Task(), []
    for event in _sdk_events(path):
        which = event.WhichOneof("payload")
        if which == "task":
            task_.CopyFrom(event.task)
        elif which == "status_update":
            task_.status.CopyFrom(event.status_update.status)
        elif which == "artifact_update":
            append_artifact_to_task(task_, event.artifact_update)
        else:
            texts += [part.text for part in event.message.parts if part.WhichOneof("content") == "text"]
    result = fold(path.read_bytes())
    said = "".join(part.text for artifact in task_.artifacts for part in artifact.parts) + "".join(texts)
    if said:
        assert result.choices[0].content == said
    exported = result.export()
    if "status" in exported:  # a Task: the same artifacts and state as the SDK's
        core = json_format.ParseDict(exported, Task()) if "kind" not in exported else _core_task(exported)
        assert [json_format.MessageToDict(a) for a in core.artifacts] == [
            json_format.MessageToDict(a) for a in task_.artifacts]
        assert core.status.state == task_.status.state


def _core_task(exported: dict[str, Any]) -> Any:
    from a2a.compat.v0_3 import conversions
    from a2a.compat.v0_3 import types as v03

    return conversions.to_core_task(v03.Task.model_validate(_zoned(exported)))
