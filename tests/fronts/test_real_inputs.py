"""What curl, logs and HAR files really hold: a `100 Continue` or a proxy's
CONNECT reply before the real response, HTTP/2 status lines, Python logging's
default formats with other lines between the logged chunks, a logged
`[DONE]`, a Content-Type that is not the body's, a HAR holding only a failed
request, a CORS preflight, or no request at all. Each is read through
`services.load` and through the real CLI (`python -m streamfold show`)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from streamfold.services import InputError, load

INPUTS = Path(__file__).resolve().parents[1] / "inputs"
BODY = (INPUTS / "raw-body.sse").read_bytes()
REPLY = "The kettle is on; tea in five minutes."


def show_json(path: Path) -> tuple[int, dict[str, Any] | None, str]:
    """`python -m streamfold show --json PATH` in a subprocess: exit code, the JSON it printed, stderr."""
    done = subprocess.run([sys.executable, "-m", "streamfold", "show", "--json", str(path)], capture_output=True,
                          text=True, timeout=60)
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else None, done.stderr


def codes(out: dict[str, Any]) -> dict[str, str]:
    return {d["code"]: d["message"] for d in out["diagnostics"]}


# -- curl: the responses before the reply ------------------------------------------------


@pytest.mark.parametrize("name, skipped, final", [
    ("curl-i-100-continue.txt", ["an interim response `HTTP/1.1 100 Continue`"], "HTTP/1.1 200 OK"),
    ("curl-si-proxy-http2.txt", ["a proxy's reply to CONNECT (the tunnel, not the reply) "
                                 "`HTTP/1.1 200 Connection established`"], "HTTP/2 200"),
    ("curl-v-proxy-100-continue.txt", ["`HTTP/1.1 200 Connection established`",
                                       "an interim response `HTTP/1.1 100 Continue`"], "HTTP/1.1 200 OK"),
])
def test_curl_output_with_responses_before_the_reply_reads_the_reply(name: str, skipped: list[str],
                                                                     final: str) -> None:
    loaded = load((INPUTS / name).read_bytes())
    assert loaded.capture.source == "curl-verbose" and loaded.capture.body == BODY
    assert loaded.capture.status == 200
    assert (loaded.capture.header("content-type") or "").startswith("text/event-stream")
    assert loaded.result.complete and loaded.result.choices[0].content == REPLY
    notes = {note.code: note.message for note in loaded.notes}
    assert "http-status" not in notes and "content-type" not in notes
    assert f"the reply is the last one (`{final}`)" in notes["skipped-responses"]
    assert all(part in notes["skipped-responses"] for part in skipped)
    assert "unknown-field" not in {d.code for d in loaded.result.diagnostics}  # no header became an SSE field

    code, out, _ = show_json(INPUTS / name)
    assert code == 0 and out is not None and out["choices"][0]["content"] == REPLY and out["complete"]
    assert "skipped-responses" in codes(out) and "http-status" not in codes(out)


def test_curl_v_through_a_proxy_keeps_the_real_requests_headers() -> None:
    capture = load((INPUTS / "curl-v-proxy-100-continue.txt").read_bytes()).capture
    names = [name for name, _ in capture.request_headers]
    assert ("Authorization", "Bearer sk-REDACTED") in capture.request_headers
    assert "Proxy-Connection" not in names and names.count("Host") == 1


def test_a_curl_trace_with_a_100_continue_says_it_was_skipped() -> None:
    def block(kind: str, text: bytes) -> bytes:
        return f"<= Recv {kind}, {len(text)} bytes (0x{len(text):x})\n0000: ".encode() + text.rstrip(b"\r\n") + b"\n"
    trace = (b"=> Send header, 5 bytes (0x5)\n0000: POST \n"
             + block("header", b"HTTP/1.1 100 Continue\r\n") + block("header", b"\r\n")
             + block("header", b"HTTP/1.1 200 OK\r\n") + block("header", b"Content-Type: text/event-stream\r\n")
             + block("header", b"\r\n") + block("data", b'data: {"choices":[]}'))
    loaded = load(trace, input_format="curl-trace")
    assert loaded.capture.status == 200 and loaded.capture.header("content-type") == "text/event-stream"
    assert "`HTTP/1.1 100 Continue`" in {n.code: n.message for n in loaded.notes}["skipped-responses"]


# -- logs ------------------------------------------------------------------------------


@pytest.mark.parametrize("name, timed, skipped_lines", [
    ("python-logging-asctime.log", True, "line 1, 3, 10, 17; by level: INFO 3, WARNING 1"),
    ("python-logging-named.log", True, "line 1, 6, 12; by level: INFO 2, WARNING 1"),
    ("python-logging-basic.log", False, "line 1, 2, 3, 10; by level: INFO 2, DEBUG 1, WARNING 1"),
])
def test_python_loggings_default_formats_read_the_logged_chunks(name: str, timed: bool, skipped_lines: str) -> None:
    loaded = load((INPUTS / name).read_bytes())
    assert loaded.capture.source == "log" and loaded.capture.body == BODY
    assert loaded.result.complete and loaded.result.choices[0].content == REPLY  # the logged [DONE] ends it
    if timed:
        assert loaded.capture.reads is not None and len(loaded.capture.reads) == 13
        assert round(loaded.capture.reads[1][1] - loaded.capture.reads[0][1], 3) == 0.412
        assert loaded.timing is not None and loaded.timing.stalls == ()
    else:
        assert loaded.capture.reads is None and loaded.timing is None
    notes = {note.code: note.message for note in loaded.notes}
    assert notes["log-lines-skipped"].endswith(f"were skipped ({skipped_lines})")
    assert {d.code for d in loaded.result.diagnostics} & {"unknown-field", "missing-terminal",
                                                          "unterminated-final-frame"} == set()

    code, out, _ = show_json(INPUTS / name)
    assert code == 0 and out is not None and out["choices"][0]["content"] == REPLY and out["complete"]
    assert "log-lines-skipped" in codes(out) and "unknown-field" not in codes(out)


@pytest.mark.parametrize("done", ["> chunk [DONE]", "[DONE]", "chunk: [DONE]", "data: [DONE]"])
def test_a_logged_done_ends_the_stream(done: str, tmp_path: Path) -> None:
    lines = (INPUTS / "timestamped.log").read_text().splitlines()
    assert lines[-1] == "16:58:38.013 data: [DONE]"
    log = tmp_path / "done.log"
    log.write_text("\n".join([*lines[:-1], f"16:58:38.013 {done}"]) + "\n")
    loaded = load(log.read_bytes())
    assert loaded.capture.body == BODY
    assert loaded.result.complete and "missing-terminal" not in {d.code for d in loaded.result.diagnostics}
    code, out, _ = show_json(log)
    assert code == 0 and out is not None and out["complete"] and "missing-terminal" not in codes(out)


def test_a_python_dict_logged_is_not_taken_for_a_chunk() -> None:
    loaded = load(b"DEBUG:openai._base_client:Request options: {'method': 'post', 'json_data': {}}\n"
                  b'DEBUG:app:{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"stop"}]}\n')
    assert loaded.capture.body == b'data: {"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"stop"}]}\n\n'
    assert "line 1; by level: DEBUG 1" in {n.code: n.message for n in loaded.notes}["log-lines-skipped"]


def test_logged_sse_lines_after_a_label_are_read_and_ids_in_messages_are_not_fields() -> None:
    loaded = load(b"2026-12-01 14:20:01,123 DEBUG sse line: event: message_stop\n"
                  b'2026-12-01 14:20:01,124 DEBUG sse line: data: {"type":"message_stop"}\n'
                  b"2026-12-01 14:20:01,125 INFO request id: req_1 done\n")
    assert loaded.capture.body == b'data: {"type":"message_stop"}\n\n'  # the labelled event: line is no data
    assert "line 1, 3" in {n.code: n.message for n in loaded.notes}["log-lines-skipped"]


# -- Content-Type ----------------------------------------------------------------------


def test_an_sse_body_sent_as_application_json_is_flagged() -> None:
    loaded = load((INPUTS / "curl-si-http2-json-type.txt").read_bytes())
    assert loaded.capture.status == 200 and loaded.capture.body == BODY
    message = {n.code: n.message for n in loaded.notes}["content-type"]
    assert "the body is SSE but the response Content-Type is 'application/json'" in message
    assert "EventSource" in message
    code, out, _ = show_json(INPUTS / "curl-si-http2-json-type.txt")
    assert code == 0 and out is not None and out["choices"][0]["content"] == REPLY
    assert "'application/json'" in codes(out)["content-type"]


def test_the_content_type_flag_holds_for_a_har_and_spares_the_bodies_that_fit(tmp_path: Path) -> None:
    har = json.loads((INPUTS / "chrome-export.har").read_text())
    har["log"]["entries"][1]["response"]["headers"][0]["value"] = "application/json; charset=utf-8"
    path = tmp_path / "json-type.har"
    path.write_text(json.dumps(har))
    assert "body is SSE" in {n.code: n.message for n in load(path.read_bytes()).notes}["content-type"]
    code, out, _ = show_json(path)
    assert code == 0 and out is not None and "body is SSE" in codes(out)["content-type"]
    # The right type is not flagged, nor is application/json on a body that is JSON (a Gemini array).
    assert "content-type" not in {n.code for n in load((INPUTS / "curl-i.txt").read_bytes()).notes}
    array = (b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n[{"candidates": [{"content": {"parts": '
             b'[{"text": "Hi"}], "role": "model"}, "finishReason": "STOP", "index": 0}]}]')
    gemini = load(array)
    assert gemini.result.transport != "sse" and "content-type" not in {n.code for n in gemini.notes}


# -- HAR -------------------------------------------------------------------------------


def test_a_har_holding_only_a_429_shows_the_429_and_its_error_body() -> None:
    loaded = load((INPUTS / "har-429.har").read_bytes())
    assert loaded.capture.status == 429
    notes = {n.code: n.message for n in loaded.notes}
    assert "holds no streamed response; entry 0 failed" in notes["har-entries"]
    assert notes["http-status"].startswith("the response status was 429")
    # The body is an error response, not a one-frame stream: said once, in its own finding (issue 21).
    assert loaded.result.errors == () and "Rate limit reached for gpt-4.1-mini" in notes["error-response"]

    code, out, err = show_json(INPUTS / "har-429.har")
    assert code == 0 and out is not None and "none is a streamed response" not in err
    assert "429" in codes(out)["http-status"] and "Rate limit reached" in codes(out)["error-response"]


def test_of_several_failed_requests_the_last_is_shown_and_the_others_named() -> None:
    har = json.loads((INPUTS / "har-429.har").read_text())
    first = copy.deepcopy(har["log"]["entries"][0])
    first["response"]["status"] = 401
    first["request"]["url"] += "?try=1"
    har["log"]["entries"].insert(0, first)
    loaded = load(json.dumps(har).encode())
    assert loaded.capture.status == 429
    assert "entry 1 failed" in (message := {n.code: n.message for n in loaded.notes}["har-entries"])
    assert "others failed too: [0] POST https://chat.example.test/v1/chat/completions?try=1" in message


def test_a_failed_request_is_not_taken_when_a_streamed_one_is_there() -> None:
    har = json.loads((INPUTS / "har-429.har").read_text())
    har["log"]["entries"].insert(0, json.loads((INPUTS / "chrome-export.har").read_text())["log"]["entries"][1])
    loaded = load(json.dumps(har).encode())
    assert loaded.capture.status == 200 and loaded.result.choices[0].content == REPLY


def test_a_cors_preflight_is_never_taken_as_the_streamed_entry() -> None:
    loaded = load((INPUTS / "har-preflight-after.har").read_bytes())
    assert "read HAR entry 1: POST" in {n.code: n.message for n in loaded.notes}["input-har"]
    assert loaded.result.complete and loaded.result.choices[0].content == REPLY
    assert "har-entries" not in {n.code for n in loaded.notes}  # the preflight is no candidate
    code, out, _ = show_json(INPUTS / "har-preflight-after.har")
    assert code == 0 and out is not None and out["choices"][0]["content"] == REPLY
    # When the POST's body was left out of the export, that is said, not the preflight's empty body folded.
    har = json.loads((INPUTS / "har-preflight-after.har").read_text())
    del har["log"]["entries"][1]["response"]["content"]["text"]
    with pytest.raises(InputError, match="HAR entry 1 has no response body"):
        load(json.dumps(har).encode())
    # Asked for by number, a preflight is still shown.
    assert "OPTIONS" in {n.code: n.message for n in load(json.dumps(har).encode(), entry="2").notes}["input-har"]


def test_a_har_with_no_entries_says_so_in_a_sentence() -> None:
    with pytest.raises(InputError) as raised:
        load((INPUTS / "har-no-entries.har").read_bytes())
    assert str(raised.value).startswith("this HAR holds no requests")
    assert "'Preserve log'" in str(raised.value) and "was the export made after the request?" in str(raised.value)
    code, out, err = show_json(INPUTS / "har-no-entries.har")
    assert code == 2 and out is None and "this HAR holds no requests" in err and "Traceback" not in err


def test_a_har_of_one_entry_that_is_neither_streamed_nor_failed_still_lists_it() -> None:
    har = copy.deepcopy(json.loads((INPUTS / "chrome-export.har").read_text()))
    har["log"]["entries"] = har["log"]["entries"][:1]
    with pytest.raises(InputError, match=r"the HAR has 1 entry and none is a streamed response"):
        load(json.dumps(har).encode())
