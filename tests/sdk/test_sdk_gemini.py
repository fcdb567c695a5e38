"""Agreement with google-genai (3.6.1), driven the way `models.generate_content_stream` drives it, minus HTTP.

The SDK has no accumulator: its stream yields one `GenerateContentResponse` per chunk, each
read by `HttpResponse.segments()` (SSE lines, and brace-balanced raw JSON lines), checked for
an `{"error": ...}` chunk (`request_streamed`), converted by `_GenerateContentResponse_from_mldev`
(or `_from_vertex`) and validated by `GenerateContentResponse._from_response`. The reply a user
gets is what those chunks add up to: text and thought parts joined per candidate, the function
calls listed, the last usage and finish reason. On every capture, that must agree with
streamfold, except where adding up the SDK's chunks is known to be wrong; those cases are
listed with their trap, the test checks that the difference really exists and that streamfold
explains it. Exports of complete streams must validate as `GenerateContentResponse`.
"""

from __future__ import annotations

import json
import warnings
from base64 import b64decode
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import streamfold

pytest.importorskip("google.genai")
httpx = pytest.importorskip("httpx")
from google.genai import _api_client, errors, models, types  # noqa: E402

CAPTURES = sorted((Path(__file__).resolve().parents[1] / "captures").rglob("*"))
GEMINI = [p for p in CAPTURES if p.suffix in (".sse", ".json") and not p.name.endswith(".expect.json")
          and streamfold.fold(p.read_bytes()).dialect == "gemini"]
assert len(GEMINI) >= 8

# capture -> (what differs, the trap, the finding streamfold gives or None)
SDK_IS_WRONG = {
    "g3-repeated-function-call.sse": (
        "tool_calls", "G3: every chunk's function_calls listed: the re-sent call runs twice", "tool-call-repeated"),
    "vertex-streamed-function-args.sse": (
        "tool_calls", "Vertex partialArgs: each fragment is its own FunctionCall, never assembled", None),
    "g7-prompt-blocked.sse": (
        "finish_reason", "G7: no candidates, so no finish reason: the blocked prompt looks like an empty success",
        "prompt-blocked"),
}
# capture -> the finding streamfold gives where the SDK raises
SDK_RAISES = {
    "o12-midstream-error-element.json": "in-stream-error",  # errors.ServerError 503
    "f6-raw-error-json-in-sse.sse": "in-stream-error",  # brace-balanced raw JSON, then APIError
}


def is_vertex(data: bytes) -> bool:
    return b'"createTime"' in data


def sdk_segments(data: bytes) -> list[Any]:
    """What `HttpResponse.segments()` yields for an httpx response with this body (the SDK's SSE reader)."""
    response = httpx.Response(200, headers={"content-type": "text/event-stream"}, content=data)
    return list(_api_client.HttpResponse(headers=response.headers, response_stream=response).segments())


def sdk_chunks(segments: list[Any], vertex: bool) -> list[types.GenerateContentResponse]:
    """`request_streamed` plus `_generate_content_stream`, chunk by chunk."""
    out = []
    for segment in segments:
        chunk_dump = json.dumps(segment)
        if chunk_dump.startswith('{"error":'):
            chunk_json = json.loads(chunk_dump)
            errors.APIError.raise_error(chunk_json.get("error", {}).get("code"), chunk_json, None)
        response_dict = json.loads(chunk_dump)
        convert = models._GenerateContentResponse_from_vertex if vertex else models._GenerateContentResponse_from_mldev
        out.append(types.GenerateContentResponse._from_response(response=convert(response_dict, None, None), kwargs={}))
    return out


def sdk_stream(path: Path) -> list[types.GenerateContentResponse]:
    data = path.read_bytes()
    if path.suffix == ".json":
        # The SDK always asks for alt=sse and cannot read the array (see the F9 test below);
        # the array's elements are the same chunks, so they go through the same conversion.
        return sdk_chunks(json.loads(data), is_vertex(data))
    return sdk_chunks(sdk_segments(data), is_vertex(data))


