"""Inputs: every format users have (written by the real curl against a local
server, a Chrome-style HAR, a timestamped log) gives back the exact body."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamfold import fold
from streamfold.services.inputs import InputError, _body_offsets, read_capture, transport_notes

INPUTS = Path(__file__).resolve().parents[1] / "inputs"
BODY = (INPUTS / "raw-body.sse").read_bytes()
REPLY = "The kettle is on; tea in five minutes."


@pytest.mark.parametrize("name, source", [
    ("raw-body.sse", "raw"),
    ("curl-v.txt", "curl-verbose"),
    ("curl-i.txt", "curl-verbose"),
    ("trace-hex.txt", "curl-trace"),
    ("trace-ascii-time.txt", "curl-trace"),
    ("curl-raw-chunked.txt", "raw"),
    ("chrome-export.har", "har"),
    ("timestamped.log", "log"),
])
def test_every_format_gives_back_the_exact_body(name: str, source: str) -> None:
    capture = read_capture((INPUTS / name).read_bytes())
    assert capture.source == source
    assert capture.body == BODY
    assert fold(capture.body).choices[0].content == REPLY


def test_curl_verbose_keeps_the_headers() -> None:
    capture = read_capture((INPUTS / "curl-v.txt").read_bytes())
    assert capture.status == 200
    assert capture.header("content-type") == "text/event-stream; charset=utf-8"
    assert ("Authorization", "Bearer sk-REDACTED") in capture.request_headers


def test_trace_time_gives_one_arrival_time_per_read_at_frame_boundaries() -> None:
    capture = read_capture((INPUTS / "trace-ascii-time.txt").read_bytes())
    assert capture.reads is not None and len(capture.reads) == 14
    frame_starts = {frame.offset for frame in fold(capture.body).frames}
    assert {offset for offset, _ in capture.reads} <= frame_starts | {len(capture.body)}
    times = [seconds for _, seconds in capture.reads]
    assert times == sorted(times) and times[1] - times[0] > 0.3  # the server waited 0.35 s before the 2nd frame
    assert {n.code for n in capture.notes} >= {"trace-ascii-lossy", "chunked-transfer-encoding"}


def test_timestamped_log_keeps_times() -> None:
    capture = read_capture((INPUTS / "timestamped.log").read_bytes())
    assert capture.reads is not None and len(capture.reads) == 13
    assert round(capture.reads[1][1] - capture.reads[0][1], 3) == 0.412


def test_har_picks_the_streamed_entry_and_decodes_base64() -> None:
    data = (INPUTS / "base64-two-streams.har").read_bytes()
    by_index = read_capture(data, entry="1")
    assert by_index.body == BODY and by_index.url == "https://chat.example.test/v1/chat/completions"
    by_url = read_capture(data, entry="retry=1")
    assert by_url.status == 429
    assert {n.code for n in transport_notes(by_url)} == {"http-status", "content-encoding"}
    default = read_capture(data)
    assert "har-entries" in {n.code for n in default.notes}
    # A URL part that matches the stream and a failed retry picks the stream, and says what else matched.
    by_part = read_capture(data, entry="/v1/chat")
    assert by_part.body == BODY and by_part.status == 200
    assert any(n.code == "har-entries" and "retry=1" in n.message for n in by_part.notes)


def test_har_without_a_streamed_entry_says_which_entries_it_has() -> None:
    har = json.loads((INPUTS / "chrome-export.har").read_text())
    har["log"]["entries"] = har["log"]["entries"][:1]
    with pytest.raises(InputError, match=r"none is a streamed response.*\[0\] GET https://chat.example.test/api/models"):
        read_capture(json.dumps(har).encode())
    with pytest.raises(InputError, match="no HAR entry matches"):
        read_capture((INPUTS / "chrome-export.har").read_bytes(), entry="nope")


def test_gzip_body_is_decompressed_and_said() -> None:
    capture = read_capture(gzip.compress(BODY))
    assert capture.body == BODY and [n.code for n in capture.notes] == ["gzip-body"]
    cut = read_capture(gzip.compress(BODY)[:-40])
    assert BODY.startswith(cut.body) and "cut off" in cut.notes[0].message


def test_transport_checks() -> None:
    capture = read_capture((INPUTS / "curl-i.txt").read_bytes())
    assert transport_notes(capture) == []
    buffered = read_capture(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 10\r\n"
                            b"Server: nginx/1.25\r\n\r\ndata: {}\n\n")
    assert {n.code for n in transport_notes(buffered)} == {"content-type", "buffered-response", "proxy-buffering"}


def test_cli_reads_every_input_format(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from streamfold.cli import cli

    result = CliRunner().invoke(cli, ["show", "--json", str(INPUTS / "curl-v.txt")])
    out = json.loads(result.stdout)
    assert out["choices"][0]["content"] == REPLY
    assert any(d["code"] == "input-curl" for d in out["diagnostics"])
    bad = CliRunner().invoke(cli, ["show", "--entry", "7", str(INPUTS / "chrome-export.har")])
    assert bad.exit_code == 2 and "no HAR entry matches '7'" in bad.stderr


def test_jsonl_of_chunk_objects_folds_and_a_finish_reason_ends_it() -> None:
    lines = [json.dumps(json.loads(frame[len(b"data: "):])) for frame in BODY.split(b"\n\n") if frame and b"[DONE]" not in frame]
    result = fold("\n".join(lines) + "\n")
    assert (result.transport, result.dialect, result.choices[0].content) == ("ndjson", "openai-chat", REPLY)
    assert result.complete and "missing-terminal" not in {d.code for d in result.diagnostics}
    cut = fold("\n".join(lines[:-1]) + "\n")  # the finish_reason chunk lost
    assert not cut.complete and "missing-terminal" in {d.code for d in cut.diagnostics}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 8)), max_size=30), st.lists(st.integers(0, 400), max_size=40))
def test_read_offsets_move_past_the_removed_chunk_framing_as_a_sum_over_spans_would(
        gaps: list[tuple[int, int]], offsets: list[int]) -> None:
    """The bisection in `_body_offsets` equals the plain rule: an offset loses every framing byte before it."""
    framing, position = [], 0
    for gap, length in gaps:
        start = position + gap
        framing.append((start, start + length))
        position = start + length
    plain = [offset - sum(min(end, offset) - start for start, end in framing if start < offset) for offset in offsets]
    assert _body_offsets(offsets, framing) == plain

