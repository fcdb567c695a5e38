"""The whole pipeline: API, misuse, events, provenance, chunking invariance, fuzzing."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import streamfold
from feeding import tr_fold
from streamfold import Folder, TextDelta, ToolCallDelta, ToolCallDone, fold

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = sorted(p for p in (ROOT / "tests" / "captures").rglob("*.sse"))
assert CAPTURES


def chunk(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    edges = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(edges)]


def fold_chunks(chunks: list[bytes], **kwargs: object) -> streamfold.Result:
    folder = Folder(**kwargs)  # type: ignore[arg-type]
    for piece in chunks:
        folder.feed(piece)
    return folder.close()


CHAT = (
    b'data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}\n\n'
    b'data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"lo"}}]}\n\n'
    b'data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"f","arguments":"{\\"a\\""}}]}}]}\n\n'
    b'data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":": 1}"}}]},"finish_reason":"tool_calls"}]}\n\n'
    b"data: [DONE]\n\n"
)


class TestApi:
    def test_fold_accepts_str_and_bytes_alike(self) -> None:
        assert fold(CHAT.decode()) == fold(CHAT)

    def test_result_fields(self) -> None:
        result = fold(CHAT)
        assert (result.transport, result.dialect, result.complete) == ("sse", "openai-chat", True)
        choice = result.choices[0]
        assert choice.content == "Hello"
        assert choice.tool_calls[0].parsed == {"a": 1}
        assert choice.finish_reason == "tool_calls"
        assert [b.type for b in choice.blocks] == ["text", "tool_call"]
        assert choice.blocks[1].frames == (2, 3)

    def test_to_dict_is_the_contract_and_json_serialisable(self) -> None:
        out = fold(CHAT).to_dict()
        assert out["schema"] == 1
        assert set(out) >= {"schema", "transport", "dialect", "complete", "model", "id", "frames", "choices",
                            "usage", "errors", "diagnostics"}
        assert out["frames"] == {"total": 5, "data": 5, "comments": 0, "invalid": 0}
        json.dumps(out)

    def test_misuse_raises_with_a_clear_message(self) -> None:
        folder = Folder()
        with pytest.raises(TypeError, match="bytes or str"):
            folder.feed(3)  # type: ignore[arg-type]
        folder.close()
        with pytest.raises(RuntimeError, match="after close"):
            folder.feed(b"x")
        with pytest.raises(RuntimeError, match="twice"):
            folder.close()
        with pytest.raises(ValueError, match="unknown dialect"):
            Folder("nope")
        with pytest.raises(TypeError):
            fold(None)  # type: ignore[arg-type]

    def test_empty_input_is_a_result_not_an_error(self) -> None:
        result = fold(b"")
        assert result.frames == () and result.choices == () and not result.complete

    def test_forced_dialect_and_transport(self) -> None:
        result = fold(CHAT, dialect="openai-chat", transport="sse")
        assert result.choices[0].content == "Hello"


class TestEvents:
    def test_feed_returns_what_each_chunk_completed(self) -> None:
        folder = Folder()
        frames = CHAT.split(b"\n\n")
        events = folder.feed(frames[0] + b"\n\n")
        assert events == [TextDelta(0, 0, "content", "Hel")]
        assert folder.feed(frames[1]) == []  # not complete yet
        assert folder.feed(b"\n\n") == [TextDelta(1, 0, "content", "lo")]
        events = folder.feed(frames[2] + b"\n\n" + frames[3] + b"\n\n")
        assert ToolCallDelta(2, 0, 0, "f", '{"a"') in events
        assert any(isinstance(e, ToolCallDone) and e.arguments == {"a": 1} for e in events)
        folder.feed(b"data: [DONE]\n\n")
        assert folder.close().complete


class TestProvenance:
    def test_each_character_points_at_its_frame(self) -> None:
        result = fold(CHAT)
        assert [result.frame_producing_char(i).index for i in range(5)] == [0, 0, 0, 1, 1]  # type: ignore[union-attr]
        assert result.frame_producing_char(5) is None
        assert result.frame_producing_char(4, field="tool:0").index == 3  # type: ignore[union-attr]
        assert result.frame_producing_char(0, field="reasoning") is None
        with pytest.raises(ValueError):
            result.frame_producing_char(0, field="bogus")

    def test_tool_args_invalid_names_the_frame_of_the_bad_character(self) -> None:
        data = CHAT.replace(b'": 1}', b'": 1,}')
        result = fold(data)
        (diagnostic,) = [d for d in result.diagnostics if d.code == "tool-args-invalid"]
        assert diagnostic.frame == 3 and diagnostic.details["position"] == 7  # the comma, on every Python
        assert result.choices[0].tool_calls[0].parsed is None
        assert "Illegal trailing comma before end of object" in (result.choices[0].tool_calls[0].error or "")


class TestFindings:
    def test_glued_frames_are_both_folded_and_reported(self) -> None:
        a = b'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"A"}}]}\n'
        b = b'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"B"}}]}\n\n'
        result = fold(a + b + b"data: [DONE]\n\n")
        assert result.choices[0].content == "AB"
        (glued,) = [d for d in result.diagnostics if d.code == "glued-frames"]
        assert glued.frame == 0 and len(glued.details["documents"]) == 2

    def test_a_bad_frame_is_kept_aside_and_the_rest_folds(self) -> None:
        frames = CHAT.split(b"\n\n")
        frames[1] = frames[1][:-10]
        result = fold(b"\n\n".join(frames))
        assert result.choices[0].content == "Hel"
        (error,) = result.errors
        assert (error.code, error.frame, error.line) == ("invalid-json", 1, 3)
        assert error.raw and error.raw.startswith('{"id"')

    def test_unknown_field_suggests_data(self) -> None:
        result = fold(b'Data: {"x":1}\n\ndata: [DONE]\n\n')
        (finding,) = [d for d in result.diagnostics if d.code == "unknown-field"]
        assert "did you mean `data:`" in finding.message and finding.line == 1

    def test_missing_terminal_and_unterminated_final_frame(self) -> None:
        cut = CHAT[: CHAT.index(b"data: [DONE]")] + b'data: {"choices":[{"index":0,"delta":{"content":"!"}}]}\n'
        result = fold(cut)
        codes = {d.code for d in result.diagnostics}
        assert {"missing-terminal", "unterminated-final-frame"} <= codes
        assert result.choices[0].content == "Hello!" and not result.complete

    def test_a_final_line_without_line_end_is_discarded_and_reported(self) -> None:
        # The spec: "Once the end of the file is reached, any pending data must be discarded."
        start = CHAT.index(b"data: [DONE]")
        cut = CHAT[:start] + b'data: {"choices":[{"index":0,"delta":{"content":"!"}}]}'
        result = tr_fold(cut)
        (finding,) = [d for d in result.diagnostics if d.code == "unterminated-final-line"]
        assert (finding.frame, finding.offset) == (None, start)
        assert "discarded" in finding.message and '{"choices"' in finding.message
        assert "missing-terminal" in {d.code for d in result.diagnostics}
        assert result.choices[0].content == "Hello" and not result.complete
        assert len(result.frames) == CHAT[:start].count(b"\n\n")

    def test_unknown_dialect_lists_the_keys_it_saw(self) -> None:
        result = fold(b'data: {"foo": 1}\n\ndata: {"foo": 2, "bar": 3}\n\n')
        assert result.dialect == "unknown"
        (finding,) = [d for d in result.diagnostics if d.code == "unknown-dialect"]
        assert finding.details["keys"] == ["bar", "foo"]
        assert len(result.frames) == 2

    def test_llamacpp_error_field_is_an_in_stream_error(self) -> None:
        result = fold(b'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"x"}}]}\n\n'
                      b'error: {"code":500,"message":"slot unavailable"}\n\n')
        assert [e.code for e in result.errors] == ["in-stream-error"]
        assert not result.complete

    def test_oversized_frame_is_a_located_error(self) -> None:
        big = b'data: {"choices":[{"index":0,"delta":{"content":"' + b"x" * 5000 + b'"}}]}\n\n'
        result = fold(CHAT[:200] + b"\n\n" + big + CHAT, max_frame_size=4096)
        assert "frame-too-large" in [e.code for e in result.errors]


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cuts=st.lists(st.integers(min_value=0), max_size=40))
def test_any_chunking_gives_the_same_result(path: Path, cuts: list[int]) -> None:
    data = path.read_bytes()
    assert fold_chunks(chunk(data, cuts)) == fold(data)


SSE_PIECES = [b"data:", b"data: ", b"event: x", b"id: 1", b"retry: 5", b":", b"\n", b"\r", b"\r\n", b"\n\n",
              b"[DONE]", b"{", b"}", b'"', b"\xff", b"\xe2\x82", b'{"choices":[{"index":0,"delta":{"content":"a"}}]}',
              b'{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{"}}]}}]}', b'{"error":{"message":"x"}}',
              b'{"choices":[{"index":1,"finish_reason":"stop"}]}', b"[", b",", b"]", b" "]


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.binary(max_size=400), st.lists(st.sampled_from(SSE_PIECES), max_size=60).map(b"".join)),
       st.sampled_from([None, "sse", "ndjson", "json-array"]))
def test_no_byte_string_makes_the_core_raise(data: bytes, transport: str | None) -> None:
    result = fold(data, transport=transport)
    json.dumps(result.to_dict())
    for finding in (*result.errors, *result.diagnostics):
        assert finding.frame is None or 0 <= finding.frame < len(result.frames)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(SSE_PIECES), max_size=40).map(b"".join), st.lists(st.integers(min_value=0), max_size=20))
def test_fuzzed_streams_do_not_depend_on_chunking(data: bytes, cuts: list[int]) -> None:
    assert fold_chunks(chunk(data, cuts)) == fold(data)


def test_results_do_not_depend_on_the_fast_decoder() -> None:
    """Without msgspec the core falls back to json and must give the same result."""
    script = (
        "import sys, json; sys.modules['msgspec'] = None\n"
        "import streamfold, pathlib\n"
        "assert streamfold.FAST_DECODER == 'json'\n"
        "out = {p.name: streamfold.fold(p.read_bytes()).to_dict() for p in sorted(pathlib.Path(sys.argv[1]).rglob('*.sse'))}\n"
        "print(json.dumps(out, sort_keys=True))\n"
    )
    captures = ROOT / "tests" / "captures"
    without = subprocess.run([sys.executable, "-c", script, str(captures)], capture_output=True, text=True, check=True)
    with_fast = {p.name: fold(p.read_bytes()).to_dict() for p in sorted(captures.rglob("*.sse"))}
    assert json.loads(without.stdout) == json.loads(json.dumps(with_fast, sort_keys=True))


def test_integers_beyond_64_bits_stay_exact() -> None:
    # orjson would round this to a float; the reference must not depend on the decoder.
    result = fold(b'data: {"object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":123456789012345678901234567890}}\n\n')
    assert result.usage is not None and result.usage.input_tokens == 123456789012345678901234567890


def test_payloads_only_the_standard_library_accepts_still_decode() -> None:
    # NaN and lone surrogates are JSON to Python's json module (and to the vendors' SDKs): the frame
    # folds, with null and U+FFFD in their place so the result stays strict JSON and UTF-8.
    result = fold(b'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"\\ud800"}}],"x":NaN}\n\n')
    assert result.errors == () and result.choices[0].content == "\ufffd"
    assert "non-strict-json" in [d.code for d in result.diagnostics]
