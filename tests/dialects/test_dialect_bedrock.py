"""Bedrock: ConverseStream events by their header, SDK-shaped events, InvokeModel chunks,
and exports checked against botocore's own ConverseResponse shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eventstream_helpers import event, message
from streamfold import fold

CAPTURES = Path(__file__).resolve().parents[1] / "captures" / "bedrock"


def test_blocks_are_the_real_content_blocks() -> None:
    result = fold((CAPTURES / "converse-reasoning-tool-call.bin").read_bytes())
    assert [(b.type, b.index, b.frames) for b in result.choices[0].blocks] == [("reasoning", 0, (1, 3)), ("tool_call", 1, (4, 7))]


def test_a_block_without_its_stop_is_closed_at_the_end_and_said() -> None:
    data = b"".join([event("messageStart", {"role": "assistant"}),
                     event("contentBlockStart", {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "t1", "name": "f"}}}),
                     event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "{\"a\": 1}"}}})])
    result = fold(data)
    assert result.choices[0].tool_calls[0].parsed == {"a": 1}
    assert {d.code for d in result.diagnostics} >= {"block-not-closed", "missing-terminal"}
    assert not result.complete


def test_unknown_events_are_listed_not_fatal() -> None:
    data = event("messageStart", {"role": "assistant"}) + event("newFancyEvent", {"x": 1}) + \
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "ok"}}) + event("messageStop", {"stopReason": "end_turn"})
    result = fold(data)
    assert result.choices[0].content == "ok" and result.complete
    assert [d.code for d in result.diagnostics] == ["unknown-event"]


def test_chunk_without_base64_bytes_is_an_error_not_a_crash() -> None:
    data = message({":message-type": "event", ":event-type": "chunk"}, {"bytes": "%%% not base64"})
    assert [e.code for e in fold(data).errors] == ["invalid-json"]


def test_export_matches_botocores_converse_response_shape() -> None:
    loaders = pytest.importorskip("botocore.loaders")
    from botocore.model import ServiceModel
    from botocore.validate import ParamValidator

    model = ServiceModel(loaders.Loader().load_service_model("bedrock-runtime", "service-2"))
    shape = model.operation_model("Converse").output_shape
    for name in ("converse-reasoning-tool-call.bin", "converse-text-no-block-start-cached.bin", "sdk-events-logged-as-jsonl.ndjson"):
        exported = fold((CAPTURES / name).read_bytes()).export()
        report = ParamValidator().validate(exported, shape)
        assert not report.has_errors(), (name, report.generate_report())
        assert exported["output"]["message"]["role"] == "assistant"
    exported = fold((CAPTURES / "converse-reasoning-tool-call.bin").read_bytes()).export()
    assert exported["output"]["message"]["content"] == [
        {"reasoningContent": {"reasoningText": {"text": "User wants Oslo weather.", "signature": "EqoBCkgIBxACGAIiQOk8n1vG2"}}},
        {"toolUse": {"toolUseId": "tooluse_7Hs2kQWvRZ6yJ9bN3cXe1A", "name": "get_weather", "input": {"city": "Oslo"}}}]
    assert json.dumps(exported)


# -- a Result read back from JSON is the same Result, and exports the same object ---------------
