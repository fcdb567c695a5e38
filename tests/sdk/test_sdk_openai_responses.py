"""Agreement with the openai SDK's Responses accumulator (ResponseStreamState),
driven the way `client.responses.stream()` drives it, minus HTTP: openai.Stream
decodes each SSE event and builds the SDK's event type from its JSON
(`_process_response_data` with `ResponseStreamEvent`), stops at `[DONE]` and
raises on a payload with a truthy `error`; ResponseStream feeds every event to
`ResponseStreamState.handle_event`; `get_final_response()` returns the
response of `response.completed` or raises.

On every capture text, refusal, reasoning, tool calls (with parsed arguments),
usage and the stop status must agree, except where the SDK is known to be
wrong; those are listed with their trap, and the test checks that the SDK
really differs there and that streamfold says why. Where the SDK raises,
streamfold folds and explains. Exports validate against `Response`.
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
from openai._types import omit  # noqa: E402
from openai.lib.streaming.responses._responses import ResponseStreamState  # noqa: E402
from openai.types.responses import Response, ResponseStreamEvent  # noqa: E402

FOLDER = Path(__file__).resolve().parents[1] / "captures" / "openai-responses"
CAPTURES = sorted(p for p in FOLDER.iterdir() if not p.name.endswith((".expect.json", ".md")))
assert len(CAPTURES) >= 10

_client = openai.OpenAI(api_key="sk-test-no-network", base_url="http://127.0.0.1:9/v1")

# capture -> (what the SDK gets wrong, the trap, the finding streamfold gives)
SDK_IS_WRONG = {
    "r4-completed-empty-output-agentgateway": (
        {"content"}, "R4: the SDK takes `response.output: []` as the final answer and loses the streamed text",
        "empty-terminal-output"),
}
# capture -> the finding streamfold gives where get_final_response() raises
SDK_RAISES = {
    "r1-response-failed": "in-stream-error",
    "r1-error-event-mid-stream": "in-stream-error",
    "r1-gateway-response-done": "nonstandard-terminal",  # R1: the SDK does not know `response.done`
    "r-apply-patch-diff-cut-by-error": "in-stream-error",
}


_LIFECYCLE = {"response.created", "response.in_progress", "response.queued", "response.completed",
              "response.incomplete", "response.failed"}


class SDKRaisedError(Exception):
    pass


def sdk_fold(data: bytes) -> tuple[Any, Any]:
    """(get_final_response() or None, the response of the last lifecycle event the SDK yielded)."""
    state: ResponseStreamState[Any] = ResponseStreamState(input_tools=omit, text_format=omit)
    last_response = None
    for sse in SSEDecoder().iter_bytes(iter([data])):
        if sse.data.startswith("[DONE]"):
            break
        obj = sse.json()
        if isinstance(obj, dict) and obj.get("error"):
            raise SDKRaisedError(f"in-stream error: {obj['error']!r}")  # what openai.Stream does
        event = _client._process_response_data(data=obj, cast_to=ResponseStreamEvent, response=None)
        for fired in state.handle_event(event):
            if getattr(fired, "type", None) in _LIFECYCLE:
                last_response = fired.response
    return state._completed_response, last_response


def sdk_view(response: Any) -> dict[str, Any]:
    texts: list[str] = []
    refusals: list[str] = []
    reasoning: list[str] = []
    calls: list[tuple[Any, ...]] = []
    for item in response.output:
        if item.type == "message":
            for part in item.content:
                if part.type == "output_text":
                    texts.append(part.text)
                elif part.type == "refusal":
                    refusals.append(part.refusal)
        elif item.type == "reasoning":
            reasoning.extend(summary.text for summary in item.summary)
            reasoning.extend(content.text for content in item.content or [])
        elif item.type == "function_call":
            calls.append((item.call_id, item.name, item.arguments, json.loads(item.arguments or "{}")))
    usage = response.usage
    status = response.status
    if status == "incomplete" and response.incomplete_details and response.incomplete_details.reason:
        status = response.incomplete_details.reason
    return {
        "content": "".join(texts),
        "refusal": "".join(refusals) or None,
        "reasoning": "\n\n".join(reasoning) or None,
        "tool_calls": calls,
        "usage": None if usage is None else (
            usage.input_tokens, usage.output_tokens, usage.total_tokens,
            usage.output_tokens_details.reasoning_tokens, usage.input_tokens_details.cached_tokens),
        "stop": status,
    }


def our_view(result: streamfold.Result) -> dict[str, Any]:
    choice = result.choices[0]
    usage = result.usage
    return {
        "content": choice.content,
        "refusal": choice.refusal,
        "reasoning": choice.reasoning,
        "tool_calls": [(c.id, c.name, c.arguments, c.parsed) for c in choice.tool_calls],
        "usage": None if usage is None else (
            usage.input_tokens, usage.output_tokens, usage.total_tokens, usage.reasoning_tokens,
            usage.cache_read_tokens),
        "stop": choice.finish_reason_raw,
    }


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.stem)
def test_agrees_with_the_openai_sdk_or_explains_why_not(path: Path) -> None:
    data = path.read_bytes()
    ours = streamfold.fold(data)
    assert ours.dialect == "openai-responses"
    codes = {f.code for f in ours.errors} | {f.code for f in ours.diagnostics}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic warns about shapes the SDK types do not know
        try:
            final, last = sdk_fold(data)
        except SDKRaisedError:
            final, last = None, None
    if final is None and last is not None and last.status == "incomplete":
        # get_final_response() raises for an incomplete response by design; the
        # `response.incomplete` event it yields carries the output to compare with.
        final = last
    if final is None:
        assert path.stem in SDK_RAISES, f"the SDK raises on {path.name}, not listed"
        assert SDK_RAISES[path.stem] in codes
        return
    assert path.stem not in SDK_RAISES, "listed as raising but the SDK folded it"
    theirs, mine = sdk_view(final), our_view(ours)
    found = {key for key in mine if mine[key] != theirs[key]}
    if path.stem in SDK_IS_WRONG:
        fields, _trap, finding = SDK_IS_WRONG[path.stem]
        assert found == fields, f"expected the SDK to differ on {fields} only, got {found}"
        assert finding in codes
    else:
        assert found == set(), {key: (mine[key], theirs[key]) for key in found}


RESULTS = {p.stem: streamfold.fold(p.read_bytes()) for p in CAPTURES}


@pytest.mark.parametrize("name", [n for n, r in RESULTS.items() if r.complete])
def test_export_of_a_complete_stream_validates_against_the_sdk_type(name: str) -> None:
    result = RESULTS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        response = Response.model_validate(result.export())
    choice = result.choices[0]
    assert response.output_text == choice.content
    assert response.id == result.id
    view = sdk_view(response)
    assert view["tool_calls"] == our_view(result)["tool_calls"]
    assert view["refusal"] == choice.refusal
    assert view["reasoning"] == choice.reasoning


@pytest.mark.parametrize("name", [n for n, r in RESULTS.items() if not r.complete])
def test_export_of_a_failed_stream_keeps_what_the_stream_said(name: str) -> None:
    result = RESULTS[name]
    exported = result.export()
    assert exported["error"] is not None
    texts = [part["text"] for item in exported["output"] if item["type"] == "message"
             for part in item["content"] if part["type"] == "output_text"]
    assert "".join(texts) == result.choices[0].content
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Response.model_validate(exported)  # a failed response is still a valid Response


def without_terminal_output(data: bytes) -> bytes:
    """The same capture with the terminal response's `output` emptied (R4, agentgateway/agentgateway#3326)."""
    head, _, last = data.rstrip(b"\n").rpartition(b"\ndata: ")
    event = json.loads(last)
    event["response"]["output"] = []
    return head + b"\ndata: " + json.dumps(event).encode() + b"\n\n"


