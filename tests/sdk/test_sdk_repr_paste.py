"""A pasted `repr()` of the real SDKs' chunk objects (what `print(chunk)` in a streaming loop shows)
folds to the same reply as the stream they were parsed from: the objects are built from the frames
of tests/captures with the vendor's own models, printed, and read back by streamfold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from streamfold import fold
from streamfold.result import Result
from streamfold.services import load

pydantic = pytest.importorskip("pydantic")
openai_chat = pytest.importorskip("openai.types.chat")
openai_responses = pytest.importorskip("openai.types.responses")
anthropic_types = pytest.importorskip("anthropic.types")

CAPTURES = Path(__file__).resolve().parents[1] / "captures"


def _facts(result: Result) -> list[Any]:
    usage = result.usage
    return [(c.index, c.content, c.reasoning, c.refusal, c.finish_reason,
             [(t.name, t.parsed, t.arguments) for t in c.tool_calls]) for c in result.choices] + [
        None if usage is None else (usage.input_tokens, usage.output_tokens, usage.total_tokens)]


def _payloads(result: Result) -> list[Any]:
    out = []
    for frame in result.frames:
        if frame.data is None or frame.data.strip() in ("", "[DONE]"):
            continue
        try:
            out.append(json.loads(frame.data))
        except ValueError:
            continue
    return out


def _clean(path: Path, dialect: str) -> bool:
    result = fold(path.read_bytes())
    return (result.dialect == dialect and result.complete and not result.errors
            and not any(d.code in ("glued-frames", "unknown-field") for d in result.diagnostics))


def _captures(folder: str, dialect: str, model: Any) -> list[Path]:
    """The clean captures of `dialect` whose every chunk the SDK's model validates."""
    found = []
    for path in sorted((CAPTURES / folder).glob("*.sse")):
        if _clean(path, dialect):
            try:
                _paste(path, model)
            except pydantic.ValidationError:
                continue  # a vendor's extension the SDK's model refuses (Mistral's content arrays, ...)
            found.append(path)
    return found


def _paste(path: Path, model: Any, *, as_list: bool = False) -> str:
    objects = [model(payload) for payload in _payloads(fold(path.read_bytes()))]
    if as_list:
        return repr(objects)
    return "".join(repr(obj) + "\n" for obj in objects)


def _chat_chunk(payload: Any) -> Any:
    return openai_chat.ChatCompletionChunk.model_validate(payload)


_RESPONSE_EVENT = pydantic.TypeAdapter(openai_responses.ResponseStreamEvent)
_ANTHROPIC_EVENT = pydantic.TypeAdapter(anthropic_types.RawMessageStreamEvent)


OPENAI = _captures("openai", "openai-chat", _chat_chunk)
ANTHROPIC = _captures("anthropic", "anthropic", _ANTHROPIC_EVENT.validate_python)
RESPONSES = _captures("openai-responses", "openai-responses", _RESPONSE_EVENT.validate_python)


def test_there_are_captures_of_each_sdk() -> None:
    assert len(OPENAI) >= 5 and len(ANTHROPIC) >= 3 and len(RESPONSES) >= 3


@pytest.mark.parametrize("as_list", [False, True])
@pytest.mark.parametrize("path", OPENAI, ids=lambda p: p.name)
def test_an_openai_chunk_repr_paste_folds_as_its_stream(path: Path, as_list: bool) -> None:
    paste = _paste(path, _chat_chunk, as_list=as_list)
    assert paste.lstrip("[").startswith("ChatCompletionChunk(id=")
    result = load(paste.encode()).result
    assert _facts(result) == _facts(fold(path.read_bytes()))
    assert [d.code for d in result.diagnostics if d.code == "sdk-repr"] == ["sdk-repr"]


@pytest.mark.parametrize("path", ANTHROPIC, ids=lambda p: p.name)
def test_an_anthropic_event_repr_paste_folds_as_its_stream(path: Path) -> None:
    paste = _paste(path, _ANTHROPIC_EVENT.validate_python)
    assert "RawContentBlockDeltaEvent(" in paste or "RawMessageStartEvent(" in paste
    result = load(paste.encode()).result
    assert _facts(result) == _facts(fold(path.read_bytes()))
    codes = {d.code for d in result.diagnostics}
    assert "sdk-repr" in codes and "event-type-missing" not in codes  # each event's type is its event: line


@pytest.mark.parametrize("path", RESPONSES, ids=lambda p: p.name)
def test_a_responses_event_repr_paste_folds_as_its_stream(path: Path) -> None:
    paste = _paste(path, _RESPONSE_EVENT.validate_python)
    result = load(paste.encode()).result
    assert _facts(result) == _facts(fold(path.read_bytes()))


def test_the_brief_example_reads_back_with_its_fields() -> None:
    paste = ("ChatCompletionChunk(id='chatcmpl-1', choices=[Choice(delta=ChoiceDelta(content='Hi', function_call=None, "
             "refusal=None, role='assistant', tool_calls=None), finish_reason=None, index=0, logprobs=None)], "
             "created=1, model='gpt-4o', object='chat.completion.chunk', service_tier=None, "
             "system_fingerprint=None, usage=None)\n"
             "RawContentBlockDeltaEvent(delta=TextDelta(text='Hi', type='text_delta'), index=0, "
             "type='content_block_delta')\n")
    body = load(paste.encode()).capture.body.decode()
    first, second = body.split("\n\n")[:2]
    assert json.loads(first.removeprefix("data: "))["choices"][0]["delta"] == {
        "content": "Hi", "function_call": None, "refusal": None, "role": "assistant", "tool_calls": None}
    assert second.startswith("event: content_block_delta\ndata: ")
