"""`streamfold tail` says what `show` says about the same bytes: an HTTP error page piped in
from `curl -si` is named as the page it is (no SSE findings), and tool calls are numbered as
`show`, `--json` and `blame` number them, whatever key the dialect gives them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INPUTS = ROOT / "tests" / "inputs"
CAPTURES = ROOT / "tests" / "captures"
STREAMFOLD = [sys.executable, "-m", "streamfold"]
ENV = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}

NGINX_502 = (b"HTTP/1.1 502 Bad Gateway\r\nServer: nginx\r\nContent-Type: text/html\r\nContent-Length: 157\r\n\r\n"
             b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1>"
             b"</center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n")


def _run(*args: str, data: bytes) -> str:
    done = subprocess.run([*STREAMFOLD, *args], input=data, capture_output=True, env=ENV, timeout=60)
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    return done.stdout.decode()


def _findings(out: str) -> list[str]:
    """The finding lines of a report: severity, code and message (each on one line at 200 columns)."""
    return [line for line in out.splitlines() if re.match(r"(error|warning|info)\s+[a-z-]+[:( ]", line)]


@pytest.mark.parametrize("data", [NGINX_502, (INPUTS / "curl-i-502-html.txt").read_bytes()],
                         ids=["nginx-502", "curl-i-502-html"])
def test_tail_names_an_html_error_page_as_show_does(data: bytes) -> None:
    show, tail = _run("show", "-", data=data), _run("tail", data=data)
    assert "html-page" in show and "unknown-field" not in show
    assert _findings(tail) == _findings(show), (show, tail)  # the same findings, in the same words
    assert "unknown-field" not in tail and "unterminated-final-frame" not in tail and "content-type" not in tail
    assert tail.splitlines()[0] == show.splitlines()[0] == "not a stream · an HTML page"


def test_tail_names_an_html_page_however_slowly_it_comes() -> None:
    """The page's first bytes (`<ht`) cannot tell yet: held until they can, never folded as SSE."""
    head, body = NGINX_502.split(b"\r\n\r\n", 1)
    writer = ("import sys, time\n"
              "for piece in sys.argv[1:]:\n"
              "    sys.stdout.buffer.write(bytes.fromhex(piece)); sys.stdout.buffer.flush(); time.sleep(0.3)\n")
    pieces = [head + b"\r\n\r\n", body[:3], body[3:40], body[40:]]
    feeder = subprocess.Popen([sys.executable, "-c", writer, *(piece.hex() for piece in pieces)],
                              stdout=subprocess.PIPE)
    try:
        done = subprocess.run([*STREAMFOLD, "tail"], stdin=feeder.stdout, capture_output=True, env=ENV, timeout=60)
    finally:
        assert feeder.stdout is not None
        feeder.stdout.close()
        feeder.wait(timeout=30)
    out = done.stdout.decode()
    assert done.returncode == 0 and "html-page" in out and "unknown-field" not in out, out


# -- tool calls numbered as show numbers them -------------------------------------------------

def _anthropic_text_then_two_tools() -> bytes:
    events = [
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [],
            "stop_reason": None, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": "Checking both cities."}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    ]
    for index, city in ((1, "Oslo"), (2, "Lima")):
        events += [
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": {
                "type": "tool_use", "id": f"toolu_{index}", "name": "get_weather", "input": {}}}),
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps({"city": city})}}),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]
    events += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"},
                                  "usage": {"output_tokens": 30}}),
               ("message_stop", {"type": "message_stop"})]
    return b"".join(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events)


@pytest.mark.parametrize("data", [_anthropic_text_then_two_tools(),
                                  (CAPTURES / "bedrock" / "converse-reasoning-tool-call.bin").read_bytes()],
                         ids=["anthropic-text-then-two-tools", "bedrock-reasoning-then-tool"])
def test_tail_numbers_tool_calls_as_show_json_and_blame_do(data: bytes) -> None:
    result = json.loads(_run("show", "--json", "-", data=data))
    calls = [(call["index"], call["name"], call["parsed"]) for call in result["choices"][0]["tool_calls"]]
    assert [index for index, _, _ in calls] == list(range(len(calls)))
    assert any(call["key"] != call["index"] for call in result["choices"][0]["tool_calls"])  # the trap is there
    tail = _run("tail", data=data)
    shown = [(int(number), name, json.loads(arguments)) for number, name, arguments
             in re.findall(r"^\[tool call (\d+) (\S+): (.*)\]$", tail, re.MULTILINE)]
    assert shown == calls, tail
    show = _run("show", "-", data=data)
    assert re.findall(r"^tool call (\d+)", show, re.MULTILINE) == [str(index) for index, _, _ in calls]
