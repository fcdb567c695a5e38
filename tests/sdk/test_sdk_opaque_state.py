"""Opaque state a client must send back (issue 13, item 5): `check` holds that the
vendors' own accumulators keep every signature and encrypted reasoning item that
the stream carried, and that a client which drops or mangles one is told what it
dropped and which frame carried it.

The SDKs run exactly as their streaming helpers do, minus HTTP (the anthropic
SDK's `MessageStream`, the openai SDK's `ResponseStreamState`, google-genai's
parts of each chunk, kept as a client that extends its parts list keeps them).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

import streamfold
from sdk_accumulators import anthropic_message
from streamfold.dialects import opaque_state
from streamfold.services.check import check_reply

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")
httpx2 = pytest.importorskip("httpx2")
genai_types = pytest.importorskip("google.genai.types")
from openai._streaming import SSEDecoder  # noqa: E402
from openai._types import omit  # noqa: E402
from openai.lib.streaming.responses._responses import ResponseStreamState  # noqa: E402
from openai.types.responses import ResponseStreamEvent  # noqa: E402

CAPTURES = Path(__file__).resolve().parents[1] / "captures"


def _fold(path: Path) -> streamfold.Result:
    return streamfold.fold(path.read_bytes())


def responses_final(data: bytes) -> Any:
    client = openai.OpenAI(api_key="sk-test-no-network", base_url="http://127.0.0.1:9/v1")
    state: ResponseStreamState[Any] = ResponseStreamState(input_tools=omit, text_format=omit)
    last = None
    for sse in SSEDecoder().iter_bytes(iter([data])):
        if sse.data.startswith("[DONE]"):
            break
        event = client._process_response_data(data=sse.json(), cast_to=ResponseStreamEvent, response=None)
        for fired in state.handle_event(event):
            response = getattr(fired, "response", None)
            last = response if response is not None else last
    return state._completed_response or last


def gemini_parts(data: bytes) -> dict[str, Any]:
    """What a google-genai client keeps: each chunk's `GenerateContentResponse`, its parts appended."""
    parts: list[Any] = []
    for line in data.decode().splitlines():
        if line.startswith("data:"):
            chunk = genai_types.GenerateContentResponse.model_validate_json(line[5:])
            if chunk.candidates and chunk.candidates[0].content and chunk.candidates[0].content.parts:
                parts.extend(chunk.candidates[0].content.parts)
    return genai_types.Content(role="model", parts=parts).model_dump()


SIGNED_ANTHROPIC = ["a3-a6-thinking-then-tool-use.sse", "a6-redacted-thinking.sse"]
SIGNED_RESPONSES = ["r1-gateway-done-after-completed.sse", "r4-arguments-done-without-deltas-codex-spark.sse",
                    "r-example-reasoning-text-function-call.sse"]
SIGNED_GEMINI = ["g4-o9-weather-thought-call.sse", "g5-signature-on-empty-text.sse", "g3-parallel-calls-same-tool.sse"]


def test_every_dialect_names_its_opaque_state_with_the_frame_that_carried_it() -> None:
    found = {path.name: opaque_state(_fold(path))
             for path in (CAPTURES / "anthropic" / "a6-redacted-thinking.sse",
                          CAPTURES / "openai-responses" / "r1-gateway-done-after-completed.sse",
                          CAPTURES / "gemini" / "g5-signature-on-empty-text.sse",
                          CAPTURES / "openai" / "o12-openrouter-reasoning-then-error.sse",
                          CAPTURES / "openai" / "o4-gemini-tool-calls-missing-index.sse",
                          CAPTURES / "bedrock" / "converse-reasoning-tool-call.bin")}
    kinds = {name: [(item.what, item.path) for item in items] for name, items in found.items()}
    assert kinds == {
        "a6-redacted-thinking.sse": [("thinking signature", "content[0].signature"),
                                     ("redacted thinking data", "content[1].data")],
        "r1-gateway-done-after-completed.sse": [("reasoning item id", "output[0].id"),
                                                ("encrypted reasoning", "output[0].encrypted_content")],
        "g5-signature-on-empty-text.sse": [("thought signature", "candidates[0].content.parts[1].thoughtSignature")],
        "o12-openrouter-reasoning-then-error.sse": [
            ("reasoning signature", "choices[0].message.reasoning_details[0].signature")],
        "o4-gemini-tool-calls-missing-index.sse": [
            ("thought signature", "choices[0].message.tool_calls[0].extra_content.google.thought_signature")],
        "converse-reasoning-tool-call.bin": [
            ("reasoning signature", "output.message.content[0].reasoningContent.reasoningText.signature")],
    }
    for name, items in found.items():
        result = _fold(next(CAPTURES.rglob(name)))
        for item in items:
            assert item.frame is not None, (name, item)
            assert item.value in json.dumps(result.payload(item.frame).value), (name, item)


def test_the_anthropic_signature_frame_is_the_signature_delta() -> None:
    result = _fold(CAPTURES / "anthropic" / "a3-a6-thinking-then-tool-use.sse")
    (signature,) = opaque_state(result)
    assert result.payload(signature.frame).value["delta"]["type"] == "signature_delta"  # type: ignore[arg-type]


