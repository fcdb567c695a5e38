"""Chat Completions `logprobs`, kept token by token: each chunk's `content[]` and `refusal[]` EXTEND the choice's,
a null changes nothing, and the export's choice `logprobs` is what a non-streaming reply has."""

from __future__ import annotations

import json
from typing import Any

import pytest

from streamfold import Folder, fold
from streamfold.dialects import spec_of

BASE = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}


def token(text: str, logprob: float) -> dict[str, Any]:
    return {"token": text, "logprob": logprob, "bytes": list(text.encode()), "top_logprobs": []}


def chunk(content: str | None = None, logprobs: Any = None, finish: str | None = None, index: int = 0,
          role: str | None = None) -> bytes:
    delta: dict[str, Any] = {}
    if role:
        delta["role"] = role
    if content is not None:
        delta["content"] = content
    choice = {"index": index, "delta": delta, "logprobs": logprobs, "finish_reason": finish}
    return b"data: " + json.dumps({**BASE, "choices": [choice]}).encode() + b"\n\n"


def reply(*chunks: bytes) -> bytes:
    return b"".join(chunks) + b"data: [DONE]\n\n"


def test_content_logprobs_extend_and_a_null_clears_nothing() -> None:
    data = reply(chunk("", {"content": [], "refusal": None}, role="assistant"),
                 chunk("Hi", {"content": [token("Hi", -0.1)], "refusal": None}),
                 chunk("", None),
                 chunk(" there", {"content": [token(" there", -0.2)], "refusal": None}),
                 chunk(None, None, finish="stop"))
    result = fold(data)
    (choice,) = result.export()["choices"]
    assert choice["logprobs"] == {"content": [token("Hi", -0.1), token(" there", -0.2)], "refusal": None}
    assert result.choices[0].content == "Hi there"
    assert [d.code for d in result.diagnostics] == []


def test_a_stream_without_logprobs_exports_null() -> None:
    result = fold(reply(chunk("Hi", role="assistant"), chunk(None, finish="stop")))
    assert result.export()["choices"][0]["logprobs"] is None


def test_the_first_logprobs_may_come_with_the_text_of_a_known_choice() -> None:
    # A one-key delta with logprobs beside it must not take the inline content path that skips them.
    data = reply(chunk("A", None, role="assistant"), chunk("B", {"content": [token("B", -1.0)]}),
                 chunk("C", {"content": [token("C", -2.0)]}), chunk(None, finish="stop"))
    assert fold(data).export()["choices"][0]["logprobs"] == {"content": [token("B", -1.0), token("C", -2.0)]}


def test_logprobs_of_two_choices_stay_apart() -> None:
    data = reply(chunk("a", {"content": [token("a", -1.0)]}, index=0, role="assistant"),
                 chunk("b", {"content": [token("b", -2.0)]}, index=1, role="assistant"),
                 chunk("c", {"content": [token("c", -3.0)]}, index=0),
                 chunk(None, finish="stop", index=0), chunk(None, finish="stop", index=1))
    choices = fold(data).export()["choices"]
    assert [c["logprobs"]["content"] for c in choices] == [[token("a", -1.0), token("c", -3.0)], [token("b", -2.0)]]


@pytest.mark.parametrize("odd", ["yes", 3, ["x"], {"content": "not a list"}])
def test_a_logprobs_value_of_another_shape_never_raises(odd: Any) -> None:
    result = fold(reply(chunk("Hi", odd, role="assistant"), chunk(None, finish="stop")))
    assert result.choices[0].content == "Hi"
    result.export()


def test_byte_by_byte_feeding_keeps_the_same_logprobs() -> None:
    data = reply(chunk("Hi", {"content": [token("Hi", -0.1)]}, role="assistant"),
                 chunk("!", {"content": [token("!", -0.5)]}), chunk(None, finish="stop"))
    folder = Folder()
    for i in range(len(data)):
        folder.feed(data[i:i + 1])
    assert folder.close().export() == fold(data).export()


def test_the_frames_table_counts_the_tokens_of_a_chunk() -> None:
    from streamfold.dialects.openai_chat import OpenAIChat

    value = json.loads(chunk("Hi!", {"content": [token("Hi", -0.1), token("!", -0.2)], "refusal": None})[6:])
    assert spec_of(OpenAIChat).summary(value) == 'content "Hi!", logprobs 2 tokens'
    assert spec_of(OpenAIChat).summary(json.loads(chunk("Hi", None)[6:])) == 'content "Hi"'
