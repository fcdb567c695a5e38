"""What `streamfold record` prints: the exchange line and the live lines rendered from values,
the live block drawn on a stream as a terminal would show it, and the real command in a
subprocess, on a pipe (one line per exchange, no escapes) and on a pty (a live line while the
upstream holds the stream, replaced by the finished line)."""

from __future__ import annotations

import fcntl
import io
import os
import re
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from proxy_rig import read_line, record_process, stop
from proxy_upstream import OPENAI, Upstream
from streamfold.proxy.console import Console, InFlight, exchange_line, live_lines
from streamfold.store import Summary, get_exchange


def summary(*, complete: bool = True, findings: tuple[str, ...] = (), ttft: float | None = 0.2104,
            finish: str | None = "stop", ttfb: float | None = 0.1804) -> Summary:
    return Summary(body_bytes=900, read_count=14, transport="sse", dialect="openai-chat", complete=complete,
                   ttft=ttft, duration=1.0, frames=14, finish_reason=finish, findings=findings, ttfb=ttfb)


def test_the_exchange_line_says_each_thing_once() -> None:
    path = "/v1/chat/completions"
    assert exchange_line("POST", path, 200, "complete", summary()) == (
        "POST /v1/chat/completions 200 openai-chat complete ttfb=0.18s ttft=0.21s frames=14 finish=stop findings=0")
    cut = exchange_line("POST", path, 200, "client-cut", summary(complete=False, findings=("stream-truncated",),
                                                                   finish=None))
    assert cut == ("POST /v1/chat/completions 200 openai-chat incomplete (client cut) ttfb=0.18s ttft=0.21s frames=14 "
                   "finish=- findings=1 [stream-truncated]")
    upstream = exchange_line("GET", "/reset", 200, "upstream-cut", summary(complete=False, ttft=0.0004, ttfb=None),
                             "peer closed connection")
    assert upstream.startswith("GET /reset 200 openai-chat incomplete ttfb=- ttft=0.4ms ")
    assert upstream.endswith("findings=0 upstream cut: peer closed connection")
    failed = exchange_line("POST", "/v1/x", 502, "failed", None, "could not reach http://127.0.0.1:9: refused")
    assert failed == "POST /v1/x 502 failed: could not reach http://127.0.0.1:9: refused"
    for line in (cut, upstream, failed):
        assert line.count("cut") <= 1 and "complete (complete)" not in line


def test_many_findings_are_named_up_to_three_and_counted() -> None:
    line = exchange_line("POST", "/v1/m", 200, "complete", summary(findings=("a-1", "b-2", "c-3", "d-4", "e-5")))
    assert line.endswith("findings=5 [a-1, b-2, c-3, +2]")


def test_without_a_summary_the_line_says_how_it_ended() -> None:
    assert exchange_line("GET", "/v1/models", 200, "complete", None) == "GET /v1/models 200 complete"
    assert exchange_line("GET", "/x", 200, "client-cut", None) == "GET /x 200 client cut"


def test_control_characters_never_reach_the_terminal() -> None:
    line = exchange_line("GET", "/a\x1b[2Jb", 200, "upstream-cut", None, "bad\r\nthing\x07")
    assert "\x1b" not in line and "\r" not in line and "\n" not in line and "\x07" not in line
    assert "\\x1b[2J" in line
    flight = InFlight("GET", "/\x1b[31mred", started=0.0)
    assert "\x1b" not in live_lines([flight], 1.0, 80)[0]


def test_live_lines_show_method_path_elapsed_bytes_and_reads_oldest_first() -> None:
    older = InFlight("POST", "/v1/chat/completions", started=10.0, status=200, bytes=12_400, reads=57)
    newer = InFlight("POST", "/v1/messages", started=12.5)
    assert live_lines([newer, older], 13.2, 120) == ["> POST /v1/chat/completions 200 3.20s 12.4 KB in 57 reads",
                                                      "> POST /v1/messages waiting 0.70s"]
    narrow = live_lines([InFlight("GET", "/" + "x" * 200, started=0.0)], 1.0, 40)[0]
    assert len(narrow) < 40 and narrow.endswith("…")
    assert live_lines([], 1.0, 80) == []


class Screen:
    """The few escapes the console writes, applied as a terminal would: text, CR, LF, cursor up, erase down."""

    def __init__(self) -> None:
        self.rows: list[str] = [""]
        self.row = self.col = 0

    def feed(self, text: str) -> None:
        for token in re.findall(r"\x1b\[\d*[A-Za-z]|\r|\n|[^\x1b\r\n]+", text):
            if token == "\r":
                self.col = 0
            elif token == "\n":
                self.row += 1
                self.col = 0  # a pty's ONLCR sends CR LF; a StringIO only LF: both start a new line
                if self.row == len(self.rows):
                    self.rows.append("")
            elif token.startswith("\x1b["):
                count = int(token[2:-1] or "1")
                if token.endswith("A"):
                    self.row = max(0, self.row - count)
                elif token.endswith("J"):
                    self.rows[self.row] = self.rows[self.row][:self.col]
                    del self.rows[self.row + 1:]
            else:
                line = self.rows[self.row].ljust(self.col)
                self.rows[self.row] = line[:self.col] + token + line[self.col + len(token):]
                self.col += len(token)

    def lines(self) -> list[str]:
        return [row for row in self.rows if row]


