"""`streamfold tail` with real processes: a writer that streams slowly into a
pipe, and tail's output read while the writer is still writing."""

from __future__ import annotations

import os
import selectors
import subprocess
import sys
import time
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "openai-plain-text.sse"

WRITER = r"""
import sys, time
frames = open(sys.argv[1], "rb").read().split(b"\n\n")
end = sys.argv[4].encode() if len(sys.argv) > 4 else b"\n"  # the line end to write
time.sleep(float(sys.argv[3]) if len(sys.argv) > 3 else 0)  # let the reader start first
for i, frame in enumerate(frames):
    if frame:
        sys.stdout.buffer.write(frame.replace(b"\n", end) + end + end)
        sys.stdout.buffer.flush()
    time.sleep(float(sys.argv[2]) if i == 3 else 0.01)
"""


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"], ids=["LF", "CRLF", "CR"])
def test_output_appears_before_the_writer_ends(end: str) -> None:
    # Whatever the line ends: a CR-only stream once showed nothing until 64 KiB had come, and the
    # frame a CR ends must not wait for the next byte (the writer pauses right after it).
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(EXAMPLE), "3.0", "0", end], stdout=subprocess.PIPE)
    tail = subprocess.Popen([sys.executable, "-m", "streamfold", "tail"], stdin=writer.stdout,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert writer.stdout is not None and tail.stdout is not None
    writer.stdout.close()  # tail owns the read end now
    selector = selectors.DefaultSelector()
    selector.register(tail.stdout, selectors.EVENT_READ)
    seen = b""
    deadline = time.monotonic() + 2.5  # the writer pauses 3 s after its 4th frame
    while time.monotonic() < deadline and b"Server-sent" not in seen:
        if selector.select(timeout=0.1):
            seen += os.read(tail.stdout.fileno(), 4096)
    writer_still_running = writer.poll() is None
    rest, errors = tail.communicate(timeout=30)
    writer.wait(timeout=30)
    assert b"Server-sent" in seen, "tail buffered its output"  # the first 4 frames, sent before the pause
    assert writer_still_running, "the writer ended before the output was checked"
    out = (seen + rest).decode()
    assert out.count("Server-sent events keep one HTTP response open") == 2  # typed live, then in the summary
    assert "TTFT" in out and "complete" in out
    assert tail.returncode == 0, errors


def test_reasoning_goes_apart_to_stderr_in_a_pipe_when_asked() -> None:
    reasoning = Path(__file__).resolve().parents[2] / "examples" / "openai-reasoning.sse"
    with reasoning.open("rb") as source:
        done = subprocess.run([sys.executable, "-m", "streamfold", "tail", "--reasoning", "stderr"], stdin=source,
                              capture_output=True, check=True)
    typed = done.stdout.decode().split("\n")[0]
    assert typed.startswith("The sky looks blue") and "Rayleigh" not in typed
    assert done.stderr.decode().startswith("The user asks why the sky is blue")


def test_stalls_are_reported() -> None:
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(EXAMPLE), "2.0", "1.5"], stdout=subprocess.PIPE)
    assert writer.stdout is not None
    with writer.stdout:
        done = subprocess.run([sys.executable, "-m", "streamfold", "tail", "--stall", "1"], stdin=writer.stdout,
                              capture_output=True, timeout=60)
    writer.wait(timeout=30)
    assert b"stall (frame 4" in done.stdout
