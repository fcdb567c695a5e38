"""Usage through the real program: group options after the command, one-line usage errors, --stall."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
REASONING, BROKEN = str(EXAMPLES / "openai-reasoning.sse"), str(EXAMPLES / "openai-broken.sse")


def streamfold(*args: str, stdin: str = "") -> tuple[int, str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1", "COLUMNS": "200"}
    done = subprocess.run([sys.executable, "-m", "streamfold", *args], input=stdin, capture_output=True, text=True,
                          env=env, timeout=60)
    return done.returncode, done.stdout, done.stderr


def test_group_options_work_after_the_command_too() -> None:
    before = streamfold("--quiet", "show", REASONING)
    after = streamfold("show", "--quiet", REASONING)
    assert before[0] == after[0] == 0 and before[1] == after[1]
    assert after[1].startswith("The sky looks blue") and "usage" not in after[1]
    assert streamfold("show", REASONING, "-q")[1] == before[1]
    assert streamfold("show", BROKEN, "--strict")[0] == 1
    assert streamfold("show", BROKEN)[0] == 0
    assert "\x1b[" in streamfold("show", REASONING, "--color", "always")[1]
    assert "\x1b[" not in streamfold("--color", "always", "show", REASONING, "--color", "never")[1]


@pytest.mark.parametrize(("args", "line"), [
    (["show"], "streamfold show: missing FILE (try: streamfold show --help)"),
    (["diff", "a"], "streamfold diff: missing B (try: streamfold diff --help)"),
    (["check", REASONING], "streamfold check: missing option --expect (try: streamfold check --help)"),
    (["show", "--jsn", REASONING],
     "streamfold show: unknown option --jsn; did you mean --json? (try: streamfold show --help)"),
    (["--colr", "never", "show", REASONING],
     "streamfold: unknown option --colr; did you mean --color? (try: streamfold --help)"),
    (["shw", REASONING], "streamfold: unknown command 'shw'; did you mean show? (try: streamfold --help)"),
    (["show", REASONING, "--entry"],
     "streamfold show: option '--entry' requires an argument (try: streamfold show --help)"),
    (["web", "/no/such/capture"],
     "streamfold web: invalid FILE: File '/no/such/capture' does not exist (try: streamfold web --help)"),
    (["blame", REASONING, "--offset", "q"],
     "streamfold blame: invalid --offset: 'q' is not a valid integer (try: streamfold blame --help)"),
])
def test_a_usage_error_is_one_line_and_a_hint(args: list[str], line: str) -> None:
    code, out, err = streamfold(*args)
    assert (code, out, err) == (2, "", line + "\n")


@pytest.mark.parametrize("command", ["show", "tail"])
@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf", "-inf", "soon"])
def test_stall_must_be_a_positive_finite_number(command: str, value: str) -> None:
    code, out, err = streamfold(command, "--stall", value, REASONING)
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert err.startswith(f"streamfold {command}: invalid --stall: ") and f"(try: streamfold {command} --help)" in err


def test_a_good_stall_still_works() -> None:
    assert streamfold("show", "--stall", "0.5", REASONING)[0] == 0


# -- check: a trailing newline ----------------------------------------------------------

PLAIN = EXAMPLES / "openai-plain-text.sse"


def _content(capture: Path) -> str:
    from streamfold import fold

    return fold(capture.read_bytes()).choices[0].content


def test_check_accepts_one_trailing_newline_in_the_expected_text(tmp_path: Path) -> None:
    for ending in ("\n", "\r\n"):
        expected = tmp_path / "out.txt"
        expected.write_bytes((_content(PLAIN) + ending).encode())
        code, out, err = streamfold("check", str(PLAIN), "--expect", str(expected))
        assert (code, err) == (0, "") and "matches the reference" in out
    assert streamfold("check", str(PLAIN), "--expect", "-", stdin=_content(PLAIN) + "\n")[0] == 0


def test_check_names_trailing_whitespace_as_the_cause() -> None:
    code, out, _ = streamfold("check", str(PLAIN), "--expect", "-", stdin=_content(PLAIN) + " \n\n")
    out = " ".join(out.split())
    assert code == 1 and "the only difference is whitespace or newlines at the end of the text" in out
    assert "the stream is not at fault" in out


# -- diff: JSON values, the first difference, nothing cut silently -----------------------

def _edited(tmp_path: Path, name: str, edit: dict[str, str]) -> Path:
    text = PLAIN.read_text()
    for old, new in edit.items():
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / name
    path.write_text(text)
    return path


def test_diff_prints_json_values_and_the_first_difference(tmp_path: Path) -> None:
    content = _content(PLAIN)
    other = _edited(tmp_path, "b.sse", {'"content":"Server"': '"content":"Serv\\ner"'})
    code, out, _ = streamfold("diff", str(PLAIN), str(other))
    flat = " ".join(out.split())  # lines wrap at the terminal width
    line = flat[flat.index("differs content"):]
    assert code == 1
    assert line.startswith("differs content (first difference at character 4, line 1:5): A \"Server-sent")
    shown = " ".join(json.dumps(content, ensure_ascii=False)[:200].split())
    assert f"A {shown}… ({len(json.dumps(content, ensure_ascii=False)) - 200} more characters; --all shows them)" in line
    code, out, _ = streamfold("diff", "--all", str(PLAIN), str(other))
    whole = " ".join(json.dumps(content, ensure_ascii=False).split())
    assert f"A {whole} · B " in " ".join(out.split()) and "more characters" not in out


def test_diff_shows_null_and_true_as_json(tmp_path: Path) -> None:
    cut = tmp_path / "cut.sse"
    cut.write_text(PLAIN.read_text().split('"finish_reason":"stop"')[0].rsplit("\n\n", 1)[0] + "\n\n")
    code, out, _ = streamfold("diff", str(PLAIN), str(cut))
    assert code == 1
    assert "differs complete: A true · B false" in out
    assert 'differs finish_reason: A "stop" · B null' in out


def test_diff_says_how_many_frames_it_left_out(tmp_path: Path) -> None:
    lines = PLAIN.read_text().split("\n\n")
    changed = [line.replace('"content":"', '"content":"x', 1) if '"content":"' in line else line for line in lines]
    assert sum(a != b for a, b in zip(lines, changed)) > 25
    other = tmp_path / "b.sse"
    other.write_text("\n\n".join(changed))
    code, out, _ = streamfold("diff", str(PLAIN), str(other))
    total = sum(1 for row in streamfold("diff", "--all", str(PLAIN), str(other))[1].splitlines()
                if row.startswith("changed frame"))
    assert code == 1 and total > 25
    assert sum(1 for row in out.splitlines() if row.startswith("changed frame")) == 20
    assert f"… and {total - 20} more changed frames (--all shows every one)" in out


def test_diff_gives_line_and_column_in_multi_line_text(tmp_path: Path) -> None:
    def capture(name: str, text: str) -> str:
        chunk = {"object": "chat.completion.chunk", "model": "m",
                 "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": "stop"}]}
        path = tmp_path / name
        path.write_text(f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n")
        return str(path)

    code, out, _ = streamfold("diff", capture("a.sse", "one\ntwo\nthree"), capture("b.sse", "one\ntwo\nthr33"))
    assert code == 1
    assert 'differs content (first difference at character 11, line 3:4): A "one\\ntwo\\nthree" · B ' in out
