"""`streamfold.testing.assert_reply` over what the vendors' own accumulators build:
their final objects pass against the reference of the bytes they read, and a
client that lost something fails with the first divergence, its frame and a cause."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

import streamfold
from sdk_accumulators import anthropic_message
from streamfold.store import CaptureStore
from streamfold.testing import ReplyMismatchError, assert_reply

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
httpx2 = pytest.importorskip("httpx2")
from openai._streaming import SSEDecoder  # noqa: E402
from openai.lib.streaming.chat import ChatCompletionStreamState  # noqa: E402
from openai.types.chat import ChatCompletionChunk  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "examples" / "openai-tool-calls.sse"
THINKING = ROOT / "tests" / "captures" / "anthropic" / "a3-a6-thinking-then-tool-use.sse"


def chat_completion(data: bytes) -> Any:
    state = ChatCompletionStreamState()
    for sse in SSEDecoder().iter_bytes(iter([data])):
        if sse.data.startswith("[DONE]"):
            break
        state.handle_chunk(ChatCompletionChunk.model_validate(sse.json()))
    return state.get_final_completion()


def test_the_sdks_final_objects_pass() -> None:
    assert_reply(chat_completion(TOOLS.read_bytes()), TOOLS)
    assert_reply(anthropic_message(THINKING.read_bytes()), THINKING.read_bytes())
    assert_reply(streamfold.fold(TOOLS.read_bytes()).choices[0].content, str(TOOLS))


def test_a_wrong_reply_fails_with_the_frame_and_a_cause() -> None:
    completion = chat_completion(TOOLS.read_bytes())
    reference = streamfold.fold(TOOLS.read_bytes())
    start, end, frame = reference.text_runs()[2]
    text = reference.choices[0].content
    completion.choices[0].message.content = text[:start] + text[end:]
    with pytest.raises(ReplyMismatchError) as caught:
        assert_reply(completion, reference)
    message = str(caught.value)
    assert message.startswith("the client's reply differs from streamfold's reference (openai-chat): content differs")
    assert f"(frame {frame}, line {reference.frames[frame].line})" in message
    assert "dropped frame(s)" in message
    assert isinstance(caught.value, AssertionError)


def test_a_dropped_signature_fails_and_the_rest_are_counted() -> None:
    message = anthropic_message(THINKING.read_bytes())
    dumped = message.model_dump()
    dumped["content"][0]["signature"] = ""
    dumped["content"] = [dumped["content"][0], *dumped["content"][1:]]
    with pytest.raises(ReplyMismatchError, match=r"content\[0\]\.signature \(thinking signature\) is missing"):
        assert_reply(dumped, THINKING)
    dumped["content"][0]["thinking"] = "changed"
    with pytest.raises(ReplyMismatchError) as caught:
        assert_reply(dumped, THINKING)
    assert len(caught.value.divergences) >= 1


def test_a_stored_capture_is_a_reference(tmp_path: Path) -> None:
    db = str(tmp_path / "captures.sqlite")
    with CaptureStore.open(db) as store:
        exchange = store.begin("POST", "http://127.0.0.1:9/v1/chat/completions")
        exchange.response(200, [("content-type", "text/event-stream")])
        body = TOOLS.read_bytes()
        for start in range(0, len(body), 100):
            exchange.read(body[start:start + 100])
        exchange.end("complete").result(10)
    assert sqlite3.connect(db).execute("SELECT count(*) FROM exchanges").fetchone() == (1,)
    assert_reply(chat_completion(body), f"{db}#1")
    assert_reply(chat_completion(body), db)


def test_misuse_raises_type_errors() -> None:
    with pytest.raises(TypeError, match="expected must be"):
        assert_reply("text", 42)
    with pytest.raises(TypeError, match="cannot read what the client built"):
        assert_reply({"neither": "a reply"}, TOOLS)
