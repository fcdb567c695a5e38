"""The CLI, through click's runner and as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

import streamfold
from streamfold.cli import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(*args: str, input: bytes | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), input=input, env={"COLUMNS": "100", "NO_COLOR": "1"})
    return result.exit_code, result.stdout, result.stderr


def test_show_renders_reply_tool_calls_usage_and_finish() -> None:
    code, out, _ = run("show", str(EXAMPLES / "openai-tool-calls.sse"))
    assert code == 0
    assert "I'll check the current weather in both cities." in out
    assert "tool call 0 get_weather" in out and '"location": "Lisbon, Portugal"' in out
    assert "finish: tool_calls" in out and "usage: input 142, output 58" in out


def test_show_keeps_reasoning_apart_from_the_reply() -> None:
    code, out, _ = run("show", str(EXAMPLES / "openai-reasoning.sse"))
    reasoning_at, reply_at = out.index("reasoning\n"), out.index("The sky looks blue")
    assert code == 0 and reasoning_at < reply_at
    assert "Rayleigh scattering" in out[reasoning_at:reply_at]


def test_show_lists_findings_with_frame_and_line() -> None:
    code, out, _ = run("show", str(EXAMPLES / "openai-broken.sse"))
    assert code == 0
    assert "invalid-json (frame 17, line 35)" in out
    assert "glued-frames (frame 32, line 65)" in out
    assert "missing-terminal" in out and "incomplete" in out


def test_show_json_is_the_contract() -> None:
    path = EXAMPLES / "openai-broken.sse"
    code, out, _ = run("show", "--json", str(path))
    assert code == 0
    assert json.loads(out) == json.loads(json.dumps(streamfold.fold(path.read_bytes()).to_dict()))


def test_stdin_dash() -> None:
    code, out, _ = run("show", "--json", "-", input=(EXAMPLES / "openai-plain-text.sse").read_bytes())
    assert code == 0 and json.loads(out)["complete"] is True


def test_frames_table_and_jsonl() -> None:
    path = EXAMPLES / "openai-broken.sse"
    code, out, _ = run("frames", str(path))
    assert code == 0
    assert 'content "Canberra"' in out and "invalid" in out and "glued" in out
    code, out, _ = run("frames", "--jsonl", str(path))
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == len(streamfold.fold(path.read_bytes()).frames)
    assert rows[17]["kind"] == "invalid" and "not valid JSON" in rows[17]["summary"]
    assert rows[17]["line"] == 35


def test_unreadable_input_is_one_line_and_exit_2() -> None:
    code, out, err = run("show", "/no/such/file.sse")
    assert code == 2 and out == ""
    assert err.strip() == "streamfold: cannot read '/no/such/file.sse': No such file or directory"


def test_usage_error_exit_2() -> None:
    code, _, _ = run("show", "--dialect", "nope", str(EXAMPLES / "openai-plain-text.sse"))
    assert code == 2


def test_python_dash_m_in_a_real_subprocess() -> None:
    done = subprocess.run([sys.executable, "-m", "streamfold", "show", "--json", str(EXAMPLES / "openai-tool-calls.sse")],
                          capture_output=True, check=True)
    assert json.loads(done.stdout)["choices"][0]["finish_reason"] == "tool_calls"
    bad = subprocess.run([sys.executable, "-m", "streamfold", "show", "/no/such"], capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def test_export_prints_the_non_streaming_object() -> None:
    code, out, err = run("export", str(EXAMPLES / "openai-tool-calls.sse"))
    exported = json.loads(out)
    assert code == 0 and err == ""
    assert exported["object"] == "chat.completion"
    assert exported["choices"][0]["finish_reason"] == "tool_calls"
    assert len(exported["choices"][0]["message"]["tool_calls"]) == 2


def test_export_of_an_incomplete_stream_warns() -> None:
    code, out, err = run("export", str(EXAMPLES / "openai-broken.sse"))
    assert code == 0 and json.loads(out)["choices"][0]["finish_reason"] is None
    assert "incomplete" in err


def test_export_without_a_dialect_is_exit_2() -> None:
    code, _, err = run("export", "-", input=b'data: {"foo": 1}\n\n')
    assert code == 2 and "export is not available" in err
