"""MCP 2026-07-28 (issue 26, part 8): the captures are made of the mcp SDK's own 2026-07-28 wire types
(`mcp_types._v2026_07_28`) and read back by them; the findings follow the version the stream's messages
show: a cut stream is not resumable there, a server request on the stream is a violation there, and an
InputRequiredResult is a finish of its own. A stream that shows no 2026-07-28 message keeps the earlier
rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from feeding import tr_fold
from streamfold import fold
from streamfold.services import load

wire = pytest.importorskip("mcp_types._v2026_07_28", reason="the mcp SDK (2.3+) has the 2026-07-28 wire types")

CAPTURES = sorted((Path(__file__).resolve().parents[1] / "captures" / "mcp").glob("v2026-*.sse"))
RESULTS = {"input_required": wire.InputRequiredResult}


def _messages(path: Path) -> list[dict[str, object]]:
    return [json.loads(line[6:]) for line in path.read_text().splitlines() if line.startswith("data: ")]


@pytest.mark.parametrize("path", CAPTURES, ids=lambda path: path.stem)
def test_every_message_is_one_the_sdk_types_read(path: Path) -> None:
    for message in _messages(path):
        if "method" in message:
            model = wire.JSONRPCRequest if "id" in message else wire.JSONRPCNotification
            model.model_validate(message)
        else:
            wire.JSONRPCResultResponse.model_validate(message)
            result = message["result"]
            assert isinstance(result, dict) and "resultType" in result  # its servers MUST send it
            if result["resultType"] in RESULTS:
                RESULTS[str(result["resultType"])].model_validate(result)
    assert tr_fold(path.read_bytes()).dialect == "mcp"


def _stream(*messages: dict[str, object], ids: bool = True) -> bytes:
    return b"".join((b"id: %d\n" % n if ids else b"") + b"data: " + json.dumps(m).encode() + b"\n\n"
                    for n, m in enumerate(messages))


PROGRESS = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}}
LISTENING = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
             "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": 4}}}
SAMPLING = {"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}}


def codes(data: bytes) -> list[str]:
    return [d.code for d in fold(data).diagnostics]


def test_a_cut_stream_is_resumable_before_2026_and_not_after() -> None:
    assert "resumable-cut" in codes(_stream(PROGRESS)) and "not-resumable" not in codes(_stream(PROGRESS))
    cut = codes(_stream(LISTENING))
    assert "not-resumable" in cut and "resumable-cut" not in cut


def test_a_server_request_on_the_stream_is_a_violation_only_at_2026() -> None:
    done = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "ok"}]}}
    assert "request-on-stream" not in codes(_stream(SAMPLING, done))
    modern = {**done, "result": {**done["result"], "resultType": "complete"}}
    assert "request-on-stream" in codes(_stream(SAMPLING, modern))


def test_an_input_required_result_is_its_own_finish_and_no_tool_result() -> None:
    asked = {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required", "requestState": "x"}}
    result = fold(_stream(PROGRESS, asked))
    assert (result.choices[0].finish_reason, result.choices[0].finish_reason_raw) == ("incomplete", "input_required")
    assert result.choices[0].content == "" and "input-required" in [d.code for d in result.diagnostics]
    assert result.native["version"] == "2026-07-28"


MODERN_TOOL_CALL = (("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"), ("Mcp-Name", "search"))


def folded_with(data: bytes, *headers: tuple[str, str]) -> list[str]:
    result = tr_fold(data, request_headers=headers)
    return [d.code for d in result.diagnostics]


def test_the_request_s_protocol_version_header_decides_a_stream_its_messages_do_not_date() -> None:
    cut = folded_with(_stream(PROGRESS), *MODERN_TOOL_CALL)
    assert "not-resumable" in cut and "resumable-cut" not in cut and "mcp-header-missing" not in cut
    # Earlier versions, and what is no version, keep the earlier rules.
    for asked in ("2025-11-25", "draft", "9999", ""):
        assert "resumable-cut" in folded_with(_stream(PROGRESS), ("MCP-Protocol-Version", asked))
    # The header's name is read in any case.
    assert "not-resumable" in folded_with(_stream(PROGRESS), ("mcp-protocol-version", "2026-07-28"),
                                          ("MCP-METHOD", "ping"))


def test_the_method_header_names_a_listen_stream() -> None:
    result = fold(_stream(PROGRESS), request_headers={"MCP-Protocol-Version": "2026-07-28",
                                                       "Mcp-Method": "subscriptions/listen"})
    not_resumable = next(d for d in result.diagnostics if d.code == "not-resumable")
    assert not_resumable.details["listen"] is True and "listens again" in not_resumable.message


@pytest.mark.parametrize(("headers", "missing"), [
    ((("MCP-Protocol-Version", "2026-07-28"),), ["Mcp-Method"]),
    ((("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call")), ["Mcp-Name"]),
    ((("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "resources/read"), ("Mcp-Name", " ")), ["Mcp-Name"]),
    ((("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/list")), []),
    ((("MCP-Protocol-Version", "2025-11-25"),), []),
])
def test_a_2026_request_without_its_standard_headers_is_said(headers: tuple[tuple[str, str], ...],
                                                              missing: list[str]) -> None:
    result = fold(_stream(PROGRESS), request_headers=headers)
    said = [d for d in result.diagnostics if d.code == "mcp-header-missing"]
    assert [d.details["missing"] for d in said] == ([missing] if missing else [])
    assert all(d.frame is None and d.severity.value == "warning" for d in said)


def test_a_har_s_request_headers_reach_the_fold(tmp_path: Path) -> None:
    body = _stream(PROGRESS).decode()
    har = {"log": {"version": "1.2", "entries": [{
        "request": {"method": "POST", "url": "https://mcp.example.com/mcp", "headers": [
            {"name": name, "value": value} for name, value in MODERN_TOOL_CALL[:2]]},
        "response": {"status": 200, "headers": [{"name": "Content-Type", "value": "text/event-stream"}],
                     "content": {"mimeType": "text/event-stream", "text": body}}}]}}
    loaded = load(json.dumps(har).encode())
    codes_found = [d.code for d in loaded.result.diagnostics]
    assert "not-resumable" in codes_found and "mcp-header-missing" in codes_found  # no Mcp-Name for tools/call


@pytest.mark.parametrize("headers", [5, [("a",)], [("a", 1)], {"a": None}])
def test_request_headers_that_are_no_headers_are_api_misuse(headers: object) -> None:
    with pytest.raises(TypeError, match="request_headers"):
        fold(b"", request_headers=headers)  # type: ignore[arg-type]
