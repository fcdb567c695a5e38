"""Agreement with the openai SDK's own accumulator (ChatCompletionStreamState),
run the way `client.chat.completions.stream()` runs it, minus HTTP.

On every capture the SDK folds, text, tool calls, finish reason and usage must
agree, except where the SDK is known to be wrong; those cases are listed with
the trap they are, and the test checks that the SDK really does differ there
(so the list cannot go stale) and that streamfold says why. Where the SDK
raises, streamfold folds and explains. Exports validate against the SDK types.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import streamfold

openai = pytest.importorskip("openai")
from openai._streaming import SSEDecoder  # noqa: E402
from openai.lib.streaming.chat import ChatCompletionStreamState  # noqa: E402
from openai.types import Completion  # noqa: E402
from openai.types.chat import ChatCompletion, ChatCompletionChunk  # noqa: E402

CAPTURES = sorted((Path(__file__).resolve().parents[1] / "captures").rglob("*.sse"))
CHAT = [p for p in CAPTURES if streamfold.fold(p.read_bytes()).dialect == "openai-chat"]
assert CHAT

_client = openai.OpenAI(api_key="sk-test-no-network", base_url="http://127.0.0.1:9/v1")

# capture -> (field where the SDK differs, the trap, the finding streamfold gives or None)
SDK_IS_WRONG = {
    "o5-fireworks-repeated-tool-call-identity.sse": ("tool_calls", "O5: the SDK concatenates an id repeated on every fragment", None),
    "o6-tool-call-id-changes.sse": ("tool_calls", "O6: the SDK concatenates changing ids", "tool-call-identity-changed"),
    "o8-deepseek-cumulative-arguments.sse": ("tool_calls", "O8: cumulative resends joined into invalid JSON", "cumulative-resend"),
    "o8-gateway-final-arguments-resend.sse": ("tool_calls", "O8: a repeated final chunk doubles id, name and arguments", "cumulative-resend"),
    "b4-mistral-null-id-continuation.sse": ("tool_calls", "B4: Mistral's literal 'null' ids get appended", None),
    "b4-mistral-whole-call-object-arguments.sse": ("tool_calls", "B4: object-valued arguments are not serialised", None),
    "b4-mistral-thinking-chunks.sse": ("content", "B4: content arrays of thinking chunks are not text", None),
    "u1-o16-xai-usage-before-empty-final.sse": ("usage", "O16: usage overwritten by a later chunk's null", None),
}
# capture -> the finding streamfold gives where the SDK raises (None: the raise is the SDK's design)
SDK_RAISES = {
    "openai-broken.sse": "invalid-json",
    "o4-gemini-tool-calls-missing-index.sse": "tool-call-missing-index",
    "o9-finish-stop-with-tool-calls.sse": "tool-call-missing-index",
    "o12-openai-error-envelope.sse": "in-stream-error",
    "o12-openrouter-reasoning-then-error.sse": "in-stream-error",
    "b8-tool-args-truncated-by-length.sse": "tool-args-invalid",
    "o10-empty-finish-reason-then-length.sse": None,  # LengthFinishReasonError by design
}


def sdk_fold(data: bytes) -> Any:
    state = ChatCompletionStreamState()
    for sse in SSEDecoder().iter_bytes(iter([data])):
        if sse.data.startswith("[DONE]"):
            break
        obj = sse.json()
        if isinstance(obj, dict) and obj.get("error"):
            raise RuntimeError(f"in-stream error: {obj['error']!r}")  # what openai.Stream does
        chunk = _client._process_response_data(data=obj, cast_to=ChatCompletionChunk, response=None)
        if chunk.object == "chat.completion.chunk":
            state.handle_chunk(chunk)
    return state.get_final_completion()


def differences(ours: streamfold.Result, theirs: Any) -> set[str]:
    found = set()
    for choice in ours.choices:
        sdk_choice = next(c for c in theirs.choices if c.index == choice.index)
        if (sdk_choice.message.content or "") != choice.content:
            found.add("content")
        sdk_calls = [(c.id, c.function.name, c.function.arguments) for c in sdk_choice.message.tool_calls or []]
        if sdk_calls != [(c.id, c.name, c.arguments) for c in choice.tool_calls]:
            found.add("tool_calls")
        if sdk_choice.finish_reason != choice.finish_reason_raw:
            found.add("finish_reason")
    sdk_usage = theirs.usage
    ours_usage = ours.usage
    sdk_numbers = None if sdk_usage is None else (sdk_usage.prompt_tokens, sdk_usage.completion_tokens, sdk_usage.total_tokens)
    our_numbers = None if ours_usage is None else (ours_usage.input_tokens, ours_usage.output_tokens, ours_usage.total_tokens)
    if sdk_numbers != our_numbers:
        found.add("usage")
    return found


@pytest.mark.parametrize("path", CHAT, ids=lambda p: p.name)
def test_agrees_with_the_openai_sdk_or_explains_why_not(path: Path) -> None:
    data = path.read_bytes()
    ours = streamfold.fold(data)
    codes = {f.code for f in (*ours.errors, *ours.diagnostics)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic warns about vendor shapes the SDK types do not know
        try:
            theirs = sdk_fold(data)
        except Exception:
            assert path.name in SDK_RAISES, f"the SDK raises on {path.name}, not listed"
            expected = SDK_RAISES[path.name]
            assert expected is None or expected in codes
            return
    assert path.name not in SDK_RAISES, "listed as raising but the SDK folded it"
    found = differences(ours, theirs)
    if path.name in SDK_IS_WRONG:
        field, _trap, finding = SDK_IS_WRONG[path.name]
        assert found == {field}, f"expected the SDK to differ on {field} only, got {found}"
        assert finding is None or finding in codes
    else:
        assert found == set()


OPENAI_RESULTS = {p.name: streamfold.fold(p.read_bytes()) for p in CAPTURES}
OPENAI_RESULTS = {name: r for name, r in OPENAI_RESULTS.items() if r.dialect in ("openai-chat", "openai-completions")}


@pytest.mark.parametrize("name", [n for n, r in OPENAI_RESULTS.items() if r.complete])
def test_export_of_a_complete_stream_validates_against_the_sdk_types(name: str) -> None:
    result = OPENAI_RESULTS[name]
    exported = result.export()
    model = (ChatCompletion if result.dialect == "openai-chat" else Completion).model_validate(exported)
    for choice, sdk_choice in zip(result.choices, model.choices):
        if result.dialect == "openai-chat":
            assert (sdk_choice.message.content or "") == choice.content
            # A non-streaming reply carries valid arguments: the raw join when it is exactly that,
            # else the recovered value (cumulative resends) or {} for an empty join.
            exported_arguments = [c.function.arguments for c in sdk_choice.message.tool_calls or []]
            assert len(exported_arguments) == len(choice.tool_calls)
            for exported_text, call in zip(exported_arguments, choice.tool_calls):
                if call.error is not None:
                    assert exported_text == call.arguments  # nothing parsed: what was streamed
                    continue
                assert json.loads(exported_text) == call.parsed
                if call.arguments.strip() and not any(d.code == "cumulative-resend" for d in result.diagnostics):
                    assert exported_text == call.arguments
        else:
            assert sdk_choice.text == choice.content


@pytest.mark.parametrize("name", [n for n, r in OPENAI_RESULTS.items() if not r.complete])
def test_export_of_an_incomplete_stream_keeps_what_the_stream_said(name: str) -> None:
    # A cut or failed stream has no true non-streaming twin: the export keeps
    # the stream's own (missing or "error") finish reason rather than invent one.
    result = OPENAI_RESULTS[name]
    exported = result.export()
    assert [c["finish_reason"] for c in exported["choices"]] == [c.finish_reason_raw for c in result.choices]


LOGPROBS = [p for p in CHAT if b'"logprobs":{' in p.read_bytes()]


def test_there_are_captures_with_logprobs() -> None:
    assert len(LOGPROBS) >= 1


@pytest.mark.parametrize("path", LOGPROBS, ids=lambda p: p.name)
def test_exported_logprobs_equal_what_the_sdk_accumulates(path: Path) -> None:
    # ChatCompletionStreamState takes a choice's first logprobs and extends its content and refusal lists.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = sdk_fold(path.read_bytes())
    exported = ChatCompletion.model_validate(streamfold.fold(path.read_bytes()).export())
    by_index = {choice.index: choice for choice in theirs.choices}
    for choice in exported.choices:
        sdk_logprobs = by_index[choice.index].logprobs
        assert choice.logprobs is not None and sdk_logprobs is not None
        assert choice.logprobs.to_dict() == sdk_logprobs.to_dict()
        assert choice.logprobs.content or choice.logprobs.refusal  # tokens, not an empty shell


def test_legacy_completion_logprobs_are_extended_per_token() -> None:
    path = next(p for p in CAPTURES if p.name == "legacy-completion-logprobs.sse")
    exported = Completion.model_validate(streamfold.fold(path.read_bytes()).export())
    (choice,) = exported.choices
    assert choice.logprobs is not None
    assert choice.logprobs.tokens == ["Hello", " world"] and choice.logprobs.text_offset == [12, 17]
    assert "".join(choice.logprobs.tokens) == choice.text
