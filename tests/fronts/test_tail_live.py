"""`streamfold tail` on a live stream that hangs, through a real terminal (a pty
whose other end the test reads, as a terminal emulator would) and real pipes:
Ctrl-C shows the summary and exits 130, the status line ticks while nothing
arrives, and TTFB and TTFT count from tail's start (a piped curl's request)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLAIN = (ROOT / "examples" / "openai-plain-text.sse").read_bytes()
FRAMES = [frame + b"\n\n" for frame in PLAIN.split(b"\n\n") if frame]
TAIL = [sys.executable, "-m", "streamfold", "tail"]
ENV = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
ENV.pop("NO_COLOR", None)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a pty and SIGINT")


class Terminal:
    """tail with its stdout and stderr on a pty (its controlling terminal), its stdin a pipe the test writes."""

    def __init__(self, *options: str) -> None:
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        read_end, self.feed = os.pipe()

        def controlling_terminal() -> None:  # a session of its own, the pty its terminal: ^C reaches it
            os.setsid()
            fcntl.ioctl(1, termios.TIOCSCTTY, 0)

        self.process = subprocess.Popen([*TAIL, *options], stdin=read_end, stdout=slave, stderr=slave, env=ENV,
                                        preexec_fn=controlling_terminal)
        os.close(slave)
        os.close(read_end)
        self.seen = b""

    def write(self, data: bytes) -> None:
        os.write(self.feed, data)

    def wait_for(self, needle: bytes, timeout: float) -> float | None:
        """Read the screen until `needle` shows; the monotonic time it did, or None."""
        deadline = time.monotonic() + timeout
        while needle not in self.seen and time.monotonic() < deadline:
            if select.select([self.master], [], [], 0.05)[0]:
                try:
                    data = os.read(self.master, 65536)
                except OSError:  # EIO: tail ended and closed the terminal
                    break
                if not data:
                    break
                self.seen += data
        return time.monotonic() if needle in self.seen else None

    def finish(self) -> tuple[int, str]:
        """Close the input if still open, read the screen to the end; the exit code and what was shown."""
        with contextlib.suppress(OSError):
            os.close(self.feed)
        self.wait_for(b"\0never", 30)
        code = self.process.wait(timeout=30)
        os.close(self.master)
        return code, re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", self.seen.decode("utf-8", "replace"))


@pytest.fixture
def terminal() -> object:
    made: list[Terminal] = []

    def start(*options: str) -> Terminal:
        made.append(Terminal(*options))
        return made[-1]

    yield start
    for one in made:
        if one.process.poll() is None:
            one.process.kill()
            one.process.wait()


def test_the_status_line_ticks_during_a_stall_on_a_terminal(terminal: object) -> None:
    screen = terminal()  # type: ignore[operator]
    screen.write(b"".join(FRAMES[:4]))
    assert screen.wait_for(b"TTFT", 30), "the first frames were never shown"
    sent = time.monotonic()  # nothing more is written for a while now
    shown = screen.wait_for(b"no data for 2 s", 6)
    assert shown is not None, "the status line did not move while the stream was silent"
    assert 1.9 <= shown - sent < 4.5
    screen.write(b"".join(FRAMES[4:]))
    code, out = screen.finish()
    assert code == 0
    assert "Server-sent events keep one HTTP response open" in out and "complete" in out


def test_ctrl_c_on_a_terminal_shows_the_summary_and_exits_130(terminal: object) -> None:
    screen = terminal("--stall", "1")  # type: ignore[operator]
    screen.write(b"".join(FRAMES[:4]))
    assert screen.wait_for(b"no data for 1 s", 30), "the first frames were never shown"
    time.sleep(0.3)
    os.write(screen.master, b"\x03")  # Ctrl-C typed at the terminal: the line discipline sends SIGINT
    # Input left open until the summary shows: closing it at once would end the stream too, first or not.
    assert screen.wait_for(b"stopped by Ctrl-C", 30)
    code, out = screen.finish()
    assert code == 130
    assert "stopped by Ctrl-C before the stream ended" in out
    assert re.search(r"received \d+ bytes in 4 frames", out)
    assert "TTFT" in out and "missing-terminal" in out  # the timing and the findings of what arrived
    assert "nothing had come for" in out  # the stall that was still going on
    assert "Traceback" not in out


def test_ctrl_c_on_a_pipe_shows_the_summary_and_exits_130() -> None:
    read_end, feed = os.pipe()
    tail = subprocess.Popen(TAIL, stdin=read_end, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.close(read_end)
    assert tail.stdout is not None
    try:
        seen = b""
        for frame in FRAMES[:6]:  # fed slowly
            os.write(feed, frame)
            time.sleep(0.05)
        deadline = time.monotonic() + 30
        while b"Server-sent" not in seen and time.monotonic() < deadline:
            if select.select([tail.stdout], [], [], 0.1)[0]:
                seen += os.read(tail.stdout.fileno(), 4096)
        assert b"Server-sent" in seen, "tail showed nothing of the frames sent"
        tail.send_signal(signal.SIGINT)
        rest, errors = tail.communicate(timeout=30)
    finally:
        os.close(feed)
        if tail.poll() is None:
            tail.kill()
            tail.communicate()
    out = (seen + rest).decode()
    assert tail.returncode == 130, errors
    assert "stopped by Ctrl-C before the stream ended" in out
    assert re.search(r"received \d+ bytes in 6 frames", out)
    assert "TTFT" in out and "duration" in out and "missing-terminal" in out
    assert b"Traceback" not in errors


def test_ttfb_and_ttft_count_from_tails_start_as_from_a_request() -> None:
    """Issue 21: "ttft" was 0 ms here (from the first byte) and 0.87 s in `record` (from the request).
    A pipe's times count from tail's start, which with `curl … | streamfold tail` is the request's."""
    tail = subprocess.Popen(TAIL, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**ENV, "COLUMNS": "300"})
    assert tail.stdin is not None
    # The server takes its time to answer at all (long enough that tail has started, even on a busy machine).
    time.sleep(3.0)
    tail.stdin.write(PLAIN)  # then the reply comes at once, text in its first frames
    out, errors = tail.communicate(timeout=30)
    assert tail.returncode == 0, errors
    said = re.search(r"TTFB (\d+\.\d+) s · TTFT (\d+\.\d+) s .*\(times from tail's start", out.decode())
    assert said is not None, out.decode()
    assert 2.9 <= float(said.group(1)) <= float(said.group(2)) < 3.0 + 10  # the wait is in both


def test_the_wait_for_the_first_byte_ticks_on_a_terminal(terminal: object) -> None:
    screen = terminal()  # type: ignore[operator]
    assert screen.wait_for(b"waiting for the first byte", 30)
    screen.write(PLAIN)
    code, out = screen.finish()
    assert code == 0 and re.search(r"TTFT \d+(\.\d+)? m?s", out)
