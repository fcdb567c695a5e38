"""Off a terminal (a pipe, a file) the CLI writes the reply whole: `show -q` byte for byte, so
`check --expect` accepts what it wrote; `show` and `frames` never wrap or cut. On a terminal
(a real pty here) rich lays it out to the width, as before; `frames --wide` prints rows whole."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
URL = "https://docs.example.test/guides/streaming/" + "chunked-transfer-" * 6 + "encoding?section=server-sent-events"
LONG_LINE = " ".join(f"word{index:03d}" for index in range(38))[:300]
# A reply with what a terminal layout changes: a 300-character line, a URL past 80 columns, a tab,
# blanks at a line's end, a carriage return, and no newline at its end.
REPLY = f"Read {URL} first.\n{LONG_LINE}\n\tindented  \r\nlast line"
ARGUMENTS = json.dumps({"url": URL, "note": LONG_LINE})


def _chunk(delta: dict[str, object], finish: str | None = None) -> str:
    return "data: " + json.dumps({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
                                  "model": "gpt-4.1-mini", "choices": [{"index": 0, "delta": delta,
                                                                        "finish_reason": finish}]}) + "\n\n"


def capture(tmp_path: Path, *, tools: bool = False) -> Path:
    pieces = [REPLY[index : index + 37] for index in range(0, len(REPLY), 37)]
    body = _chunk({"role": "assistant", "content": ""}) + "".join(_chunk({"content": piece}) for piece in pieces)
    if tools:
        body += _chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                        "function": {"name": "fetch", "arguments": ARGUMENTS}}]})
    body += _chunk({}, "tool_calls" if tools else "stop") + "data: [DONE]\n\n"
    path = tmp_path / ("tools.sse" if tools else "reply.sse")
    path.write_text(body)
    return path


def streamfold(*args: str, stdout: int | None = subprocess.PIPE) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1", "COLUMNS": "80"}
    return subprocess.run([sys.executable, "-m", "streamfold", *args], stdout=stdout, stderr=subprocess.PIPE,
                          env=env, timeout=60, check=False)


def on_a_terminal(*args: str) -> str:
    """What the program writes to a real terminal (a pty) 80 columns wide."""
    pty = pytest.importorskip("pty")
    leader, follower = pty.openpty()
    done = subprocess.Popen([sys.executable, "-m", "streamfold", *args], stdout=follower, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1", "COLUMNS": "80"})
    os.close(follower)
    out = bytearray()
    while True:
        try:
            read = os.read(leader, 65536)
        except OSError:  # Linux: EIO once the program has closed the terminal
            break
        if not read:
            break
        out += read
    os.close(leader)
    assert done.wait(timeout=60) == 0
    assert done.stderr is not None
    done.stderr.close()
    # NO_COLOR keeps bold and dim: what is measured here is the text.
    return re.sub(r"\x1b\[[0-9;]*m", "", out.decode().replace("\r\n", "\n"))


def test_show_quiet_piped_is_the_reply_byte_for_byte(tmp_path: Path) -> None:
    done = streamfold("-q", "show", str(capture(tmp_path)))
    assert done.returncode == 0 and done.stdout == REPLY.encode()
    shown = json.loads(streamfold("show", "--json", str(capture(tmp_path))).stdout)
    assert done.stdout.decode() == shown["choices"][0]["content"]


def test_check_accepts_the_file_show_quiet_wrote(tmp_path: Path) -> None:
    path = capture(tmp_path)
    written = tmp_path / "reply.txt"
    with written.open("wb") as out:
        assert streamfold("-q", "show", str(path), stdout=out.fileno()).returncode == 0
    assert written.read_bytes() == REPLY.encode()
    checked = streamfold("check", str(path), "--expect", str(written))
    assert checked.returncode == 0, checked.stdout
    assert b"matches the reference" in checked.stdout


def test_show_piped_neither_wraps_nor_cuts_the_reply_or_the_tool_arguments(tmp_path: Path) -> None:
    out = streamfold("show", str(capture(tmp_path, tools=True))).stdout.decode()
    assert f"Read {URL} first.\n{LONG_LINE}\n\tindented\n" in out  # whole lines, the tab kept
    assert f'    "url": "{URL}",\n    "note": "{LONG_LINE}"\n' in out
    quiet = streamfold("-q", "show", str(capture(tmp_path, tools=True))).stdout.decode()
    assert quiet.startswith(REPLY + "\ntool call 0 fetch  call_1\n") and f'"url": "{URL}"' in quiet


@pytest.mark.skipif(sys.platform == "win32", reason="a pty is POSIX")
def test_on_a_terminal_the_reply_is_still_laid_out_to_its_width(tmp_path: Path) -> None:
    out = on_a_terminal("show", str(capture(tmp_path)))
    assert LONG_LINE not in out and URL not in out  # wrapped at 80 columns, as before
    assert max(len(line) for line in out.splitlines()) <= 80
    assert URL not in on_a_terminal("-q", "show", str(capture(tmp_path)))


def test_frames_piped_prints_whole_summaries(tmp_path: Path) -> None:
    path = str(capture(tmp_path, tools=True))
    rows = streamfold("frames", path).stdout.decode().splitlines()[1:]
    summaries = [json.loads(line)["summary"] for line in streamfold("frames", "--jsonl", path).stdout.splitlines()]
    assert len(rows) == len(summaries) and all(row.endswith(summary) for row, summary in zip(rows, summaries))
    assert max(len(row) for row in rows) > 80


@pytest.mark.skipif(sys.platform == "win32", reason="a pty is POSIX")
def test_frames_on_a_terminal_fits_its_width_unless_wide(tmp_path: Path) -> None:
    path = str(capture(tmp_path, tools=True))
    fitted = on_a_terminal("frames", path)
    assert max(len(line) for line in fitted.splitlines()) <= 80
    wide = on_a_terminal("frames", "--wide", path)
    assert wide == streamfold("frames", path).stdout.decode() != fitted
