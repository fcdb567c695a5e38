"""MCP Streamable HTTP dialect: every capture's messages are valid for the official `mcp` SDK's models
and its export is the JSON-RPC response they describe; each rule, trap and finding is shown by the
smallest stream, fed whole, byte by byte and in random chunks (`tr_fold`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest
from pydantic import TypeAdapter

from feeding import tr_fold
from streamfold import Result, fold
from streamfold.dialects import DIALECTS, detect, spec_of
from streamfold.dialects.mcp import MCP

CAPTURES = Path(__file__).resolve().parents[1] / "captures" / "mcp"
SSE_CAPTURES = sorted(CAPTURES.glob("*.sse"))
SERVER_NOTIFICATION: TypeAdapter[Any] = TypeAdapter(types.ServerNotification)
# The one frame written to break the models: a message without `jsonrpc`.
BROKEN_ON_PURPOSE = {("protocol-violations.sse", 0)}


def event(message: Any = None, *, event_id: str | None = None, name: str | None = None) -> bytes:
    head = (f"event: {name}\n" if name else "") + (f"id: {event_id}\n" if event_id is not None else "")
    data = "data: \n" if message is None else "data: " + json.dumps(message) + "\n"
    return (head + data + "\n").encode()


def result(message_id: Any, text: str = "ok", **extra: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": message_id, "result": {"content": [{"type": "text", "text": text}], **extra}}


PROGRESS = {"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": "t", "progress": 1, "total": 2}}


def codes(folded: Result) -> list[str]:
    return [finding.code for finding in (*folded.errors, *folded.diagnostics)]


def messages_of(path: Path) -> list[tuple[int, Any]]:
    folded = fold(path.read_bytes())
    found = []
    for index, kind in enumerate(folded.frame_kinds):
        if kind.value == "json":
            value = folded.payload(index).value
            found += [(index, item) for item in (value if isinstance(value, list) else [value])]
    return found


# -- checked against the official SDK -----------------------------------------------------

@pytest.mark.parametrize("path", SSE_CAPTURES, ids=lambda path: path.name)
def test_every_message_of_the_captures_is_valid_for_the_sdk(path: Path) -> None:
    for frame, message in messages_of(path):
        if (path.name, frame) in BROKEN_ON_PURPOSE:
            with pytest.raises(ValueError):
                types.jsonrpc_message_adapter.validate_python(message)
            continue
        parsed = types.jsonrpc_message_adapter.validate_python(message)
        if isinstance(parsed, types.JSONRPCNotification):
            SERVER_NOTIFICATION.validate_python(message)  # progress and log messages: their params too


@pytest.mark.parametrize("path", SSE_CAPTURES, ids=lambda path: path.name)
def test_the_export_is_a_jsonrpc_response_of_the_sdk(path: Path) -> None:
    exported = tr_fold(path.read_bytes()).export()
    parsed = types.jsonrpc_message_adapter.validate_python(exported)
    assert isinstance(parsed, types.JSONRPCResponse | types.JSONRPCError)
    if isinstance(parsed, types.JSONRPCResponse) and "content" in parsed.result:
        types.CallToolResult.model_validate(parsed.result)


def test_structured_content_and_is_error_survive_the_export() -> None:
    structured = types.CallToolResult.model_validate(fold((CAPTURES / "structured-content.sse").read_bytes())
                                                     .export()["result"])
    assert structured.structured_content == {"temperature": 22.5, "conditions": "Partly cloudy", "humidity": 65}
    failed = types.CallToolResult.model_validate(fold((CAPTURES / "tool-error.sse").read_bytes()).export()["result"])
    assert failed.is_error is True


def test_a_stream_cut_before_its_response_exports_what_the_sdk_hands_its_caller() -> None:
    exported = fold((CAPTURES / "cut-before-response.sse").read_bytes()).export()
    error = types.JSONRPCError.model_validate(exported)
    assert error.error.code == types.CONNECTION_CLOSED


def test_read_response_reads_back_the_export() -> None:
    folded = fold((CAPTURES / "tool-result-with-progress.sse").read_bytes())
    facts = spec_of(MCP).read_response(folded.export())
    assert facts is not None
    assert facts["content"] == folded.choices[0].content and facts["finish_reason"] == "result"
    assert spec_of(MCP).read_response(PROGRESS) is None


# -- the reply, notifications and errors ---------------------------------------------------

def test_the_spec_examples_leave_no_warning() -> None:
    for name in ("tool-result-with-progress", "structured-content", "initialize-result",
                 "sampling-request-then-result"):
        folded = fold((CAPTURES / f"{name}.sse").read_bytes())
        assert [finding.code for finding in folded.diagnostics if finding.severity != "info"] == [], name
        assert folded.errors == () and folded.complete, name


def test_the_priming_event_is_skipped_and_the_notifications_keep_their_order() -> None:
    folded = tr_fold((CAPTURES / "tool-result-with-progress.sse").read_bytes())
    assert codes(folded) == ["empty-data"]
    assert folded.frames[0].id == "s1-0" and folded.frames[0].data == ""
    native = folded.native
    assert native is not None
    assert [n["method"] for n in native["notifications"]] == [
        "notifications/progress", "notifications/message", "notifications/progress"]
    assert native["notifications"][2]["params"]["progress"] == 100


def test_text_items_are_joined_by_a_newline_and_other_content_is_left_to_the_export() -> None:
    folded = tr_fold((CAPTURES / "sampling-request-then-result.sse").read_bytes())
    assert folded.choices[0].content == "The capital of France is Paris.\n(answered through sampling)"
    assert folded.native is not None and folded.native["requests"][0]["method"] == "sampling/createMessage"
    assert [item["type"] for item in folded.export()["result"]["content"]] == ["text", "image", "text"]


def test_a_jsonrpc_error_response_is_an_in_stream_error() -> None:
    folded = tr_fold((CAPTURES / "protocol-error.sse").read_bytes())
    assert not folded.complete and folded.choices[0].finish_reason == "error"
    assert "-32602" in folded.errors[0].message and "Unknown tool" in folded.errors[0].message


def test_an_error_event_is_an_error_the_sdk_never_sees() -> None:
    folded = tr_fold((CAPTURES / "event-error.sse").read_bytes())
    assert codes(folded) == ["in-stream-error"]
    assert "only `message` events" in folded.errors[0].message and folded.id == "6"


def test_another_event_name_is_folded_but_said() -> None:
    folded = tr_fold(event(result(1), name="update"))
    assert codes(folded) == ["event-ignored-by-sdk"] and folded.choices[0].content == "ok"


def test_a_cut_stream_says_where_to_resume() -> None:
    folded = tr_fold((CAPTURES / "cut-before-response.sse").read_bytes())
    assert not folded.complete
    resumable = next(finding for finding in folded.diagnostics if finding.code == "resumable-cut")
    assert resumable.frame == 2 and "Last-Event-ID: c7-2" in resumable.message


def test_a_cut_stream_without_event_ids_is_not_resumable() -> None:
    folded = tr_fold(event(PROGRESS))
    assert codes(folded) == ["missing-terminal"]


# -- protocol violations ------------------------------------------------------------------

def test_the_violations_capture_reports_each_violation_once() -> None:
    folded = tr_fold((CAPTURES / "protocol-violations.sse").read_bytes())
    assert codes(folded) == ["jsonrpc-missing", "batch-not-allowed", "response-to-unknown-id"]
    assert folded.native is not None and len(folded.native["notifications"]) == 3
    assert folded.id == "2" and "stray" not in folded.choices[0].content


def test_a_response_repeated_is_not_folded_twice() -> None:
    folded = tr_fold(event(result(1, "first")) + event(result(1, "again")))
    assert codes(folded) == ["response-to-unknown-id"] and folded.choices[0].content == "first"


def test_a_response_to_the_servers_own_request_is_reported() -> None:
    request = {"jsonrpc": "2.0", "id": "s-1", "method": "elicitation/create", "params": {"message": "?"}}
    folded = tr_fold(event(request) + event(result("s-1")))
    assert codes(folded) == ["response-to-unknown-id"]


def test_a_non_object_result_is_reported_not_raised() -> None:
    folded = tr_fold(event({"jsonrpc": "2.0", "id": 1, "result": [1, 2]}))
    assert "unexpected-payload" in codes(folded)


# -- detection --------------------------------------------------------------------------

def test_mcp_claims_jsonrpc_messages_and_batches() -> None:
    assert detect(PROGRESS) is MCP and detect(result(1)) is MCP and detect([PROGRESS, result(1)]) is MCP
    assert detect({"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": "x"}}) is MCP


def test_mcp_leaves_a2a_streams_and_bare_json_alone() -> None:
    a2a = {"jsonrpc": "2.0", "id": 1, "result": {"kind": "status-update", "taskId": "t", "contextId": "c",
                                                 "status": {"state": "working"}, "final": False}}
    assert not MCP.claims(a2a)
    for value in ({"id": 1, "result": {}}, {"jsonrpc": "1.0", "method": "x"}, [], [1], "x", None):
        assert not MCP.claims(value), value


def test_no_other_dialect_claims_an_mcp_message() -> None:
    others = [dialect for name, dialect in DIALECTS.items() if name != "mcp"]
    for path in SSE_CAPTURES:
        for _, message in messages_of(path):
            assert [d.name for d in others if d.claims(message)] == [], (path.name, message)
