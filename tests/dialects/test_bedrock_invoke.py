"""Bedrock `InvokeModelWithResponseStream`: the model's own events as base64 JSON in `chunk`
messages. Claude's are Anthropic events: the Result says `anthropic` over `aws-eventstream`
(Bedrock is the carrier), with no event-name warnings (`:event-type chunk` is the envelope).
Amazon Nova's are ConverseStream events with `amazon-bedrock-*` keys beside them: `bedrock`.
And ConverseStream's server tools (`toolUse` of type `server_tool_use`) are blocks, not tool calls.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from click.testing import CliRunner

from eventstream_helpers import event, message
from feeding import tr_fold
from streamfold import Folder, Result, fold
from streamfold.cli import cli
from streamfold.services.rows import frame_rows
from values import assert_a_value

METRICS = {"inputTokenCount": 12, "outputTokenCount": 6, "invocationLatency": 300, "firstByteLatency": 120}


def chunk(payload: dict[str, Any], **extra: Any) -> bytes:
    body = json.dumps({**payload, **extra}).encode()
    return message({":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"},
                   {"bytes": base64.b64encode(body).decode(), "p": "abcdefghij"})


def claude(*middle: dict[str, Any], stop_reason: str = "end_turn") -> bytes:
    start = {"type": "message_start", "message": {
        "id": "msg_bdrk_01", "type": "message", "role": "assistant", "model": "claude-3-sonnet-20240229",
        "content": [], "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 12, "output_tokens": 1}}}
    end = [{"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": 6}}]
    return b"".join([chunk(start), *(chunk(item) for item in middle), *(chunk(item) for item in end),
                     chunk({"type": "message_stop"}, **{"amazon-bedrock-invocationMetrics": METRICS})])


TEXT_BLOCK = [{"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
              {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello"}},
              {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": " there."}},
              {"type": "content_block_stop", "index": 0}]
TOOL_BLOCK = [{"type": "content_block_start", "index": 1,
               "content_block": {"type": "tool_use", "id": "toolu_bdrk_1", "name": "get_weather", "input": {}}},
              {"type": "content_block_delta", "index": 1,
               "delta": {"type": "input_json_delta", "partial_json": "{\"city\": "}},
              {"type": "content_block_delta", "index": 1,
               "delta": {"type": "input_json_delta", "partial_json": "\"Oslo\"}"}},
              {"type": "content_block_stop", "index": 1}]


def test_claude_through_invoke_model_is_anthropic_over_the_event_stream() -> None:
    result = tr_fold(claude(*TEXT_BLOCK))
    assert (result.dialect, result.transport, result.complete) == ("anthropic", "aws-eventstream", True)
    assert result.choices[0].content == "Hello there."
    assert (result.id, result.model) == ("msg_bdrk_01", "claude-3-sonnet-20240229")
    assert result.usage is not None and (result.usage.input_tokens, result.usage.output_tokens) == (12, 6)
    # The `:event-type chunk` header is the carrier's envelope: no event-type-mismatch (it was 6 a stream).
    assert [d.code for d in result.diagnostics] == []


def test_claude_tool_use_through_invoke_model() -> None:
    result = tr_fold(claude(*TEXT_BLOCK, *TOOL_BLOCK, stop_reason="tool_use"))
    choice = result.choices[0]
    assert [(call.id, call.name, call.parsed) for call in choice.tool_calls] == [
        ("toolu_bdrk_1", "get_weather", {"city": "Oslo"})]
    assert (choice.finish_reason, choice.finish_reason_raw) == ("tool_calls", "tool_use")
    assert result.diagnostics == ()


def test_an_invoked_claude_result_is_a_value_and_exports_an_anthropic_message() -> None:
    result = fold(claude(*TEXT_BLOCK, *TOOL_BLOCK, stop_reason="tool_use"))
    back = assert_a_value(result)
    exported = back.export()
    assert exported["type"] == "message" and exported["id"] == "msg_bdrk_01"
    assert [block["type"] for block in exported["content"]] == ["text", "tool_use"]
    assert exported["content"][1]["input"] == {"city": "Oslo"}
    assert back.to_dict()["dialect"] == "anthropic" and back.to_dict()["transport"] == "aws-eventstream"


def test_forcing_the_vendor_dialect_on_bedrock_bytes_folds_the_same() -> None:
    data = claude(*TEXT_BLOCK)
    assert fold(data, dialect="anthropic") == fold(data)
    assert fold(data, dialect="anthropic", transport="aws-eventstream") == fold(data)
    folder = Folder(dialect="anthropic")
    folder.feed(data)
    assert folder.dialect == "anthropic" and folder.close() == fold(data)


def test_frames_of_an_invoked_claude_stream_are_summarised_through_the_chunk() -> None:
    rows = list(frame_rows(fold(claude(*TEXT_BLOCK))))
    assert rows[0]["event"] == "chunk"
    assert rows[1]["summary"].startswith("chunk") and "text" in rows[1]["summary"]
    assert all("bytes" not in row["summary"] for row in rows)


def test_data_after_the_wrapped_message_stop_is_listed_not_folded() -> None:
    late = chunk({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": " late"}})
    result = fold(claude(*TEXT_BLOCK) + late)
    assert result.choices[0].content == "Hello there."
    assert [d.code for d in result.diagnostics] == ["frame-after-terminal"]


def test_the_cli_shows_and_exports_an_invoked_claude_stream(tmp_path: Any) -> None:
    path = tmp_path / "invoke.bin"
    path.write_bytes(claude(*TEXT_BLOCK))
    runner = CliRunner()
    shown = runner.invoke(cli, ["--color", "never", "show", str(path)], env={"COLUMNS": "100"})
    assert shown.exit_code == 0 and shown.stdout.startswith("anthropic · aws-eventstream · complete")
    as_json = json.loads(runner.invoke(cli, ["show", "--json", str(path)]).stdout)
    assert (as_json["dialect"], as_json["transport"]) == ("anthropic", "aws-eventstream")
    assert Result.from_dict(as_json) == fold(path.read_bytes())
    exported = json.loads(runner.invoke(cli, ["export", str(path)]).stdout)
    assert exported["type"] == "message" and exported["content"][0]["text"] == "Hello there."
    frames = runner.invoke(cli, ["--color", "never", "frames", str(path)], env={"COLUMNS": "120"})
    assert frames.exit_code == 0 and "message_start" in frames.stdout


# -- Amazon Nova: ConverseStream events inside the chunks ----------------------------------------


def nova(*deltas: str, guardrail: bool = False) -> bytes:
    action = {"amazon-bedrock-guardrailAction": "INTERVENED"} if guardrail else {}
    parts = [chunk({"messageStart": {"role": "assistant"}})]
    for index, text in enumerate(deltas):
        # Nova gives every text delta its own content block, without contentBlockStart.
        parts.append(chunk({"contentBlockDelta": {"delta": {"text": text}, "contentBlockIndex": index}}, **action))
        parts.append(chunk({"contentBlockStop": {"contentBlockIndex": index}}))
    parts.append(chunk({"messageStop": {"stopReason": "end_turn"}}))
    usage = {"inputTokens": 12, "outputTokens": 13, "cacheReadInputTokenCount": 0, "cacheWriteInputTokenCount": 0}
    parts.append(chunk({"metadata": {"usage": usage, "metrics": {}, "trace": {}}},
                       **{"amazon-bedrock-invocationMetrics": METRICS}, **action))
    return b"".join(parts)


@pytest.mark.parametrize("guardrail", [False, True], ids=["plain", "guardrail-keys"])
def test_nova_through_invoke_model_folds_as_bedrock(guardrail: bool) -> None:
    result = tr_fold(nova("The", " three", " primary colors.", guardrail=guardrail))
    assert (result.dialect, result.transport, result.complete) == ("bedrock", "aws-eventstream", True)
    choice = result.choices[0]
    assert (choice.role, choice.content) == ("assistant", "The three primary colors.")
    assert (choice.finish_reason, choice.finish_reason_raw) == ("stop", "end_turn")
    assert result.usage is not None
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.cache_read_tokens) == (12, 13, 0)
    assert result.diagnostics == () and result.errors == ()
    assert [part["text"] for part in assert_a_value(result).export()["output"]["message"]["content"]] == [
        "The", " three", " primary colors."]


def test_another_vendors_event_in_a_stream_of_nova_chunks_is_ignored_and_said() -> None:
    stray = chunk({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x"}})
    head = chunk({"messageStart": {"role": "assistant"}})
    result = fold(head + stray + nova("The", " end.")[len(head):])
    assert (result.dialect, result.choices[0].content) == ("bedrock", "The end.")
    assert [d.code for d in result.diagnostics] == ["unexpected-payload"]


# -- ConverseStream server tools (Nova's code interpreter) ---------------------------------------


def server_tool_stream() -> bytes:
    return b"".join([
        event("messageStart", {"role": "assistant"}),
        event("contentBlockStart", {"contentBlockIndex": 0, "start": {"toolUse": {
            "toolUseId": "tooluse_srv_1", "name": "nova_code_interpreter", "type": "server_tool_use"}}}),
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "{\"code\": "}}}),
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "\"print(6*7)\"}"}}}),
        event("contentBlockStop", {"contentBlockIndex": 0}),
        event("contentBlockStart", {"contentBlockIndex": 1, "start": {"toolResult": {
            "toolUseId": "tooluse_srv_1", "type": "nova_code_interpreter_result", "status": "success"}}}),
        event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolResult": [{"text": "4"}]}}),
        event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolResult": [{"text": "2\n"}]}}),
        event("contentBlockStop", {"contentBlockIndex": 1}),
        event("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"text": "It is 42."}}),
        event("contentBlockStop", {"contentBlockIndex": 2}),
        event("contentBlockStart", {"contentBlockIndex": 3, "start": {"toolUse": {
            "toolUseId": "tooluse_client_1", "name": "save"}}}),
        event("contentBlockDelta", {"contentBlockIndex": 3, "delta": {"toolUse": {"input": "{\"n\": 42}"}}}),
        event("contentBlockStop", {"contentBlockIndex": 3}),
        event("messageStop", {"stopReason": "tool_use"}),
        event("metadata", {"usage": {"inputTokens": 30, "outputTokens": 20, "totalTokens": 50}, "metrics": {"latencyMs": 300}}),
    ])


def test_a_server_tool_use_is_a_block_not_a_tool_call() -> None:
    result = tr_fold(server_tool_stream())
    choice = result.choices[0]
    # Only the client's own tool is a tool call; the code interpreter ran on Bedrock's side.
    assert [(call.id, call.name, call.parsed) for call in choice.tool_calls] == [("tooluse_client_1", "save", {"n": 42})]
    assert [block.type for block in choice.blocks] == ["server_tool_use", "toolResult", "text", "tool_call"]
    assert choice.content == "It is 42."
    assert result.diagnostics == ()


def test_a_server_tool_use_and_its_result_are_in_the_export() -> None:
    exported = assert_a_value(fold(server_tool_stream())).export()
    content = exported["output"]["message"]["content"]
    assert content[0] == {"toolUse": {"toolUseId": "tooluse_srv_1", "name": "nova_code_interpreter",
                                      "input": {"code": "print(6*7)"}, "type": "server_tool_use"}}
    assert content[1] == {"toolResult": {"toolUseId": "tooluse_srv_1", "type": "nova_code_interpreter_result",
                                         "status": "success", "content": [{"text": "42\n"}]}}
    assert content[3] == {"toolUse": {"toolUseId": "tooluse_client_1", "name": "save", "input": {"n": 42}}}
    loaders = pytest.importorskip("botocore.loaders")
    from botocore.model import ServiceModel
    from botocore.validate import ParamValidator

    model = ServiceModel(loaders.Loader().load_service_model("bedrock-runtime", "service-2"))
    report = ParamValidator().validate(exported, model.operation_model("Converse").output_shape)
    assert not report.has_errors(), report.generate_report()


def test_a_server_tool_input_that_does_not_parse_is_reported_as_a_server_tool() -> None:
    data = b"".join([
        event("messageStart", {"role": "assistant"}),
        event("contentBlockStart", {"contentBlockIndex": 0, "start": {"toolUse": {
            "toolUseId": "t", "name": "nova_code_interpreter", "type": "server_tool_use"}}}),
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "{\"code\": "}}}),
        event("contentBlockStop", {"contentBlockIndex": 0}),
        event("messageStop", {"stopReason": "end_turn"})])
    result = fold(data)
    assert result.choices[0].tool_calls == ()
    (finding,) = result.diagnostics
    assert finding.code == "tool-args-invalid" and finding.message.startswith("server tool call in content block 0")
