"""Times that say which clock they are on, and stops that say what they kept (issue 21).

TTFB (to the first byte of the body) and TTFT (to the first text) are measured from the request
the same way by `record`, by `show` of what it stored, and by `tail` reading a pipe; a file has
no arrival times unless it carries them. `record` stopped by Ctrl-C says how many exchanges went
into which store; `tail --save FILE` keeps the bytes it read, exactly, however it stops."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from proxy_rig import SOURCES, as_in_the_foreground, read_line, record_process, serving, stop
from proxy_upstream import OPENAI, Upstream, frames

ROOT = Path(__file__).resolve().parents[2]
INPUTS = ROOT / "tests" / "inputs"
PLAIN = (ROOT / "examples" / "openai-plain-text.sse").read_bytes()
ENV = {**os.environ, "PYTHONPATH": SOURCES, "NO_COLOR": "1", "COLUMNS": "300"}
STREAMFOLD = [sys.executable, "-m", "streamfold"]
LISTENING = re.compile(r"^streamfold record: listening on (http://127\.0\.0\.1:\d+) -> \S+$")
# The upstream's /hold sends its first frame (the role, no text) at once, then waits this long for the text.
DELAY = 1.5

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs SIGINT and select on pipes")


def _release_after(upstream: Upstream, seconds: float) -> threading.Thread:
    """Let /hold go on `seconds` after the request reached the upstream (a busy machine may take its
    time to send it: the wait is the server's, counted from when it has the request)."""
    def release() -> None:
        deadline = time.monotonic() + 60
        while not upstream.requests and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(seconds)
        upstream.release.set()

    thread = threading.Thread(target=release, daemon=True)
    thread.start()
    return thread


def _seconds(text: str) -> float:
    """`0.4ms`, `12ms`, `1.52s` (record's line) or `412 ms`, `1.52 s` (show's and tail's) in seconds."""
    number, unit = re.fullmatch(r"([\d.]+) ?(ms|s)", text).groups()  # type: ignore[union-attr]
    return float(number) / (1000 if unit == "ms" else 1)


def test_record_and_show_measure_ttfb_and_ttft_from_the_request(upstream: tuple[Upstream, str],
                                                                 tmp_path: Path) -> None:
    app, target = upstream
    db = str(tmp_path / "timed.sqlite")
    process = record_process(target, db, subprocess.PIPE)
    try:
        assert process.stdout is not None
        proxy = LISTENING.match(read_line(process.stdout.fileno()))
        assert proxy is not None
        timer = _release_after(app, DELAY)
        assert httpx.get(f"{proxy.group(1)}/hold", timeout=30).content == OPENAI
        timer.join()
        line = read_line(process.stdout.fileno())
    finally:
        err = stop(process)
    said = re.search(r" ttfb=(\S+) ttft=(\S+) ", line)
    assert said is not None, line
    ttfb, ttft = _seconds(said.group(1)), _seconds(said.group(2))
    # The role frame came at once, the text DELAY later: TTFT holds both, counted from the request.
    assert ttft >= DELAY and ttft - ttfb >= DELAY / 2 and ttft < DELAY + 10, line

    # `show` of the stored exchange: the same two numbers, under the same names, on the same clock.
    shown = subprocess.run([*STREAMFOLD, "show", "--json", f"{db}#1"], capture_output=True, env=ENV, timeout=60)
    timing = json.loads(shown.stdout)["timing"]
    assert timing["origin"] == "request" and round(timing["ttft"], 2) == round(ttft, 2)
    assert abs(timing["ttfb"] - ttfb) < 0.01 and timing["first_text"] == pytest.approx(timing["ttft"] - timing["ttfb"])
    text = subprocess.run([*STREAMFOLD, "show", f"{db}#1"], capture_output=True, env=ENV, timeout=60).stdout.decode()
    assert re.search(r"TTFB \S+ m?s · TTFT \d\.\d\d s · .*\(times from the request\)", text), text
    assert "1 exchange recorded" in err, err


def test_tail_of_a_piped_client_measures_ttft_from_the_request_too() -> None:
    """A client and tail started together, as a shell starts `curl … | streamfold tail`."""
    app = Upstream()
    client = ("import sys, httpx\n"
              "with httpx.stream('GET', sys.argv[1], timeout=30) as response:\n"
              "    for piece in response.iter_raw():\n"
              "        sys.stdout.buffer.write(piece); sys.stdout.buffer.flush()\n")
    with serving(app) as target:
        read_end, write_end = os.pipe()
        tail = subprocess.Popen([*STREAMFOLD, "tail"], stdin=read_end, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=ENV)
        curl = subprocess.Popen([sys.executable, "-c", client, f"{target}/hold"], stdout=write_end, env=ENV)
        os.close(read_end)
        os.close(write_end)
        timer = _release_after(app, DELAY)
        try:
            out, errors = tail.communicate(timeout=60)
        finally:
            timer.join()
            app.release.set()
            curl.wait(timeout=30)
    text = out.decode()
    assert tail.returncode == 0, errors
    said = re.search(r"TTFB (\S+ m?s) · TTFT (\S+ m?s) · .*\(times from tail's start", text)
    assert said is not None, text
    ttfb, ttft = _seconds(said.group(1)), _seconds(said.group(2))
    # The role frame came as soon as the client had its answer, the text DELAY later: TTFT holds both
    # (the client's reads on a busy machine blur the gap between them, not the order).
    assert ttft >= DELAY and ttft - ttfb >= DELAY / 2 and ttft < DELAY + 10, text


def test_a_file_has_no_arrival_times_unless_it_carries_them() -> None:
    with (ROOT / "examples" / "openai-plain-text.sse").open("rb") as source:
        plain = subprocess.run([*STREAMFOLD, "tail", "--stall", "5"], stdin=source, capture_output=True, env=ENV,
                               timeout=60).stdout.decode()
    assert "timing ─" not in plain and "TTFT" not in plain and "duration" not in plain and " over 0.00 s" not in plain
    assert "from a file, all at once: a file has no arrival times" in plain

    with (INPUTS / "timestamped.log").open("rb") as source:
        log = subprocess.run([*STREAMFOLD, "tail", "--stall", "5"], stdin=source, capture_output=True, env=ENV,
                             timeout=60).stdout.decode()
    # The log's own clock: a duration from its timestamps, said to be theirs, and no second clock beside it.
    assert "first text 412 ms after the first byte · duration 2.57 s" in log, log
    assert "the input does not say when the request was sent" in log and "the times above are the file's own" in log
    assert " over 0.00 s" not in log and "TTFB" not in log


# -- stops that say what they kept ------------------------------------------------------------

def test_record_stopped_with_nothing_recorded_says_so(upstream: tuple[Upstream, str], tmp_path: Path) -> None:
    _, target = upstream
    db = tmp_path / "empty.sqlite"
    process = record_process(target, str(db), subprocess.PIPE)
    assert process.stdout is not None
    read_line(process.stdout.fileno())
    err = stop(process)
    assert f"streamfold record: stopped; no exchange was recorded (the store is {db})" in err, err


def test_record_stopped_by_ctrl_c_says_how_many_exchanges_went_where(upstream: tuple[Upstream, str],
                                                                     tmp_path: Path) -> None:
    _, target = upstream
    db = tmp_path / "two.sqlite"
    process = record_process(target, str(db), subprocess.PIPE)
    try:
        assert process.stdout is not None
        proxy = LISTENING.match(read_line(process.stdout.fileno()))
        assert proxy is not None
        for _ in range(2):
            assert httpx.post(f"{proxy.group(1)}/v1/chat/completions", content=b"{}").status_code == 200
            read_line(process.stdout.fileno())
    finally:
        err = stop(process)  # SIGINT, as Ctrl-C sends
    assert f"streamfold record: stopped; 2 exchanges recorded into {db} (captures 1-2)" in err, err
    shown = subprocess.run([*STREAMFOLD, "show", f"{db}#2"], capture_output=True, env=ENV, timeout=60)
    assert shown.returncode == 0 and b"openai-chat" in shown.stdout  # the command it names works


def _saved(tmp_path: Path, data: bytes) -> tuple[int, bytes]:
    target = tmp_path / "saved.txt"
    done = subprocess.run([*STREAMFOLD, "tail", "--save", str(target)], input=data, capture_output=True, env=ENV,
                          timeout=60)
    assert f"saved the {len(data)} bytes read to {target}".encode() in done.stderr, done.stderr
    return done.returncode, target.read_bytes()


@pytest.mark.parametrize("data", [
    (INPUTS / "curl-i.txt").read_bytes(),  # curl -i: the headers are kept too, as read
    PLAIN[: len(PLAIN) // 2 + 7],  # a stream cut mid-frame
    (INPUTS / "curl-i-502-html.txt").read_bytes(),  # no stream at all
    b"",
], ids=["curl-i", "cut-mid-frame", "html-502", "nothing"])
def test_tail_save_keeps_exactly_the_bytes_it_read(tmp_path: Path, data: bytes) -> None:
    code, saved = _saved(tmp_path, data)
    assert code == 0 and saved == data


def test_tail_save_keeps_what_came_before_ctrl_c(tmp_path: Path) -> None:
    target = tmp_path / "stopped.sse"
    tail = subprocess.Popen([*STREAMFOLD, "tail", "--save", str(target)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV, preexec_fn=as_in_the_foreground)
    assert tail.stdin is not None
    pieces = frames(PLAIN)[:5]
    sent = b"".join(pieces)
    try:
        for piece in pieces:
            tail.stdin.write(piece)
            tail.stdin.flush()
        deadline = time.monotonic() + 30
        while (not target.exists() or target.stat().st_size < len(sent)) and time.monotonic() < deadline:
            time.sleep(0.05)  # written as it came: the file has it all before the stream ends
        assert target.read_bytes() == sent
        tail.send_signal(signal.SIGINT)
        out, errors = tail.communicate(timeout=30)
    finally:
        if tail.poll() is None:
            tail.kill()
            tail.communicate()
    assert tail.returncode == 130 and b"stopped by Ctrl-C" in out, errors
    assert target.read_bytes() == sent


def test_tail_save_to_a_place_it_cannot_write_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run([*STREAMFOLD, "tail", "--save", str(tmp_path / "no" / "such" / "dir" / "f")],
                          input=PLAIN, capture_output=True, env=ENV, timeout=60)
    assert done.returncode == 2 and done.stderr.decode().count("\n") == 1 and b"Traceback" not in done.stderr
