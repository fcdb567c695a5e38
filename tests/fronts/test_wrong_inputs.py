"""What people paste that is not a stream: each kind is said in one finding (its code, its numbers,
where it points), the rest of the load path is quiet about it, and none of them fires on a clean
capture."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamfold import fold
from streamfold.findings import Diagnostic
from streamfold.services import load
from streamfold.services._devtools import from_devtools, looks_like_devtools
from streamfold.services._encodings import decode_wide_text
from streamfold.services._sdk_repr import from_sdk_repr
from streamfold.services._whole_reply import read_whole_reply
from streamfold.services._wrong_input import recognise
from streamfold.services.inputs import read_capture

ROOT = Path(__file__).resolve().parents[2]
INPUTS = ROOT / "tests" / "inputs"
BODY = (INPUTS / "raw-body.sse").read_bytes()
REPLY = "The kettle is on; tea in five minutes."
NEW_CODES = {"text-encoding", "sdk-repr", "input-devtools", "empty-input", "html-page", "not-text", "not-a-stream"}
REALWORLD = Path("/work/shared/realworld/cases")
NGINX_502 = (b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1>"
             b"</center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n")


def only(diagnostics: tuple[Diagnostic, ...], code: str) -> Diagnostic:
    found = [d for d in diagnostics if d.code == code]
    assert len(found) == 1, [d.code for d in diagnostics]
    return found[0]


# -- empty, HTML, binary -------------------------------------------------------------------


@pytest.mark.parametrize("body, said", [(b"", "it is empty (0 bytes)"),
                                        (b"  \r\n\n\t \n", "it holds only whitespace (8 bytes)")])
def test_an_empty_input_is_one_finding_that_there_was_nothing_to_fold(body: bytes, said: str) -> None:
    result = load(body).result
    found = only(result.diagnostics, "empty-input")
    assert found.message == f"there was nothing to fold: {said}"
    assert (found.frame, found.offset, found.line) == (None, None, None)
    assert found.severity == "warning" and not result.choices and result.diagnostics == (found,)


def test_an_html_page_is_one_finding_with_its_title_and_nothing_is_folded() -> None:
    result = load(NGINX_502).result
    found = only(result.diagnostics, "html-page")
    assert found.message.startswith('the body is an HTML page (title "502 Bad Gateway"), not a stream')
    assert found.severity == "error" and found.frame is None
    assert result.diagnostics == (found,) and result.frame_counts["total"] == 0


def test_the_title_is_unescaped_and_shown_as_plain_text() -> None:
    page = (b"<!DOCTYPE html><html><head><title>\n  Sign in &amp; &lt;continue&gt; \x1b[31m\n</title>"
            b"</head><body></body></html>")
    message = only(load(page).result.diagnostics, "html-page").message
    assert '(title "Sign in & <continue> [31m")' in message and "\x1b" not in message


def test_an_html_page_without_a_title_names_its_heading_or_nothing() -> None:
    assert '(title "Service Unavailable")' in recognise(b"<html><body><h1>Service Unavailable</h1>").message  # type: ignore[union-attr]
    assert recognise(b"<!doctype html><p>x</p>").message.startswith(  # type: ignore[union-attr]
        "the body is an HTML page, not a stream")


def test_an_html_error_page_in_curl_i_output_is_the_page_and_its_status_without_the_markup() -> None:
    result = load((INPUTS / "curl-i-502-html.txt").read_bytes()).result
    assert [d.code for d in result.diagnostics] == ["input-curl", "html-page", "http-status"]
    assert "<html>" not in only(result.diagnostics, "http-status").message
    assert "502 Bad Gateway" in only(result.diagnostics, "html-page").message


def test_an_html_error_page_in_a_har_entry_is_the_page() -> None:
    har = json.loads((INPUTS / "har-429.har").read_text())
    entry = har["log"]["entries"][-1]
    entry["response"]["content"] = {"mimeType": "text/html", "text": NGINX_502.decode()}
    result = load(json.dumps(har).encode()).result
    assert '(title "502 Bad Gateway")' in only(result.diagnostics, "html-page").message


def test_random_bytes_are_one_finding_with_the_share_of_bad_bytes() -> None:
    data = random.Random(7).randbytes(102_400)
    result = load(data).result
    found = only(result.diagnostics, "not-text")
    share = int(found.message.split("% of")[0].rsplit(" ", 1)[1])
    assert 40 <= share <= 70 and "of the 102,400 bytes are not UTF-8 text" in found.message
    assert result.diagnostics == (found,) and found.severity == "error" and result.frame_counts["total"] == 0


def test_binary_that_is_a_stream_is_not_called_not_text() -> None:
    for path in [*(ROOT / "tests" / "captures").rglob("*.bin")]:
        assert recognise(path.read_bytes()) is None, path
    gzipped = load(__import__("gzip").compress(BODY)).result
    assert gzipped.choices[0].content == REPLY and not NEW_CODES & {d.code for d in gzipped.diagnostics}


def test_an_eventstream_cut_at_its_start_is_not_called_not_text() -> None:
    for path in (ROOT / "tests" / "captures").rglob("*.bin"):
        data = path.read_bytes()
        assert recognise(data[7:]) is None, path  # the first prelude is gone: mostly text still, the framer resyncs


def test_a_forced_transport_folds_what_is_not_text_anyway() -> None:
    data = random.Random(7).randbytes(4096)
    result = load(data, transport="sse").result
    assert "not-text" not in {d.code for d in result.diagnostics} and result.frame_counts["total"] > 0


def test_a_latin1_stream_is_text_with_its_invalid_utf8_findings() -> None:
    data = b"".join(b'data: {"choices":[{"index":0,"delta":{"content":"caf\xe9 "}}]}\n\n' for _ in range(200))
    result = load(data + b"data: [DONE]\n\n").result
    assert recognise(data) is None and result.choices[0].content == "caf\ufffd " * 200


# -- UTF-16 / UTF-32 --------------------------------------------------------------------------


@pytest.mark.parametrize("codec, bom, name", [
    ("utf-16-le", b"\xff\xfe", "UTF-16LE"), ("utf-16-be", b"\xfe\xff", "UTF-16BE"),
    ("utf-32-le", b"\xff\xfe\x00\x00", "UTF-32LE"), ("utf-32-be", b"\x00\x00\xfe\xff", "UTF-32BE"),
    ("utf-16-le", b"", "UTF-16LE"), ("utf-16-be", b"", "UTF-16BE"),
    ("utf-32-le", b"", "UTF-32LE"), ("utf-32-be", b"", "UTF-32BE"),
])
def test_wide_text_is_decoded_before_framing_with_a_note(codec: str, bom: bytes, name: str) -> None:
    data = bom + BODY.decode().encode(codec)
    result = load(data).result
    assert result.choices[0].content == REPLY and result.frame_counts == fold(BODY).frame_counts
    found = only(result.diagnostics, "text-encoding")
    assert found.severity == "info" and found.message.startswith(f"the input is {name} text (")
    assert ("byte-order mark" in found.message) and "refer to the decoded text" in found.message
    assert ("it starts with that byte-order mark" in found.message) == bool(bom)


def test_locations_in_wide_text_refer_to_the_decoded_text() -> None:
    broken = BODY.replace(b'"content":"The kettle"', b'"content":"The kettle"}', 1)
    decoded, wide = fold(broken), load(broken.decode().encode("utf-16-le")).result
    assert [(e.frame, e.offset, e.line) for e in wide.errors] == [(e.frame, e.offset, e.line) for e in decoded.errors]


def test_a_powershell_curl_i_dump_is_decoded_then_unwrapped() -> None:
    data = b"\xff\xfe" + (INPUTS / "curl-i.txt").read_bytes().decode().encode("utf-16-le")
    capture = read_capture(data)
    assert capture.source == "curl-verbose" and capture.body == BODY
    assert capture.notes[0].code == "text-encoding"


def test_a_cut_utf16_file_says_what_was_dropped() -> None:
    _, note = decode_wide_text(b"\xff\xfe" + "data: hi\n\n".encode("utf-16-le") + b"d")  # type: ignore[misc]
    assert note.severity == "warning" and "its last 1 byte(s) were not a whole character" in note.message


def test_ascii_and_utf8_and_eventstream_are_not_wide_text() -> None:
    assert decode_wide_text(BODY) is None
    assert decode_wide_text("data: ünïcødé ✓\n\n".encode()) is None
    for path in (ROOT / "tests" / "captures").rglob("*.bin"):
        assert decode_wide_text(path.read_bytes()) is None, path


# -- a non-streaming reply -----------------------------------------------------------------


def test_a_chat_completion_is_read_as_the_reply_with_a_note() -> None:
    result = load((INPUTS / "chat-completion.json").read_bytes()).result
    reference = fold((ROOT / "examples" / "openai-tool-calls.sse").read_bytes())
    assert result.dialect == "openai-chat" and result.complete
    assert [(c.name, c.parsed) for c in result.choices[0].tool_calls] == \
        [(c.name, c.parsed) for c in reference.choices[0].tool_calls]
    assert result.usage is not None and reference.usage is not None
    assert result.usage.total_tokens == reference.usage.total_tokens
    assert result.choices[0].finish_reason == reference.choices[0].finish_reason
    found = only(result.diagnostics, "not-a-stream")
    assert "one non-streaming reply of the openai-chat dialect" in found.message and found.severity == "info"
    assert {d.code for d in result.diagnostics} == {"not-a-stream"}


@pytest.mark.parametrize("value, dialect, text", [
    ({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
      "content": [{"type": "text", "text": "Hi there"}], "stop_reason": "end_turn",
      "usage": {"input_tokens": 3, "output_tokens": 2}}, "anthropic", "Hi there"),
    ({"id": "resp_1", "object": "response", "status": "completed", "model": "gpt-4o",
      "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hello"}]}]},
     "openai-responses", "Hello"),
    ({"candidates": [{"content": {"role": "model", "parts": [{"text": "Bonjour"}]}, "finishReason": "STOP"}],
      "modelVersion": "gemini-2.5-flash"}, "gemini", "Bonjour"),
    ({"model": "llama3", "created_at": "2025-01-01T00:00:00Z", "message": {"role": "assistant", "content": "Hej"},
      "done": True, "done_reason": "stop", "eval_count": 2}, "ollama", "Hej"),
    ({"output": {"message": {"role": "assistant", "content": [{"text": "Hallo"}]}}, "stopReason": "end_turn",
      "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}}, "bedrock", "Hallo"),
    ({"id": "c1", "finish_reason": "COMPLETE", "message": {"role": "assistant",
                                                            "content": [{"type": "text", "text": "Ciao"}]}},
     "cohere", "Ciao"),
])
def test_each_vendors_non_streaming_reply_is_read_by_its_dialect(value: object, dialect: str, text: str) -> None:
    result = load(json.dumps(value, indent=2).encode()).result
    assert (result.dialect, result.choices[0].content) == (dialect, text)
    assert f"of the {dialect} dialect" in only(result.diagnostics, "not-a-stream").message


def test_a_stream_is_never_read_as_one_reply() -> None:
    for path in [*(ROOT / "examples").iterdir(), *(ROOT / "tests" / "captures").rglob("*.json")]:
        if path.name.endswith(".expect.json"):
            continue
        data = path.read_bytes()
        assert read_whole_reply(data, fold(data)) is None or data.lstrip()[:1] == b"{", path


# -- an SDK repr() paste, DevTools rows --------------------------------------------------------


def test_an_sdk_repr_paste_folds_as_the_chunks_it_prints() -> None:
    result = load((INPUTS / "sdk-repr-openai.txt").read_bytes()).result
    assert result.choices[0].content == REPLY and result.dialect == "openai-chat"
    found = only(result.diagnostics, "sdk-repr")
    assert "a Python repr() of 12 SDK object(s)" in found.message and found.severity == "info"


def test_a_line_that_is_no_sdk_object_is_kept_and_named() -> None:
    paste = ("ChatCompletionChunk(id='c', choices=[Choice(delta=ChoiceDelta(content='Hi'), index=0)], "
             "object='chat.completion.chunk')\n__import__('os').system('true')\n")
    body, note = from_sdk_repr(paste.encode())  # type: ignore[misc]
    assert note.severity == "warning" and "line(s) 2 did not read as an SDK object" in note.message
    assert b"data: __import__('os').system('true')\n" in body


def test_devtools_rows_fold_with_their_times_as_arrivals() -> None:
    loaded = load((INPUTS / "devtools-eventstream.tsv").read_bytes())
    assert loaded.result.choices[0].content == REPLY and loaded.result.complete
    assert loaded.timing is not None and loaded.timing.duration == pytest.approx(0.8)
    assert loaded.timing.arrivals[:3] == pytest.approx((0.0, 0.037, 0.074))
    assert "13 event(s) rebuilt as SSE" in only(loaded.result.diagnostics, "input-devtools").message


def test_devtools_rows_with_an_id_column_and_no_header_keep_type_and_id() -> None:
    rows = "1\tdelta\t{\"x\":1}\t09:00:00.000\n2\tmessage\t{\"x\":2}\t09:00:00.500\n"
    assert looks_like_devtools(rows.encode())
    capture = from_devtools(rows.encode())
    assert capture.body == b'id: 1\nevent: delta\ndata: {"x":1}\n\nid: 2\ndata: {"x":2}\n\n'
    assert capture.reads == ((0, 32400.0), (34, 32400.5))


def test_tab_separated_text_that_is_no_devtools_copy_is_not_taken_for_one() -> None:
    assert not looks_like_devtools(b"a\tb\tc\n1\t2\t3\n")
    assert not looks_like_devtools(BODY)


# -- clean captures and the readers' robustness -------------------------------------------------


def _clean_files() -> list[Path]:
    files = [p for d in ("tests/captures", "examples") for p in (ROOT / d).rglob("*")
             if p.is_file() and not p.name.endswith((".expect.json", ".md"))]
    files += [p for p in (INPUTS).iterdir() if p.name in ("raw-body.sse", "curl-v.txt", "trace-hex.txt",
                                                          "chrome-export.har", "timestamped.log")]
    return files


def test_no_new_finding_fires_on_a_clean_capture() -> None:
    for path in _clean_files():
        codes = {d.code for d in load(path.read_bytes()).result.diagnostics}
        # A capture that is itself one JSON reply (a client's output for check) may be read as one.
        assert not (codes & NEW_CODES - {"not-a-stream"}), (path, codes)


def test_no_new_finding_fires_on_the_real_world_captures() -> None:
    if not REALWORLD.is_dir():
        pytest.skip("the real-world captures (/work/shared/realworld) are not on this machine")
    for path in REALWORLD.iterdir():
        if not path.name.endswith(".expect.json"):
            codes = {d.code for d in load(path.read_bytes()).result.diagnostics}
            assert not codes & NEW_CODES, (path, codes)


@settings(max_examples=150, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=600) | st.text(max_size=300).map(str.encode)
       | st.sampled_from(["[", "Foo(a=", "A(b=[C(d=1)], e=-1.5, f=None)", "x\ty\t1:00:00", "<html><title>",
                          "Z(a=1e999, b=(1,), c={'k': [True]})", "A(" * 200, "A(**{})", "A(a=b)"])
       .map(lambda s: s.encode("utf-16-le") if s.startswith("x") else s.encode()))
def test_the_readers_never_raise(data: bytes) -> None:
    recognise(data)
    decode_wide_text(data)
    from_sdk_repr(data)
    from_devtools(data)
    looks_like_devtools(data)
    load(data).result.to_dict()
