"""Agreement with the anthropic SDK's own accumulator, run exactly as
`client.messages.stream()` runs it, minus the network: the capture is the body
of an `httpx2.Response`, read by the SDK's `Stream` (its SSE decoder and its
event-name filter: `ping` skipped, `error` raised, frames without an `event:`
name skipped) and folded by `MessageStream` (`accumulate_event`).

On every capture the SDK folds, text, reasoning, tool calls and their parsed
input, usage and stop reason must agree, and the export must equal the SDK's
final message. Where the SDK is known to be wrong, yields nothing or raises,
the capture is listed with its trap; the test checks that the difference
really exists (so the list cannot go stale) and that streamfold explains it.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

import streamfold

anthropic = pytest.importorskip("anthropic")
httpx2 = pytest.importorskip("httpx2")
from anthropic._streaming import Stream  # noqa: E402
from anthropic.lib.streaming import BetaMessageStream, MessageStream  # noqa: E402
from anthropic.types import Message, RawMessageStreamEvent  # noqa: E402
from anthropic.types.beta import BetaMessage, BetaRawMessageStreamEvent  # noqa: E402

CAPTURES = sorted((Path(__file__).resolve().parents[1] / "captures").rglob("*.sse"))
RESULTS = {p.name: streamfold.fold(p.read_bytes()) for p in CAPTURES}
ANTHROPIC = [p for p in CAPTURES if RESULTS[p.name].dialect == "anthropic"]
assert len(ANTHROPIC) >= 9

_client = anthropic.Anthropic(api_key="sk-ant-test-no-network", base_url="http://127.0.0.1:9")

# capture -> (field where the SDK differs, the trap, the finding streamfold gives)
SDK_IS_WRONG = {
    "b8-max-tokens-cuts-tool-input.sse": (
        "tool_calls", "B8: jiter's partial mode turns the cut input into a smaller object that looks complete "
        "(the cut `content` string is silently dropped)", "tool-args-invalid"),
}
# capture -> the finding streamfold gives where the SDK yields no event at all
SDK_YIELDS_NOTHING = {
    "a1-event-lines-stripped.sse": "event-type-missing",  # A1: every frame lacks an `event:` name
}
# capture -> the finding streamfold gives where the SDK raises
SDK_RAISES = {
    "a5-overloaded-error-mid-block.sse": "in-stream-error",  # A5: APIStatusError, the partial reply is lost
}
# capture -> (the block fields where the SDK's final message differs from the export, the finding streamfold gives)
SDK_EXPORT_DIFFERS = {
    # The beta accumulate_event assigns each compaction_delta's content and encrypted_content, nulls included:
    # a summary split over deltas keeps only its last piece, and a null erases the encrypted state.
    "beta-compaction-split-nulls.sse": (("content", "encrypted_content"), "compaction-split"),
}


def is_beta(path: Path) -> bool:
    """Captures of beta features (compaction, MCP, fallback blocks) are read as `client.beta.messages.stream()`
    reads them: the non-beta types do not know their blocks and deltas."""
    return path.name.startswith("beta-")


def sdk_stream(data: bytes, beta: bool = False) -> tuple[list[Any], Any]:
    """Every event `MessageStream` (or `BetaMessageStream`) yields, and its final message (None if it never
    started)."""
    response = httpx2.Response(200, content=data, request=httpx2.Request("POST", "http://127.0.0.1:9/v1/messages"))
    stream: Any
    if beta:
        stream = BetaMessageStream(Stream(cast_to=BetaRawMessageStreamEvent, response=response, client=_client),
                                   output_format=anthropic.NOT_GIVEN)
    else:
        stream = MessageStream(Stream(cast_to=RawMessageStreamEvent, response=response, client=_client),
                               output_format=anthropic.NOT_GIVEN)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic warns about shapes the SDK types do not know
        events = list(stream)
        final = stream.get_final_message() if any(e.type == "message_start" for e in events) else None
    return events, final


def differences(ours: streamfold.Result, theirs: Any) -> set[str]:
    found = set()
    (choice,) = ours.choices
    blocks = theirs.content
    if "".join(b.text for b in blocks if b.type == "text") != choice.content:
        found.add("content")
    if ("".join(b.thinking for b in blocks if b.type == "thinking") or None) != choice.reasoning:
        found.add("reasoning")
    sdk_calls = [(b.id, b.name, b.input) for b in blocks if b.type == "tool_use"]
    if sdk_calls != [(c.id, c.name, c.parsed) for c in choice.tool_calls]:
        found.add("tool_calls")
    if theirs.stop_reason != choice.finish_reason_raw:
        found.add("finish_reason")
    usage = theirs.usage
    sdk_total = (usage.input_tokens + usage.output_tokens + (usage.cache_read_input_tokens or 0)
                 + (usage.cache_creation_input_tokens or 0))
    sdk_numbers = (usage.input_tokens, usage.output_tokens, usage.cache_read_input_tokens, sdk_total)
    assert ours.usage is not None
    if sdk_numbers != (ours.usage.input_tokens, ours.usage.output_tokens, ours.usage.cache_read_tokens,
                       ours.usage.total_tokens):
        found.add("usage")
    return found


@pytest.mark.parametrize("path", ANTHROPIC, ids=lambda p: p.name)
def test_agrees_with_the_anthropic_sdk_or_explains_why_not(path: Path) -> None:
    ours = RESULTS[path.name]
    codes = {f.code for f in (*ours.errors, *ours.diagnostics)}
    try:
        events, theirs = sdk_stream(path.read_bytes(), is_beta(path))
    except Exception:
        assert path.name in SDK_RAISES, f"the SDK raises on {path.name}, not listed"
        assert SDK_RAISES[path.name] in codes
        assert ours.choices[0].content or ours.choices[0].tool_calls, "streamfold keeps the partial reply"
        return
    assert path.name not in SDK_RAISES, "listed as raising but the SDK folded it"
    if path.name in SDK_YIELDS_NOTHING:
        assert events == [] and theirs is None
        assert SDK_YIELDS_NOTHING[path.name] in codes
        assert ours.complete and ours.choices[0].content
        return
    assert path.name not in SDK_YIELDS_NOTHING and theirs is not None
    found = differences(ours, theirs)
    if path.name in SDK_IS_WRONG:
        field, _trap, finding = SDK_IS_WRONG[path.name]
        assert found == {field}, f"expected the SDK to differ on {field} only, got {found}"
        assert finding in codes
    else:
        assert found == set()


COMPLETE = [p.name for p in ANTHROPIC if RESULTS[p.name].complete]
# A complete stream whose tool input does not parse has no valid non-streaming twin:
# its export keeps the raw text in `input` (never a silent {}), so it cannot validate.
UNPARSEABLE = {"b8-max-tokens-cuts-tool-input.sse"}


@pytest.mark.parametrize("name", [n for n in COMPLETE if n not in UNPARSEABLE])
def test_export_of_a_complete_stream_validates_and_equals_the_sdk_message(name: str) -> None:
    result = RESULTS[name]
    path = next(p for p in ANTHROPIC if p.name == name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        message = (BetaMessage if is_beta(path) else Message).model_validate(result.export())
    assert [b.type for b in message.content] == [
        {"reasoning": "thinking", "redacted_reasoning": "redacted_thinking", "tool_call": "tool_use"}.get(b.type, b.type)
        for b in result.choices[0].blocks]
    if name in SDK_YIELDS_NOTHING:
        return  # the SDK has nothing to compare with
    _, theirs = sdk_stream(path.read_bytes(), is_beta(path))
    ours, sdk = message.to_dict(exclude_none=True), theirs.to_dict(exclude_none=True)
    if name in SDK_EXPORT_DIFFERS:
        fields, finding = SDK_EXPORT_DIFFERS[name]
        assert finding in {f.code for f in result.diagnostics}
        differing = [i for i, (a, b) in enumerate(zip(ours["content"], sdk["content"])) if a != b]
        for field in fields:  # each listed field really differs (the list cannot go stale), then is set aside
            assert any(ours["content"][i].get(field) != sdk["content"][i].get(field) for i in differing), field
            for i in differing:
                ours["content"][i].pop(field, None)
                sdk["content"][i].pop(field, None)
    assert ours == sdk


def test_export_of_an_unparseable_tool_input_keeps_the_raw_text() -> None:
    (name,) = UNPARSEABLE
    result = RESULTS[name]
    exported = result.export()
    (block,) = exported["content"]
    assert block["input"] == result.choices[0].tool_calls[0].arguments
    assert exported["stop_reason"] == "max_tokens"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception):  # noqa: B017 - any validation error of pydantic will do
            Message.model_validate(exported)


@pytest.mark.parametrize("name", [p.name for p in ANTHROPIC if not RESULTS[p.name].complete])
def test_export_of_a_failed_stream_keeps_what_the_stream_said(name: str) -> None:
    # No stop_reason came: the export does not invent one; the partial content is kept.
    result = RESULTS[name]
    exported = result.export()
    assert exported["stop_reason"] is None
    texts = "".join(b["text"] for b in exported["content"] if b["type"] == "text")
    assert texts == result.choices[0].content
