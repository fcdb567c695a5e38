"""`show` of a long reply prints its start and end and says how much it left out (issue 11: a
500 MB capture spent ~96 s laying out a reply nobody reads in a terminal); `--full` prints it
all; `--json` and `export`, the contracts, always carry everything."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from streamfold.cli import cli
from streamfold.cli.long_text import HEAD, TAIL

LINES = 1000  # of 40 characters: 40,000 characters, more than HEAD + TAIL


def _chunk(delta: dict[str, object], finish: str | None = None) -> bytes:
    return b"data: " + json.dumps({"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [
        {"index": 0, "delta": delta, "finish_reason": finish}]}).encode() + b"\n\n"


def long_reply(tmp_path: Path, *, reasoning: bool = False) -> tuple[Path, str]:
    lines = [f"line {index:05d} of the long reply......\n" for index in range(LINES)]
    field = "reasoning_content" if reasoning else "content"
    body = b"".join(_chunk({field: line}) for line in lines) + _chunk({"content": "."} if reasoning else {}, "stop")
    path = tmp_path / "long.sse"
    path.write_bytes(body + b"data: [DONE]\n\n")
    return path, "".join(lines)


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), env={"COLUMNS": "120", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    return result.stdout


def test_a_long_reply_shows_its_head_and_tail_and_counts_what_it_left_out(tmp_path: Path) -> None:
    path, reply = long_reply(tmp_path)
    out = run("show", str(path))
    assert "line 00000 of the long reply" in out and "line 00999 of the long reply" in out
    assert "line 00600 of the long reply" not in out
    assert f"… {len(reply) - HEAD - TAIL:,} characters not shown (--full prints all)" in out
    assert reply[HEAD - 30 : HEAD] in out and reply[-TAIL : -TAIL + 30] in out
    assert "finish: stop" in out


def test_full_prints_it_all_and_json_always_does(tmp_path: Path) -> None:
    path, reply = long_reply(tmp_path)
    full = run("show", "--full", str(path))
    assert "not shown" not in full and all(f"line {index:05d} " in full for index in range(LINES))
    assert json.loads(run("show", "--json", str(path)))["choices"][0]["content"] == reply
    assert json.loads(run("export", str(path)))["choices"][0]["message"]["content"] == reply


def test_annotate_and_reasoning_are_clipped_too(tmp_path: Path) -> None:
    path, reply = long_reply(tmp_path)
    hidden = f"… {len(reply) - HEAD - TAIL:,} characters not shown"
    out = run("show", "--annotate", str(path))
    assert hidden in out and "line 00600 " not in out and "line 00999 " in out
    assert "¦" in out
    path, reasoning = long_reply(tmp_path, reasoning=True)
    out = run("show", str(path))
    assert f"… {len(reasoning) - HEAD - TAIL:,} characters not shown" in out and "line 00600 " not in out


def test_quiet_off_a_terminal_writes_the_reply_whole(tmp_path: Path) -> None:
    # `show -q > reply.txt` is what `check --expect reply.txt` reads: a clipped reply would not match.
    path, reply = long_reply(tmp_path)
    assert run("--quiet", "show", str(path)) == reply


def test_a_short_reply_is_shown_whole(tmp_path: Path) -> None:
    out = run("show", str(Path(__file__).resolve().parents[2] / "examples" / "openai-tool-calls.sse"))
    assert "not shown" not in out and '"location": "Lisbon, Portugal"' in out


def test_long_tool_arguments_are_clipped_as_sent(tmp_path: Path) -> None:
    value = json.dumps({"items": [f"item {index:05d}" for index in range(3000)]})
    frames = [_chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                      "function": {"name": "f", "arguments": ""}}]})]
    frames += [_chunk({"tool_calls": [{"index": 0, "function": {"arguments": value[i : i + 500]}}]})
               for i in range(0, len(value), 500)]
    path = tmp_path / "tool.sse"
    path.write_bytes(b"".join(frames) + _chunk({}, "tool_calls") + b"data: [DONE]\n\n")
    out = run("show", str(path))
    assert f"… {len(value) - HEAD - TAIL:,} characters not shown" in out
    assert '"item 00000"' in out and '"item 02999"' in out and '"item 02000"' not in out
    assert '"item 02000"' in run("show", "--full", str(path))
