"""Small things a first session hits: `show -` on a terminal says it is reading stdin and how to
end it (and says nothing when stdin is a pipe); `export` of an HTML page is one clear line."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INPUTS = ROOT / "tests" / "inputs"
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1", "COLUMNS": "200"}
PLAIN = ROOT / "examples" / "openai-plain-text.sse"


@pytest.mark.skipif(sys.platform == "win32", reason="a pty is POSIX")
def test_show_dash_on_a_terminal_says_it_reads_stdin_and_how_to_end_it() -> None:
    pty = pytest.importorskip("pty")
    leader, follower = pty.openpty()
    done = subprocess.Popen([sys.executable, "-m", "streamfold", "-q", "show", "-"], stdin=follower,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    os.close(follower)
    try:
        assert done.stderr is not None
        said = b""
        deadline = time.monotonic() + 30
        while b"\n" not in said and time.monotonic() < deadline:  # said before any input: it waits for it
            said += os.read(done.stderr.fileno(), 200)
        assert said == "streamfold: reading stdin… (Ctrl-D to end)\n".encode()
        for line in PLAIN.read_bytes().splitlines(keepends=True):
            os.write(leader, line)
        os.write(leader, b"\x04")  # Ctrl-D on an empty line: end of input
        out, rest = done.communicate(timeout=60)
    finally:
        os.close(leader)
        if done.poll() is None:
            done.kill()
    assert done.returncode == 0 and out.decode().startswith("Server-sent events") and rest == b""


def test_show_dash_from_a_pipe_says_nothing_on_stderr() -> None:
    done = subprocess.run([sys.executable, "-m", "streamfold", "-q", "show", "-"], input=PLAIN.read_bytes(),
                          capture_output=True, env=ENV, timeout=60, check=False)
    assert done.returncode == 0 and done.stderr == b"" and done.stdout


@pytest.mark.parametrize("name", ["curl-i-502-html.txt", "html"])
def test_export_of_an_html_page_is_one_clear_line(name: str, tmp_path: Path) -> None:
    path = INPUTS / name
    if name == "html":
        path = tmp_path / "502.html"
        path.write_text("<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head>"
                        "<body><h1>502 Bad Gateway</h1><hr><center>nginx</center></body></html>")
    done = subprocess.run([sys.executable, "-m", "streamfold", "export", str(path)], capture_output=True, text=True,
                          env=ENV, timeout=60, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == ('streamfold: the body is an HTML page (title "502 Bad Gateway"), not a stream: a proxy, '
                           "a gateway, a login page or the wrong URL answered instead of the model; nothing was "
                           "folded\n")
