"""Hostile input never raises: each of these once raised (RecursionError, TypeError,
UnicodeEncodeError) or put non-JSON into the result. Now each is a finding at its frame,
the frames around it still fold, and the result stays strict JSON and UTF-8 however the
bytes are fed (`tr_fold`) and whichever way (fast or plain) the fold takes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import streamfold
from eventstream_helpers import event
from feeding import tr_fold
from streamfold import Folder, Result, fold
from streamfold._json import MAX_DEPTH

GOOD = {"choices": [{"index": 0, "delta": {"content": "GOOD"}}]}


def sse(*payloads: Any) -> bytes:
    return b"".join(b"data: " + (p if isinstance(p, bytes) else json.dumps(p).encode()) + b"\n\n" for p in payloads)


def chat(delta: dict[str, Any], **choice: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, **choice}]}


def tool(**call: Any) -> dict[str, Any]:
    return chat({"tool_calls": [{"function": {"name": "f", "arguments": "{}"}, **call}]})


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def gemini(parts: list[Any], **candidate: Any) -> dict[str, Any]:
    return {"candidates": [{"content": {"parts": parts, "role": "model"}, **candidate}]}


def bedrock(*events: tuple[str, dict[str, Any]]) -> bytes:
    head = [("messageStart", {"role": "assistant"}),
            ("contentBlockDelta", {"delta": {"text": "GOOD"}, "contentBlockIndex": 0})]
    return b"".join(event(name, payload) for name, payload in (*head, *events))


# (id, capture, code, frame of the finding, texts the other frames still gave to choice 0's content)
CASES = [
    # 1. deep nesting
    ("sse-1000-brackets", sse(GOOD, b"[" * 1000, GOOD), "invalid-json", 1, ["GOODGOOD"]),
    ("json-array-1000-brackets", b"[" + b"[" * 1000, "invalid-json", 0, []),
    ("ndjson-1000-objects", b'{"a":' * 1000 + b"\n", "invalid-json", 0, []),
    ("sse-100k-deep-field", sse(GOOD, ('{"choices":[{"index":0,"delta":{"content":"x"},"x":' + deep(100_000)
                                       + "}]}").encode(), GOOD), "invalid-json", 1, ["GOODGOOD"]),
    ("tool-arguments-1000-open", sse(GOOD, tool(index=0, id="c", function={"name": "f", "arguments": "[" * 1000}),
                                     b"[DONE]"), "tool-args-invalid", 1, ["GOOD"]),
    ("tool-arguments-1000-closed-twice", sse(GOOD, tool(index=0, id="c", function={
        "name": "f", "arguments": deep(1000) * 2}), b"[DONE]"), "tool-args-invalid", 1, ["GOOD"]),
    # 2. a wrongly typed value where a dialect expects a scalar
    ("chat-index-array", sse(GOOD, b'{"choices":[{"index":[],"delta":{"content":"a"}}]}', GOOD),
     "unexpected-payload", 1, ["GOODaGOOD"]),
    ("chat-tool-id-array", sse(GOOD, tool(index=0, id=[None]), GOOD), "unexpected-payload", 1, ["GOODGOOD"]),
    ("chat-tool-id-array-no-index", sse(GOOD, tool(id=[None]), GOOD), "unexpected-payload", 1, ["GOODGOOD"]),
    ("chat-tool-index-object", sse(GOOD, tool(index={"a": 1}, id="c"), GOOD), "unexpected-payload", 1,
     ["GOODGOOD"]),
    ("chat-tool-name-number", sse(GOOD, tool(index=0, id="c", function={"name": 7, "arguments": "{}"}), GOOD),
     "unexpected-payload", 1, ["GOODGOOD"]),
    ("chat-finish-reason-object", sse(GOOD, chat({}, finish_reason={"a": 1}), GOOD), "unexpected-payload", 1,
     ["GOODGOOD"]),
    ("chat-role-array", sse(GOOD, chat({"role": ["assistant"], "content": "x"}), GOOD), "unexpected-payload", 1,
     ["GOODxGOOD"]),
    ("gemini-citation-end-index-array", sse(
        gemini([{"text": "GOOD"}], citationMetadata={"citationSources": [{"startIndex": 0, "endIndex": []}]}),
        gemini([{"text": "GOOD"}], finishReason="STOP")), "unexpected-payload", 0, ["GOODGOOD"]),
    ("gemini-function-call-id-object", sse(
        gemini([{"text": "GOOD"}]),
        gemini([{"functionCall": {"id": {"a": 1}, "name": "f", "args": {}}}], finishReason="STOP")),
     "unexpected-payload", 1, ["GOOD"]),
    ("bedrock-stop-reason-object", bedrock(("messageStop", {"stopReason": {"a": 0}})), "unexpected-payload", 2,
     ["GOOD"]),
    # 3. text that is not a string
    ("bedrock-text-number", bedrock(("contentBlockDelta", {"delta": {"text": 9}, "contentBlockIndex": 0}),
                                    ("contentBlockDelta", {"delta": {"text": "!"}, "contentBlockIndex": 0}),
                                    ("messageStop", {"stopReason": "end_turn"})),
     "unexpected-payload", 2, ["GOOD!"]),
    ("chat-refusal-true", sse(GOOD, chat({"refusal": True}), GOOD), "unexpected-payload", 1, ["GOODGOOD"]),
    ("chat-reasoning-both-names-one-object", sse(GOOD, chat({"reasoning": "e", "reasoning_content": {"a": 1}}),
                                                 GOOD), "unexpected-payload", 1, ["GOODGOOD"]),
    ("chat-content-number", sse(GOOD, chat({"content": 5, "role": "assistant"}), GOOD), "unexpected-payload", 1,
     ["GOODGOOD"]),
    # 4. a lone surrogate escape; 5. numbers strict JSON does not have
    ("lone-surrogate", sse(GOOD, b'{"choices":[{"index":0,"delta":{"content":"\\ud800"}}]}', GOOD),
     "non-strict-json", 1, ["GOOD\ufffdGOOD"]),
    ("nan-infinity-1e999", sse(GOOD, b'{"choices":[{"index":0,"delta":{"content":"x"}}],"usage":{"prompt_tokens":'
                                     b'NaN,"completion_tokens":Infinity,"total_tokens":1e999}}', GOOD),
     "non-strict-json", 1, ["GOODxGOOD"]),
]


def _strict(result: Result) -> dict[str, Any]:
    """The contract as strict JSON and UTF-8 (what `show --json` and the web page write)."""
    contract = result.to_dict()
    text = json.dumps(contract, allow_nan=False, ensure_ascii=False)
    text.encode("utf-8")
    assert Result.from_dict(json.loads(text)) == result
    return contract


@pytest.mark.parametrize(("data", "code", "frame", "texts"), [case[1:] for case in CASES],
                         ids=[case[0] for case in CASES])
def test_hostile_input_is_a_finding_at_its_frame(data: bytes, code: str, frame: int, texts: list[str]) -> None:
    result = tr_fold(data)
    contract = _strict(result)
    found = [(f["code"], f["frame"]) for f in (*contract["errors"], *contract["diagnostics"])]
    assert (code, frame) in found, found
    content = contract["choices"][0]["content"] if contract["choices"] else ""
    for text in texts:
        assert text in content
    try:
        json.dumps(result.export(), allow_nan=False).encode("utf-8")
    except NotImplementedError:
        assert result.dialect == "unknown"


@pytest.mark.parametrize("data", [case[1] for case in CASES if case[1].startswith(b"data: ")],
                         ids=[case[0] for case in CASES if case[1].startswith(b"data: ")])
def test_the_fast_ways_fold_hostile_frames_as_the_plain_path(data: bytes) -> None:
    """Folded whole (runs, msgspec Structs) equals fed one frame per feed() (records, dicts)."""
    padded = sse(*[GOOD] * 40) + data + sse(*[GOOD] * 40)
    folder = Folder()
    for frame in padded.split(b"\n\n")[:-1]:
        folder.feed(frame + b"\n\n")
    assert fold(padded) == folder.close()


_OVER = json.loads(deep(MAX_DEPTH + 40))  # decodes in msgspec and json alike, but is over the cap
_RESPONSES_HEAD = [{"type": "response.created", "sequence_number": 0, "response": {"id": "r", "output": []}},
                   {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
                    "item": {"type": "message", "id": "m", "role": "assistant", "content": []}}]


def _delta(sequence: int, **extra: Any) -> dict[str, Any]:
    return {"type": "response.output_text.delta", "sequence_number": sequence, "item_id": "m", "output_index": 0,
            "content_index": 0, "delta": "GOOD", **extra}


@pytest.mark.parametrize(("frames", "bad"), [
    ([GOOD] * 40 + [chat({"content": "x"}, x=_OVER)] + [GOOD] * 40, 40),
    (_RESPONSES_HEAD + [_delta(n + 2) for n in range(40)] + [_delta(42, logprobs=[_OVER])]
     + [_delta(n + 43) for n in range(40)], 42),
    ([gemini([{"text": "GOOD"}])] * 40 + [gemini([{"text": "x"}]) | {"usageMetadata": {"d": _OVER}}]
     + [gemini([{"text": "GOOD"}])] * 40, 40),
], ids=["chat-extra-field", "responses-logprobs", "gemini-usage-metadata"])
def test_a_payload_over_the_cap_is_refused_by_the_fast_ways_too(frames: list[Any], bad: int) -> None:
    """Nested past the cap, though msgspec would decode it: invalid-json whichever way it is folded."""
    data = sse(*frames)
    folder = Folder()
    for frame in data.split(b"\n\n")[:-1]:
        folder.feed(frame + b"\n\n")
    result = fold(data)
    assert result == folder.close()
    assert [(error.code, error.frame) for error in result.errors] == [("invalid-json", bad)]


def test_nesting_up_to_the_cap_folds_and_survives_every_output() -> None:
    arguments = deep(MAX_DEPTH)
    data = sse(chat({"content": "a"}, x=json.loads(deep(MAX_DEPTH - 3))),
               tool(index=0, id="c", function={"name": "f", "arguments": arguments}), b"[DONE]")
    result = tr_fold(data)
    contract = _strict(result)
    assert contract["errors"] == [] and contract["diagnostics"] == []
    assert result.choices[0].tool_calls[0].arguments == arguments
    json.dumps(result.export())
    beyond = tr_fold(sse(GOOD, deep(MAX_DEPTH + 1).encode()))
    (error,) = beyond.errors
    assert (error.code, error.frame) == ("invalid-json", 1)
    assert f"nested more than {MAX_DEPTH} levels deep: character {MAX_DEPTH}" in error.message


def test_nan_and_infinity_become_null_in_the_result() -> None:
    result = fold(CASES[-1][1])
    usage = result.usage
    assert usage is not None
    assert usage.raw == {"prompt_tokens": None, "completion_tokens": None, "total_tokens": None}
    (finding,) = [d for d in result.diagnostics if d.code == "non-strict-json"]
    assert "NaN, Infinity, 1e999" in finding.message


def test_lone_surrogates_in_keys_and_tool_arguments_become_replacement_characters() -> None:
    data = sse(b'{"choices":[{"index":0,"delta":{"content":"a","\\udc00k":1}}]}',
               tool(index=0, id="c", function={"name": "f", "arguments": '{"q":"\\udfff"}'}), b"[DONE]")
    result = tr_fold(data)
    _strict(result)
    assert result.choices[0].tool_calls[0].parsed == {"q": "\ufffd"}
    assert [d.frame for d in result.diagnostics if d.code == "non-strict-json"] == [0]


def test_a_str_with_a_lone_surrogate_folds_as_its_bytes_would() -> None:
    """fold(str) encodes with surrogatepass: the lone surrogate is three invalid UTF-8 bytes."""
    text = 'data: {"choices":[{"index":0,"delta":{"content":"a\ud800b"}}]}\n\n'
    result = fold(text)
    assert result == fold(text.encode("utf-8", "surrogatepass"))
    assert result.choices[0].content == "a\ufffd\ufffd\ufffdb"
    assert ("invalid-utf8", 0) in [(d.code, d.frame) for d in result.diagnostics]
    folder = Folder()
    folder.feed(text)
    assert folder.close() == result
    _strict(result)


def test_results_of_hostile_input_do_not_depend_on_the_fast_decoder(tmp_path: Path) -> None:
    for position, case in enumerate(CASES):
        (tmp_path / f"{position:02d}").write_bytes(case[1])
    script = ("import sys, json, pathlib; sys.modules['msgspec'] = None\n"
              "import streamfold\n"
              "assert streamfold.FAST_DECODER == 'json'\n"
              "out = {p.name: streamfold.fold(p.read_bytes()).to_dict() for p in sorted(pathlib.Path(sys.argv[1]).iterdir())}\n"
              "print(json.dumps(out, sort_keys=True))\n")
    without = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True,
                             check=True)
    with_fast = {p.name: fold(p.read_bytes()).to_dict() for p in sorted(tmp_path.iterdir())}
    assert json.loads(without.stdout) == json.loads(json.dumps(with_fast, sort_keys=True))


def test_the_public_decoding_step_takes_hostile_payloads() -> None:
    payload = streamfold.decode_frame(fold(sse(b'{"a":NaN,"b":"\\ud800"}')).frames[0])
    assert payload.value == {"a": None, "b": "\ufffd"}
    assert streamfold.decode_frame(fold(sse(b"[" * 5000)).frames[0]).kind.value == "invalid"


def _vertex_call(*fragments: dict[str, Any], more: bool = True) -> dict[str, Any]:
    return gemini([{"functionCall": {"name": "f", "partialArgs": list(fragments), "willContinue": more}}])


@pytest.mark.parametrize("fragment", [
    {"jsonPath": "$" + ".a" * 100_000, "stringValue": "x"},
    {"jsonPath": "$.a", "numberValue": [[1]]},
], ids=["path-100k-deep", "container-value"])
def test_vertex_partial_args_cannot_build_arguments_past_the_cap(fragment: dict[str, Any]) -> None:
    """Gemini assembles streamed arguments from JSONPath fragments: not a decoder, but it nests too."""
    data = sse(gemini([{"text": "GOOD"}]), _vertex_call({"jsonPath": "$.ok", "stringValue": "y"}),
               _vertex_call(fragment), _vertex_call(more=False), gemini([{"text": "GOOD"}], finishReason="STOP"))
    result = tr_fold(data)
    _strict(result)
    assert ("unexpected-payload", 2) in [(d.code, d.frame) for d in result.diagnostics]
    assert result.choices[0].content == "GOODGOOD"
    assert result.choices[0].tool_calls[0].parsed == {"ok": "y"}