def test_the_live_block_stays_below_the_finished_lines_and_a_finished_line_takes_its_place() -> None:
    out = io.StringIO()
    console = Console(out=out, live=True, redraw_seconds=0.02)
    console.line("streamfold record: listening on http://127.0.0.1:1 -> http://up")
    first = console.begin("POST", "/v1/chat/completions")
    second = console.begin("GET", "/v1/models")
    first.status, first.bytes, first.reads = 200, 2048, 3
    wait_for(lambda: len(screen_of(out).lines()) == 3)
    screen = screen_of(out)
    assert screen.lines()[0].startswith("streamfold record: listening")
    assert screen.lines()[1].startswith("> POST /v1/chat/completions 200 ") and "2.0 KB in 3 reads" in screen.lines()[1]
    assert screen.lines()[2].startswith("> GET /v1/models waiting ")
    console.finish(first, "POST /v1/chat/completions 200 openai-chat complete")
    lines = screen_of(out).lines()
    assert lines[1] == "POST /v1/chat/completions 200 openai-chat complete"
    assert len(lines) == 3 and lines[2].startswith("> GET /v1/models")
    console.finish(second, "GET /v1/models 200 complete")
    console.close()
    assert screen_of(out).lines()[1:] == ["POST /v1/chat/completions 200 openai-chat complete",
                                          "GET /v1/models 200 complete"]


def test_without_a_terminal_nothing_but_the_lines_is_written() -> None:
    lines: list[str] = []
    out = io.StringIO()
    console = Console(lines.append, out=out, live=False, redraw_seconds=0.01)
    flight = console.begin("GET", "/hold")
    time.sleep(0.05)
    console.finish(flight, "GET /hold 200 complete")
    console.close()
    assert lines == ["GET /hold 200 complete"] and out.getvalue() == ""


def screen_of(out: io.StringIO) -> Screen:
    screen = Screen()
    screen.feed(out.getvalue())
    return screen


def wait_for(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)



LISTENING = re.compile(r"^streamfold record: listening on (http://127\.0\.0\.1:(\d+)) -> (\S+)$")


def test_the_command_on_a_pipe_prints_the_url_first_then_one_plain_line_per_exchange(
        upstream: tuple[Upstream, str], tmp_path: Path) -> None:
    _, target = upstream
    db = str(tmp_path / "piped.sqlite")
    process = record_process(target, db, subprocess.PIPE)
    try:
        assert process.stdout is not None
        first = read_line(process.stdout.fileno())
        match = LISTENING.match(first)
        assert match and match.group(3) == target, first
        response = httpx.post(f"{match.group(1)}/v1/chat/completions", content=b'{"stream": true}')
        assert response.status_code == 200 and response.content == OPENAI
        line = read_line(process.stdout.fileno())
        assert line.startswith("POST /v1/chat/completions 200 openai-chat complete ttfb=")
        assert re.search(r" frames=\d+ finish=\S+ findings=\d+", line) and "\x1b" not in line
    finally:
        err = stop(process)
    assert get_exchange(db).body == OPENAI, err



class PtyReader:
    """Everything the process writes to the pty, collected on a thread and applied to a `Screen`."""

    def __init__(self, fd: int) -> None:
        self.fd, self.raw = fd, b""
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            try:
                data = os.read(self.fd, 4096)
            except OSError:  # EIO once the process closed the pty's other end
                return
            if not data:
                return
            self.raw += data

    def screen(self) -> Screen:
        screen = Screen()
        screen.feed(self.raw.decode("utf-8", "replace"))
        return screen


def test_the_command_on_a_terminal_shows_a_live_line_while_the_stream_is_held(
        upstream: tuple[Upstream, str], tmp_path: Path) -> None:
    app, target = upstream
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    process = record_process(target, str(tmp_path / "pty.sqlite"), slave)
    os.close(slave)
    reader = PtyReader(master)
    got: list[bytes] = []
    try:
        wait_for(lambda: bool(reader.screen().lines()) and LISTENING.match(reader.screen().lines()[0]) is not None)
        match = LISTENING.match(reader.screen().lines()[0])
        assert match is not None
        client = threading.Thread(target=lambda: got.append(httpx.get(f"{match.group(1)}/hold").content))
        client.start()
        wait_for(lambda: any(line.startswith("> GET /hold 200 ") for line in reader.screen().lines()))
        live = next(line for line in reader.screen().lines() if line.startswith("> GET /hold"))
        assert re.fullmatch(r"> GET /hold 200 \S+ \d+ B in 1 read", live), live
        wait_for(lambda: b"\x1b[1A\x1b[J" in reader.raw)  # redrawn in place, about 4 times a second
        assert not app.release.is_set()
        app.release.set()
        client.join(10)
        wait_for(lambda: any(line.startswith("GET /hold 200 openai-chat complete")
                             for line in reader.screen().lines()))
        time.sleep(0.6)  # two redraws: the live line must not come back
        lines = reader.screen().lines()
        assert not any(line.startswith(">") for line in lines), lines
        assert len(lines) == 2 and lines[1].startswith("GET /hold 200 openai-chat complete ttfb=")
    finally:
        stop(process)
        reader.thread.join(5)
        os.close(master)
    assert got == [OPENAI]