@pytest.mark.parametrize("name", SIGNED_ANTHROPIC)
def test_the_anthropic_sdks_final_message_keeps_every_signature(name: str) -> None:
    path = CAPTURES / "anthropic" / name
    result = _fold(path)
    assert opaque_state(result)
    assert check_reply(result, anthropic_message(path.read_bytes())) == []
    assert check_reply(result, anthropic_message(path.read_bytes()).model_dump()) == []


@pytest.mark.parametrize("name", SIGNED_RESPONSES)
def test_the_openai_sdks_final_response_keeps_every_reasoning_item(name: str) -> None:
    path = CAPTURES / "openai-responses" / name
    result = _fold(path)
    final = responses_final(path.read_bytes())
    assert final is not None
    assert [d.message() for d in check_reply(result, final.model_dump()) if d.opaque] == []


@pytest.mark.parametrize("name", SIGNED_GEMINI)
def test_google_genai_parts_keep_the_thought_signatures_as_bytes(name: str) -> None:
    path = CAPTURES / "gemini" / name
    result = _fold(path)
    kept = gemini_parts(path.read_bytes())
    assert any(isinstance(part.get("thought_signature"), bytes) for part in kept["parts"])
    assert [d for d in check_reply(result, kept) if d.opaque] == []


def test_a_client_that_drops_the_signature_is_told_which_frame_carried_it() -> None:
    path = CAPTURES / "anthropic" / "a3-a6-thinking-then-tool-use.sse"
    result = _fold(path)
    built = anthropic_message(path.read_bytes()).model_dump()
    for block in built["content"]:
        block.pop("signature", None)
    (divergence,) = check_reply(result, built)
    (signature,) = opaque_state(result)
    assert (divergence.field, divergence.opaque, divergence.frame) == ("content[0].signature", "thinking signature",
                                                                     signature.frame)
    assert divergence.got is None
    message = divergence.message()
    assert message.startswith(f"content[0].signature (thinking signature) is missing (frame {signature.frame}")
    assert "dropped the thinking signature" in message and "400" in message


def test_an_appended_signature_is_named_as_appended() -> None:
    path = CAPTURES / "anthropic" / "a6-redacted-thinking.sse"
    result = _fold(path)
    built = anthropic_message(path.read_bytes()).model_dump()
    built["content"][0]["signature"] = "Eq" + built["content"][0]["signature"]
    built["content"][1]["data"] = built["content"][1]["data"][:20]
    first, second = check_reply(result, built)
    assert first.field == "content[0].signature" and "appended" in first.cause
    assert second.field == "content[1].data" and "stops early" in second.cause


def test_dropped_reasoning_items_are_named_and_the_response_id_is_not_taken_for_them() -> None:
    path = CAPTURES / "openai-responses" / "r1-gateway-done-after-completed.sse"
    result = _fold(path)
    built = responses_final(path.read_bytes()).model_dump()
    built["output"] = [item for item in built["output"] if item["type"] != "reasoning"]
    found = [(d.field, d.got) for d in check_reply(result, built) if d.opaque]
    # The response's own id is under `id` too: it is not mistaken for a changed reasoning item id.
    assert found == [("output[0].id", None), ("output[0].encrypted_content", None)]


def test_a_changed_gemini_signature_is_caught_in_bytes_too() -> None:
    path = CAPTURES / "gemini" / "g5-signature-on-empty-text.sse"
    result = _fold(path)
    kept = gemini_parts(path.read_bytes())
    mangled = copy.deepcopy(kept)
    for part in mangled["parts"]:
        if part.get("thought_signature"):
            part["thought_signature"] = part["thought_signature"][:-1]
    (divergence,) = [d for d in check_reply(result, mangled) if d.opaque]
    assert divergence.opaque == "thought signature" and divergence.got.startswith("<")  # shown as a byte count


def test_openrouter_reasoning_details_and_gemini_extra_content_survive_the_export() -> None:
    openrouter = _fold(CAPTURES / "openai" / "o12-openrouter-reasoning-then-error.sse")
    (detail,) = openrouter.export()["choices"][0]["message"]["reasoning_details"]
    assert detail["type"] == "reasoning.text" and detail["text"] == openrouter.choices[0].reasoning
    assert detail["signature"] and detail["format"] == "anthropic-claude-v1"
    assert check_reply(openrouter, openrouter.export()) == []
    gemini = _fold(CAPTURES / "openai" / "o4-gemini-tool-calls-missing-index.sse")
    calls = gemini.export()["choices"][0]["message"]["tool_calls"]
    assert "thought_signature" in calls[0]["extra_content"]["google"] and "extra_content" not in calls[1]
    without = gemini.export()
    del without["choices"][0]["message"]["tool_calls"][0]["extra_content"]
    assert [d.opaque for d in check_reply(gemini, without)] == ["thought signature"]


def test_plain_text_is_never_held_to_opaque_state() -> None:
    result = _fold(CAPTURES / "anthropic" / "a6-redacted-thinking.sse")
    assert check_reply(result, result.choices[0].content) == []
