"""blame, check, diff and show --annotate: pointing at the frame at fault."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from streamfold import fold
from streamfold.cli import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TOOLS, PLAIN, BROKEN, REASONING = (EXAMPLES / f"openai-{name}.sse" for name in ("tool-calls", "plain-text", "broken", "reasoning"))


def run(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), input=input, env={"COLUMNS": "200", "NO_COLOR": "1"})
    return result.exit_code, result.stdout, result.stderr


def test_blame_names_frame_line_and_offset() -> None:
    code, out, _ = run("blame", str(TOOLS), "--offset", "12")
    frame = fold(TOOLS.read_bytes()).frames[3]
    assert code == 0
    assert f"character 12 'h' of choice 0 content came from frame 3, line {frame.line}, byte offset {frame.offset}" in out
    assert '"content":" the"' in out  # the frame's raw bytes
    code, out, _ = run("blame", str(TOOLS), "--field", "tool:1", "--offset", "0")
    assert code == 0 and "tool:1 came from frame" in out


def test_blame_out_of_range_and_bad_field() -> None:
    assert run("blame", str(TOOLS), "--offset", "100000")[0] == 2
    assert run("blame", str(TOOLS), "--offset", "1", "--field", "nope")[0] == 2


def test_annotate_marks_frame_boundaries() -> None:
    _, out, _ = run("show", "--annotate", str(TOOLS))
    assert "I'll¦ check¦ the¦ current¦ weather¦ in¦ both¦ cities¦." in out


def check(capture: Path, client_output: str) -> tuple[int, str]:
    code, out, _ = run("check", str(capture), "--expect", "-", input=client_output)
    return code, " ".join(out.split())  # messages wrap at the terminal width


def test_check_agrees() -> None:
    assert check(PLAIN, fold(PLAIN.read_bytes()).choices[0].content) == (0, "the client's output matches the reference")


def test_check_finds_a_dropped_frame() -> None:
    result = fold(PLAIN.read_bytes())
    start, end, frame = result.text_runs()[5]
    content = result.choices[0].content
    client = content[:start] + content[end:]
    first = next(i for i, (a, b) in enumerate(zip(content, client)) if a != b)
    code, out = check(PLAIN, client)
    assert code == 1
    assert f"content differs at character {first} (frame {frame}, line {result.frames[frame].line})" in out
    assert f"dropped frame(s) {frame}" in out


def test_check_finds_a_lost_final_frame() -> None:
    result = fold(PLAIN.read_bytes())
    start, _, frame = result.text_runs()[-1]
    code, out = check(PLAIN, result.choices[0].content[:start])
    assert code == 1 and f"lost the last frame(s) {frame}" in out


def test_check_explains_glued_frames() -> None:
    result = fold(BROKEN.read_bytes())
    glued = {d.frame for d in result.diagnostics if d.code == "glued-frames"}
    content = result.choices[0].content
    kept = "".join(content[s:e] for s, e, frame in result.text_runs() if frame not in glued)
    code, out = check(BROKEN, kept)
    assert code == 1 and "hold two JSON documents each" in out


def test_check_finds_reasoning_mixed_in() -> None:
    result = fold(REASONING.read_bytes())
    code, out = check(REASONING, (result.choices[0].reasoning or "") + result.choices[0].content)
    assert code == 1 and "mixed the reasoning into the reply" in out


def test_check_finds_tool_arguments_merged_across_calls() -> None:
    result = fold(TOOLS.read_bytes())
    calls = result.choices[0].tool_calls
    client = {"role": "assistant", "content": result.choices[0].content, "tool_calls": [
        {"id": calls[0].id, "type": "function",
         "function": {"name": calls[0].name, "arguments": calls[0].arguments + calls[1].arguments}}]}
    code, out = check(TOOLS, json.dumps(client))
    assert code == 1 and "merged separate calls' arguments" in out


def test_check_accepts_a_chat_completion_object() -> None:
    exported = fold(TOOLS.read_bytes()).export()
    assert check(TOOLS, json.dumps(exported))[0] == 0


def test_check_names_a_dropped_signature_and_its_frame() -> None:
    """Opaque state: a Message whose thinking block lost its signature fails, naming the frame that carried it."""
    capture = Path(__file__).resolve().parents[1] / "captures" / "anthropic" / "a6-redacted-thinking.sse"
    result = fold(capture.read_bytes())
    message = result.export()
    assert check(capture, json.dumps(message))[0] == 0
    del message["content"][0]["signature"]
    code, out = check(capture, json.dumps(message))
    frame = next(f for f in result.frames if f.data and "signature_delta" in f.data)
    assert code == 1
    assert f"content[0].signature (thinking signature) is missing (frame {frame.index}, line {frame.line})" in out
    assert "dropped the thinking signature" in out


def test_diff_two_captures_and_a_response(tmp_path: Path) -> None:
    exported = fold(PLAIN.read_bytes()).export()
    same = tmp_path / "response.json"
    same.write_text(json.dumps(exported))
    assert run("diff", str(PLAIN), str(same))[0] == 0
    exported["choices"][0]["message"]["content"] = "Something else."
    same.write_text(json.dumps(exported))
    code, out, _ = run("diff", str(PLAIN), str(same))
    assert code == 1 and "differs content" in out
    code, out, _ = run("diff", str(PLAIN), str(BROKEN))
    assert code == 1 and "changed frame A1 ≠ B1" in out and "differs content" in out
    assert run("diff", str(PLAIN), str(PLAIN))[0] == 0


def _round_trips(path: Path) -> bool:
    """A complete capture of a dialect that reads its own non-streaming replies back."""
    from streamfold.dialects import spec_of

    result = fold(path.read_bytes())
    return result.complete and spec_of(result.dialect).reads_responses


ROUND_TRIPS = sorted(p for p in (Path(__file__).resolve().parents[1] / "captures").rglob("*")
                     if p.is_file() and not p.name.endswith((".expect.json", ".md")) and _round_trips(p))
assert len(ROUND_TRIPS) > 40


@pytest.mark.parametrize("path", ROUND_TRIPS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_stream_and_its_own_export_read_as_the_same_reply(path: Path) -> None:
    # read_response is export's inverse: whatever a dialect exports, it reads back to the same facts.
    from streamfold.services.diff import diff_results, summary_of_response, summary_of_result

    result = fold(path.read_bytes())
    summary = summary_of_response(result.export())
    ours = summary_of_result(result)
    # A reply may tell fewer usage fields than the stream did (TGI's /generate details have no input_length).
    differences = [d for d in diff_results(ours, summary) if d[0] != "usage" or (None not in d[1:]
                   and any(d[1].get(k) != v for k, v in d[2].items() if v is not None and d[1].get(k) is not None))]
    assert differences == [], differences
