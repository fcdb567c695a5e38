"""`show` tells what was lost: a marker where a frame that did not decode came, with its partial
text; `--frame-numbers`; several files with a header each. And `services.lost` itself."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from click.testing import CliRunner

from streamfold import fold
from streamfold.cli import cli
from streamfold.services.lost import LostText, lost_text, salvage_text

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
BROKEN, PLAIN = EXAMPLES / "openai-broken.sse", EXAMPLES / "openai-plain-text.sse"


def run(*args: str, color: str = "never", columns: int = 300) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["--color", color, *args], env={"COLUMNS": str(columns)})
    return result.exit_code, result.stdout, result.stderr


def chunk(text: str, index: int = 0) -> str:
    return "data: " + json.dumps({"choices": [{"index": index, "delta": {"content": text}}]}) + "\n\n"


def cut(text: str, index: int = 0) -> str:
    """A frame whose JSON breaks off inside its text."""
    return f'data: {{"choices":[{{"index":{index},"delta":{{"content":"{text}\n\n'


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_show_marks_the_lost_frame_with_its_partial_text() -> None:
    code, out, _ = run("show", str(BROKEN))
    assert code == 0
    assert out.splitlines()[3] == ("Canberra is the capital of Australia. It is one of the few capitals in the"
                                   '⟦frame 17 lost: invalid JSON; partial text " wor"⟧ that was planned from scratch, '
                                   "chosen in 1908 as a compromise between Sydney and Melbourne. Parliament first met "
                                   "there in 1927, and the city now")
    _, coloured, _ = run("show", str(BROKEN), color="always")
    assert '\x1b[1;31m⟦frame 17 lost: invalid JSON; partial text " wor"⟧\x1b[0m that' in coloured


def test_the_marker_at_the_start_without_partial_text_and_in_a_reply_with_no_text(tmp_path: Path) -> None:
    first = write(tmp_path, "first.sse", cut("Hel") + chunk("lo") + "data: [DONE]\n\n")
    assert run("show", first)[1].splitlines()[3:5] == ['⟦frame 0 lost: invalid JSON; partial text "Hel"⟧lo',
                                                      "finish: none"]
    no_text = write(tmp_path, "none.sse", chunk("Hi") + 'data: {"usage": {"prompt_tok\n\n' + chunk("!"))
    assert run("show", no_text)[1].splitlines()[3] == "Hi⟦frame 1 lost: invalid JSON⟧!"
    nothing = write(tmp_path, "nothing.sse", cut("only") + "data: [DONE]\n\n")
    lines = run("show", nothing)[1].splitlines()
    assert lines[2:4] == ["(no reply was folded)", '⟦frame 0 lost: invalid JSON; partial text "only"⟧']


def test_annotate_and_frame_numbers_place_the_marker_between_the_frames(tmp_path: Path) -> None:
    path = write(tmp_path, "mid.sse", chunk("A") + chunk(" b") + cut(" c\\u00e9\\n") + chunk(" d") + "data: [DONE]\n\n")
    assert run("show", "--annotate", path)[1].splitlines()[3] == 'A¦ b⟦frame 2 lost: invalid JSON; partial text " cé\\n"⟧¦ d'
    assert run("show", "--frame-numbers", path)[1].splitlines()[3] == \
        '‹0›A‹1› b⟦frame 2 lost: invalid JSON; partial text " cé\\n"⟧‹3› d'


def test_frame_numbers_name_each_frames_piece() -> None:
    code, out, _ = run("show", "--frame-numbers", str(EXAMPLES / "openai-tool-calls.sse"))
    assert code == 0
    assert out.splitlines()[3] == "‹1›I'll‹2› check‹3› the‹4› current‹5› weather‹6› in‹7› both‹8› cities‹9›."
    _, help_text, _ = run("show", "--help")
    assert "--frame-numbers" in help_text and "which frame sent what" in " ".join(help_text.split())


def test_the_json_result_does_not_change_for_the_markers() -> None:
    _, out, _ = run("show", "--json", str(BROKEN))
    assert json.loads(out) == fold(BROKEN.read_bytes()).to_dict()
    assert "lost_text" not in out


def test_show_takes_several_files_with_a_header_each(tmp_path: Path) -> None:
    code, out, err = run("-q", "show", str(PLAIN), str(tmp_path / "missing.sse"), str(EXAMPLES / "openai-reasoning.sse"))
    assert code == 2  # the worst: one file could not be read
    plain = fold(PLAIN.read_bytes()).choices[0].content
    reasoning = fold((EXAMPLES / "openai-reasoning.sse").read_bytes()).choices[0].content
    assert out == (f"==> {PLAIN} <==\n{plain}\n\n==> {tmp_path / 'missing.sse'} <==\n\n"
                   f"==> {EXAMPLES / 'openai-reasoning.sse'} <==\n{reasoning}\n")
    assert err == f"streamfold: cannot read '{tmp_path / 'missing.sse'}': No such file or directory\n"
    assert run("show", str(PLAIN), str(PLAIN))[0] == 0
    assert run("--strict", "show", str(PLAIN), str(BROKEN))[0] == 1


def test_show_json_of_several_files_is_an_array_of_file_and_result(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.sse")
    code, out, _ = run("--strict", "show", "--json", str(BROKEN), missing, str(PLAIN))
    assert code == 2
    assert json.loads(out) == [{"file": str(BROKEN), "result": fold(BROKEN.read_bytes()).to_dict()},
                               {"file": missing, "result": None},
                               {"file": str(PLAIN), "result": fold(PLAIN.read_bytes()).to_dict()}]
    # One file: the result itself, as before.
    assert json.loads(run("show", "--json", str(PLAIN))[1]) == fold(PLAIN.read_bytes()).to_dict()


# -- services.lost -------------------------------------------------------------------

def test_lost_text_places_each_invalid_frame_by_the_reply_length_when_it_came() -> None:
    stream = chunk("one") + cut("x") + cut("y") + chunk(" two") + chunk("b", 1) + cut("z", 1) + chunk("c", 1)
    assert lost_text(fold(stream)) == [LostText(0, 3, 1, "invalid JSON", "x"), LostText(0, 3, 2, "invalid JSON", "y"),
                                       LostText(1, 1, 5, "invalid JSON", "z")]


def test_salvage_reads_the_text_up_to_where_the_json_breaks() -> None:
    assert salvage_text('{"choices":[{"delta":{"content":"Hel', ("content",)) == "Hel"
    assert salvage_text('{"delta":{"content": "a\\"b\\\\c\\u00e9\\ud83d\\ude00", "x', ("content",)) == 'a"b\\cé😀'
    assert salvage_text('{"delta":{"content":"ab\\u00', ("content",)) == "ab"  # a cut escape is dropped
    assert salvage_text('{"delta":{"content":"ab\\', ("content",)) == "ab"
    assert salvage_text('{"usage":{"prompt_tokens":3', ("content", "text")) is None
    assert salvage_text('{"response":"Hal', ("content", "response")) == "Hal"


def test_lost_text_of_other_dialects_reads_their_text_field() -> None:
    anthropic = ('event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":'
                 '{"type":"text_delta","text":"Bon"}}\n\nevent: content_block_delta\ndata: {"type":"content_block_delta",'
                 '"index":0,"delta":{"type":"text_delta","text":"jo\n\n')
    result = fold(anthropic, dialect="anthropic")
    assert lost_text(result) == [LostText(0, 3, 1, "invalid JSON", "jo")]


def _lines_run_by_lost_text(frames: int) -> int:
    """How many lines of Python `lost_text` runs on `frames` lost frames: a count that does not
    depend on the machine's load, as a clock does (a clock's bound failed on a loaded CI)."""
    result = fold((chunk("ab") + cut("c")) * frames)
    lines = 0

    def count(frame: object, event: str, arg: object) -> object:
        nonlocal lines
        lines += event == "line"
        return count

    sys.settrace(count)
    try:
        found = lost_text(result)
    finally:
        sys.settrace(None)
    assert len(found) == frames and found[-1].offset == 2 * frames
    return lines


def test_lost_text_is_linear_in_the_frames() -> None:
    # Four times the frames, four times the lines (a scan of the reply per lost frame made it sixteen).
    small, large = _lines_run_by_lost_text(2_000), _lines_run_by_lost_text(8_000)
    assert large <= 4.2 * small