@dataclass
class Candidate:
    text: str = ""
    thoughts: str = ""
    calls: list[tuple[str | None, str | None, Any]] = field(default_factory=list)
    signatures: list[bytes] = field(default_factory=list)
    finish: str | None = None


def add_up(chunks: list[types.GenerateContentResponse]) -> tuple[dict[int, Candidate], Any]:
    """What a user of the SDK gets by adding up the chunks: parts joined per candidate, the last usage."""
    candidates: dict[int, Candidate] = {}
    usage = None
    for chunk in chunks:
        for candidate in chunk.candidates or []:
            got = candidates.setdefault(candidate.index or 0, Candidate())
            for part in (candidate.content.parts or []) if candidate.content else []:
                if part.thought_signature:
                    got.signatures.append(part.thought_signature)
                if part.function_call is not None:
                    call = part.function_call
                    got.calls.append((call.id, call.name, call.args))
                elif part.text is not None:
                    if part.thought:
                        got.thoughts += part.text
                    else:
                        got.text += part.text
            if candidate.finish_reason is not None:
                got.finish = candidate.finish_reason.value
        if chunk.usage_metadata is not None:
            usage = chunk.usage_metadata
    return candidates, usage


def differences(ours: streamfold.Result, candidates: dict[int, Candidate], usage: Any) -> set[str]:
    found = set()
    for choice in ours.choices:
        theirs = candidates.get(choice.index, Candidate())
        if theirs.text != choice.content:
            found.add("content")
        if (theirs.thoughts or None) != choice.reasoning:
            found.add("reasoning")
        if theirs.calls != [(c.id, c.name, c.parsed) for c in choice.tool_calls]:
            found.add("tool_calls")
        if theirs.finish != choice.finish_reason_raw:
            found.add("finish_reason")
    if set(candidates) - {c.index for c in ours.choices}:
        found.add("choices")
    if ours.usage is None:
        if usage is not None:
            found.add("usage")
    else:
        sdk_usage = types.GenerateContentResponseUsageMetadata.model_validate(ours.usage.raw)
        their_output = None if usage is None or (usage.candidates_token_count is None and usage.thoughts_token_count is None) \
            else (usage.candidates_token_count or 0) + (usage.thoughts_token_count or 0)
        if usage is None or sdk_usage != usage or (
                ours.usage.input_tokens, ours.usage.output_tokens, ours.usage.reasoning_tokens,
                ours.usage.cache_read_tokens, ours.usage.total_tokens) != (
                usage.prompt_token_count, their_output, usage.thoughts_token_count,
                usage.cached_content_token_count, usage.total_token_count):
            found.add("usage")
    return found


