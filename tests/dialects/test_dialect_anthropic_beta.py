"""The Anthropic blocks and deltas that came after the dialect was first written: beta `compaction` blocks and
their `compaction_delta`, `mcp_tool_listing`, `advisor_tool_result`, `fallback`, and `message_delta`'s
`context_management`. The names every block and delta type the anthropic SDK's unions hold is known come from
the SDK itself, so a type the SDK adds shows up here."""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import pytest

from streamfold import Result, fold
from streamfold.dialects import opaque_state

CAPTURES = Path(__file__).resolve().parents[1] / "captures" / "anthropic"
START = {"type": "message_start", "message": {
    "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-opus-4-6", "content": [],
    "stop_reason": None, "stop_sequence": None,
    "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1}}}
END = [{"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": 5}}, {"type": "message_stop"}]


def sse(*events: dict[str, Any]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def block(index: int, **content: Any) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": content}


def compaction(index: int, content: str | None, encrypted: str | None = None) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index,
            "delta": {"type": "compaction_delta", "content": content, "encrypted_content": encrypted}}


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def text(index: int, value: str) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": value}}


def codes(result: Result) -> set[str]:
    return {d.code for d in (*result.errors, *result.diagnostics)}


def _union_types(union: Any) -> list[str]:
    members = typing.get_args(typing.get_args(union)[0]) if typing.get_origin(union) is typing.Annotated \
        else typing.get_args(union)
    return sorted(typing.get_args(member.model_fields["type"].annotation)[0] for member in members)


anthropic = pytest.importorskip("anthropic")
from anthropic.types.beta import BetaContentBlock, BetaRawContentBlockDelta  # noqa: E402

BLOCK_TYPES = _union_types(BetaContentBlock)
DELTA_TYPES = _union_types(BetaRawContentBlockDelta)


def test_the_sdk_unions_are_read() -> None:
    assert {"compaction", "fallback", "mcp_tool_listing", "text", "tool_use"} <= set(BLOCK_TYPES)
    assert "compaction_delta" in DELTA_TYPES


@pytest.mark.parametrize("kind", BLOCK_TYPES)
def test_every_block_type_of_the_sdk_is_known(kind: str) -> None:
    result = fold(sse(START, block(0, type=kind), stop(0), *END))
    assert "unknown-event-type" not in codes(result)
    assert [b.type for b in result.choices[0].blocks] != ["unknown"]


@pytest.mark.parametrize("kind", DELTA_TYPES)
def test_every_delta_type_of_the_sdk_is_known(kind: str) -> None:
    result = fold(sse(START, block(0, type="text", text=""),
                      {"type": "content_block_delta", "index": 0, "delta": {"type": kind}}, stop(0), *END))
    assert "unknown-event-type" not in codes(result)


def test_a_truly_unknown_delta_is_still_named() -> None:
    result = fold(sse(START, block(0, type="text", text=""),
                      {"type": "content_block_delta", "index": 0, "delta": {"type": "hologram_delta"}}, stop(0), *END))
    (finding,) = [d for d in result.diagnostics if d.code == "unknown-event-type"]
    assert finding.severity == "info" and "hologram_delta" in finding.message


def test_a_compaction_block_is_its_own_block_never_reply_text() -> None:
    result = fold((CAPTURES / "beta-compaction.sse").read_bytes())
    choice = result.choices[0]
    assert [b.type for b in choice.blocks] == ["compaction", "text"]
    assert choice.content == "Next, the auth middleware: FastAPI uses dependencies for that."
    assert choice.reasoning is None and choice.tool_calls == ()
    summary = result.export()["content"][0]
    assert summary["type"] == "compaction"
    assert summary["content"].startswith("## Summary of earlier turns\n") and "auth middleware." in summary["content"]
    assert summary["encrypted_content"] == "EqQBCkgIARABGAIiQOpaqueCompactionState=="
    assert codes(result) == set()


def test_compaction_content_appends_encrypted_content_replaces_and_nulls_keep() -> None:
    result = fold((CAPTURES / "beta-compaction-split-nulls.sse").read_bytes())
    (summary,) = result.export()["content"]
    assert summary == {"type": "compaction", "content": "The user asked for a haiku; one was written.",
                       "encrypted_content": "EqQBnew=="}
    (finding,) = [d for d in result.diagnostics if d.code == "compaction-split"]
    assert finding.severity == "info" and finding.frame == 4  # the second delta with content
    choice = result.choices[0]
    assert (choice.content, choice.finish_reason, choice.finish_reason_raw) == ("", "incomplete", "compaction")


def test_a_failed_compaction_keeps_its_null_content() -> None:
    result = fold(sse(START, block(0, type="compaction", content=None), compaction(0, None, None), stop(0), *END))
    assert result.export()["content"] == [{"type": "compaction", "content": None}]
    assert codes(result) == set()


def test_the_frames_of_the_capture_are_not_changed_by_the_fold() -> None:
    data = sse(START, block(0, type="compaction", content=None), compaction(0, "S", "E"), stop(0), *END)
    result = fold(data)
    assert result.export()["content"] == [{"type": "compaction", "content": "S", "encrypted_content": "E"}]
    assert fold(data).export() == result.export()  # the start payload was copied, not folded into


def test_a_compaction_delta_without_its_start_is_folded_as_a_compaction_block() -> None:
    result = fold(sse(START, compaction(0, "S", "E"), stop(0), *END))
    assert [b.type for b in result.choices[0].blocks] == ["compaction"]
    assert result.export()["content"] == [{"type": "compaction", "content": "S", "encrypted_content": "E"}]
    assert "content-block-missing-start" in codes(result)


def test_a_compaction_delta_on_a_text_block_is_a_misfit() -> None:
    result = fold(sse(START, block(0, type="text", text=""), compaction(0, "S"), text(0, "hi"), stop(0), *END))
    assert result.choices[0].content == "hi"
    assert "unexpected-payload" in codes(result)


def test_the_compaction_state_is_opaque_state_of_the_reply() -> None:
    result = fold((CAPTURES / "beta-compaction.sse").read_bytes())
    found = {(o.what, o.path, o.frame) for o in opaque_state(result)}
    assert ("compaction encrypted content", "content[0].encrypted_content", 2) in found


def test_mcp_listing_advisor_and_fallback_blocks_are_kept_whole_and_the_fallback_names_the_model() -> None:
    result = fold((CAPTURES / "beta-mcp-listing-advisor-fallback.sse").read_bytes())
    choice = result.choices[0]
    assert [b.type for b in choice.blocks] == ["mcp_tool_listing", "mcp_tool_use", "mcp_tool_result",
                                               "server_tool_use", "advisor_tool_result", "fallback", "text"]
    assert choice.tool_calls == ()  # MCP and advisor calls are run by Anthropic, not the client
    assert result.model == "claude-sonnet-4-6"  # as the SDK relabels its snapshot at the fallback block
    exported = result.export()
    assert exported["content"][1]["input"] == {"title": "Login fails"}
    assert exported["content"][0]["tools"][0]["name"] == "open_ticket"
    assert exported["context_management"] == {"applied_edits": [
        {"type": "clear_thinking_20251015", "cleared_input_tokens": 1200, "cleared_thinking_turns": 2}]}
    assert codes(result) == set()