@pytest.mark.parametrize("name", [n for n, r in RESULTS.items() if r.complete and r.choices[0].blocks])
def test_an_export_rebuilt_from_the_stream_equals_the_vendors_output(name: str) -> None:
    data = next(p for p in CAPTURES if p.stem == name).read_bytes()
    if data.rstrip().endswith(b"[DONE]"):
        data = data.rstrip()[: -len(b"data: [DONE]")]
    rebuilt = streamfold.fold(without_terminal_output(data))
    assert "empty-terminal-output" in {d.code for d in rebuilt.diagnostics}
    vendor = RESULTS[name].export()["output"]
    mine = rebuilt.export()["output"]
    keys = ("type", "id", "content", "summary", "call_id", "name", "arguments", "encrypted_content", "action")
    # Compare what the vendor's own output states (the §4.2 example's is trimmed: no encrypted_content).
    assert [{k: item.get(k) for k in keys if k in theirs} for item, theirs in zip(mine, vendor)] == \
        [{k: item.get(k) for k in keys if k in item} for item in vendor]
    assert len(mine) == len(vendor)


def test_the_agentgateway_export_rebuilds_the_empty_terminal_output() -> None:
    result = RESULTS["r4-completed-empty-output-agentgateway"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        response = Response.model_validate(result.export())
    assert response.output_text == "The three primary colors of light are red, green and blue."
    assert response.status == "completed"