@pytest.mark.parametrize("path", GEMINI, ids=lambda p: p.name)
def test_agrees_with_google_genai_or_explains_why_not(path: Path) -> None:
    ours = streamfold.fold(path.read_bytes())
    codes = {f.code for f in (*ours.errors, *ours.diagnostics)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            chunks = sdk_stream(path)
        except errors.APIError:
            assert path.name in SDK_RAISES, f"the SDK raises on {path.name}, not listed"
            assert SDK_RAISES[path.name] in codes
            return
    assert path.name not in SDK_RAISES, "listed as raising but the SDK read it"
    candidates, usage = add_up(chunks)
    found = differences(ours, candidates, usage)
    if path.name in SDK_IS_WRONG:
        what, _trap, finding = SDK_IS_WRONG[path.name]
        assert found == {what}, f"expected the SDK to differ on {what} only, got {found}"
        assert finding is None or finding in codes
    else:
        assert found == set()


def test_the_sdk_cannot_read_the_streamed_json_array() -> None:
    # F9: google-genai always requests alt=sse; its reader brace-balances "[{ ... }" and fails,
    # where streamfold frames the array (and folds it exactly like the SSE form).
    data = (Path(__file__).resolve().parents[1] / "captures" / "gemini" / "f9-weather-thought-call-array.json").read_bytes()
    with pytest.raises(errors.UnknownApiResponseError):
        sdk_segments(data)
    assert streamfold.fold(data).transport == "json-array"


def test_the_sdk_cannot_read_data_lines_without_the_space() -> None:
    data = (Path(__file__).resolve().parents[1] / "captures" / "gemini" / "g4-o9-weather-thought-call.sse").read_bytes()
    tight = data.replace(b"data: ", b"data:")
    with pytest.raises(errors.UnknownApiResponseError):
        sdk_segments(tight)
    ours = streamfold.fold(tight)
    assert "data-without-space" in {d.code for d in ours.diagnostics}
    assert ours.choices == streamfold.fold(data).choices


def test_summing_cumulative_usage_over_counts() -> None:
    # G1: what a client that adds up usageMetadata per chunk reports, against the last value.
    path = Path(__file__).resolve().parents[1] / "captures" / "gemini" / "g1-cumulative-usage.sse"
    chunks = sdk_stream(path)
    summed = sum(c.usage_metadata.total_token_count or 0 for c in chunks if c.usage_metadata)
    ours = streamfold.fold(path.read_bytes())
    assert ours.usage is not None and ours.usage.total_tokens == chunks[-1].usage_metadata.total_token_count
    assert summed > 3 * (ours.usage.total_tokens or 0)


RESULTS = {p.name: streamfold.fold(p.read_bytes()) for p in GEMINI}


@pytest.mark.parametrize("name", [n for n, r in RESULTS.items() if r.complete])
def test_export_of_a_complete_stream_validates_as_generate_content_response(name: str) -> None:
    result = RESULTS[name]
    exported = result.export()
    # The REST JSON, camelCase, exactly as generateContent returns it: every key must be known
    # (the SDK models forbid extra fields), bytes fields base64.
    model = types.GenerateContentResponse.model_validate_json(json.dumps(exported))
    # And through the SDK's own response path (mldev or Vertex conversion).
    path = next(p for p in GEMINI if p.name == name)
    vertex = is_vertex(path.read_bytes())
    convert = models._GenerateContentResponse_from_vertex if vertex else models._GenerateContentResponse_from_mldev
    types.GenerateContentResponse._from_response(response=convert(json.loads(json.dumps(exported)), None, None),
                                                 kwargs={})
    assert model.model_version == result.model and model.response_id == result.id
    candidates, usage = add_up([model])
    streamed, _ = add_up(sdk_stream(path))
    for choice in result.choices:
        if choice.finish_reason == "content_filter" and choice.index not in candidates:
            continue  # a blocked prompt: no candidate
        got = candidates[choice.index]
        assert got.text == choice.content
        assert (got.thoughts or None) == choice.reasoning
        assert got.calls == [(c.id, c.name, c.parsed) for c in choice.tool_calls]
        assert got.finish == choice.finish_reason_raw
        # G5: every thought signature the stream carried is in the export, on a part.
        assert got.signatures == streamed[choice.index].signatures
    if result.usage is not None:
        assert usage is not None and usage.total_token_count == result.usage.total_tokens


def test_export_keeps_signatures_on_the_parts_they_rode_on() -> None:
    result = RESULTS["g5-signature-on-empty-text.sse"]
    parts = result.export()["candidates"][0]["content"]["parts"]
    assert [sorted(p) for p in parts] == [["text", "thought"], ["text", "thoughtSignature"]]
    assert parts[1]["text"] == result.choices[0].content
    model = types.Part.model_validate_json(json.dumps(parts[1]))
    assert model.thought_signature == b64decode(parts[1]["thoughtSignature"])


@pytest.mark.parametrize("name", [n for n, r in RESULTS.items() if not r.complete])
def test_export_of_a_failed_stream_keeps_what_arrived(name: str) -> None:
    # No true non-streaming twin exists: the export keeps the text that arrived and no finish reason.
    result = RESULTS[name]
    exported = result.export()
    model = types.GenerateContentResponse.model_validate_json(json.dumps(exported))
    candidates, _ = add_up([model])
    assert [(i, c.text, c.finish) for i, c in candidates.items()] == [
        (c.index, c.content, c.finish_reason_raw) for c in result.choices]
