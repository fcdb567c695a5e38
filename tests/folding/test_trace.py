"""The Trace beside the Result (issue 22, part 1): a Result is a small value that pickles at about
its JSON's size; the frames, kinds, raw bytes and provenance are the trace's, the same as before it
was split off, on every capture; `trace=False` builds none and changes nothing in the value; a trace
refers to the caller's buffer by offsets, and a buffer the caller can change is copied once."""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import json
import pickle
import sys
import tracemalloc
from pathlib import Path

import pytest

from streamfold import Folder, PayloadKind, Result, Trace, fold

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = sorted(path for path in (ROOT / "tests" / "captures").rglob("*")
                  if path.is_file() and not path.name.endswith((".expect.json", ".md")))
#: Each capture's `trace_digest`, made by the fold of commit 76b99e8 (before the trace was split off
#: the Result, with `result` in place of `result.trace`): its frames and provenance, to keep. (A capture
#: added since has none; running this module as a script prints every capture's.)
DIGESTS = json.loads((Path(__file__).with_name("trace_digests.json")).read_text())


def trace_digest(trace: Trace | Result) -> str:
    """A digest of every frame (all its fields), every frame's kind and every text's provenance."""
    digest = hashlib.sha256()
    for frame in trace.frames:
        digest.update(repr(dataclasses.astuple(frame)).encode())
    digest.update(repr([kind.value for kind in trace.frame_kinds]).encode())
    for key in sorted(trace.sources):
        source = trace.sources[key]
        digest.update(repr((key, list(source.frames), list(source.ends))).encode())
    return digest.hexdigest()[:16]


def chat_stream(frames: int) -> bytes:
    """An OpenAI chat stream of `frames` content deltas (~190 bytes a frame), non-ASCII included."""
    words = ("the", " reply", " café", " 東京", ",", "\n", ' "quoted"', " 🚀")
    head = b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":['
    body = [head + b'{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n']
    body += [head + b'{"index":0,"delta":{"content":' + json.dumps(words[i % len(words)]).encode()
             + b'},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"abc"}\n\n' for i in range(frames)]
    body.append(head + b'{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')
    return b"".join(body)


@pytest.mark.parametrize("path", [p for p in CAPTURES if str(p.relative_to(ROOT)) in DIGESTS],
                         ids=lambda p: str(p.relative_to(ROOT / "tests" / "captures")))
def test_a_captures_trace_holds_the_frames_and_provenance_the_result_held_before(path: Path) -> None:
    result = fold(path.read_bytes())
    assert result.trace is not None
    assert trace_digest(result.trace) == DIGESTS[str(path.relative_to(ROOT))]
    # The Result's own names for them read the trace.
    assert result.frames is result.trace.frames and result.sources is result.trace.sources
    assert trace_digest(result) == trace_digest(result.trace)


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: str(p.relative_to(ROOT / "tests" / "captures")))
def test_without_a_trace_the_value_is_the_same(path: Path) -> None:
    data = path.read_bytes()
    traced, untraced = fold(data), fold(data, trace=False)
    assert untraced.trace is None
    assert untraced.to_dict() == traced.to_dict() and untraced == traced
    # What reads the trace through the Result finds it empty, as in a Result read back from JSON.
    assert list(untraced.frames) == [] and list(untraced.frame_kinds) == [] and dict(untraced.sources) == {}
    assert untraced.frame_producing_char(0) is None and untraced.text_runs() == []
    folder = Folder(trace=False)
    folder.feed(data)
    closed = folder.close()
    assert closed.trace is None and closed.to_dict() == traced.to_dict()
    assert len(folder.frames) == 0, "a Folder that keeps no trace lets go of its frames at the end"


def test_a_result_pickles_at_about_its_json_size_without_its_trace() -> None:
    data = chat_stream(20_000)
    result = fold(data)
    pickled = pickle.dumps(result)
    size = len(json.dumps(result.to_dict()))
    assert len(pickled) <= 1.5 * size, (len(pickled), size)
    assert len(pickled) < len(data) / 10  # the frames are not in it (they pickled at 1.17x the input)
    back = pickle.loads(pickled)
    assert back == result and back.to_dict() == result.to_dict() and back.export() == result.export()
    assert back.trace is None and result.trace is not None
    assert dataclasses.replace(result, complete=False).trace is result.trace  # a changed copy keeps it


def test_a_trace_reads_the_callers_bytes_by_offsets_not_a_copy_of_them() -> None:
    data = chat_stream(30_000)  # ~6 MB: several of fold()'s slices
    gc.collect()
    tracemalloc.start()
    try:
        result = fold(data)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    # Before, the runs' copies of the input stayed with the Result: 1.2x the input.
    assert held < 0.5 * len(data), held / len(data)
    assert result.trace is not None and b"".join(frame.raw for frame in result.trace.frames) == data


@pytest.mark.parametrize("kind", ["bytes", "bytearray", "memoryview of bytes", "memoryview of bytearray",
                                  "memoryview of part of bytes"])
def test_a_trace_gives_the_raw_bytes_whatever_buffer_it_was_given_and_however_it_changes(kind: str) -> None:
    data = chat_stream(12_000)
    padded = b"xx" + data + b"yy"
    given = {"bytes": lambda: data, "bytearray": lambda: bytearray(data),
             "memoryview of bytes": lambda: memoryview(data), "memoryview of bytearray": lambda: memoryview(bytearray(data)),
             "memoryview of part of bytes": lambda: memoryview(padded)[2:-2]}[kind]()
    result = fold(given)  # type: ignore[arg-type]
    assert result.trace is not None and result == fold(data)
    frames = result.trace.frames
    # A caller reusing their buffer after the fold does not change the trace (a mutable one was copied once).
    if isinstance(given, bytearray) or (isinstance(given, memoryview) and not given.readonly):
        given[:] = b"z" * len(given)
    assert b"".join(frame.raw for frame in frames) == data
    assert [result.trace.raw(index) for index in (0, 1, len(frames) // 2, len(frames) - 1)] == \
        [frames[index].raw for index in (0, 1, len(frames) // 2, len(frames) - 1)]
    assert result.trace.payload(1).value["choices"][0]["delta"]["content"] == "the"
    assert result.frame_producing_char(0).index == 1 and result.text_runs()[0] == (0, 3, 1)


def test_the_kinds_of_a_trace_are_a_read_only_sequence_of_payload_kinds() -> None:
    result = fold(b'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n: ping\n\ndata: {\n\ndata: [DONE]\n\n')
    kinds = result.frame_kinds
    assert list(kinds) == [PayloadKind.JSON, PayloadKind.COMMENT, PayloadKind.INVALID, PayloadKind.DONE]
    assert kinds[1] is PayloadKind.COMMENT and kinds[-1] is PayloadKind.DONE and kinds[1:3] == list(kinds)[1:3]
    assert kinds == list(kinds) and len(kinds) == 4
    with pytest.raises(TypeError):
        kinds[0] = PayloadKind.JSON  # type: ignore[index]


if __name__ == "__main__":
    # Print the digests of every capture, from whatever streamfold is importable (see DIGESTS).
    digests = {}
    for capture in CAPTURES:
        folded = fold(capture.read_bytes())
        digests[str(capture.relative_to(ROOT))] = trace_digest(folded.trace or folded)
    json.dump(digests, sys.stdout, indent=0, sort_keys=True)
