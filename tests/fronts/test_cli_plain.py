"""The command line says things plainly: no trailing blanks to copy, values as JSON in `check`,
`diff --entry` on HAR files, Bedrock frame rows in the other dialects' words."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from streamfold.cli import cli
from streamfold.cli.common import _NoTrailingBlanks

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = sorted(path for path in (ROOT / "tests" / "captures").rglob("*")
                  if path.is_file() and not path.name.endswith((".md", ".expect.json")))
EXAMPLES = sorted((ROOT / "examples").glob("*.sse"))
INPUTS = ROOT / "tests" / "inputs"


def run(*args: str, input: str | None = None, columns: int = 80) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--color", "never", *args], input=input, env={"COLUMNS": str(columns)})
    return result.exit_code, result.stdout


@pytest.mark.parametrize("path", [*CAPTURES, *EXAMPLES], ids=lambda path: path.name)
def test_no_line_of_any_command_ends_in_a_blank(path: Path) -> None:
    name = str(path)
    outputs = [run("show", name), run("show", "--annotate", name), run("frames", name), run("export", name),
               run("diff", name, str(EXAMPLES[0])), run("check", name, "--expect", "-", input="Hello there"),
               run("blame", name, "--offset", "0")]
    for code, out in outputs:
        assert code in (0, 1, 2)
        blank_ended = [line for line in out.split("\n") if line.endswith((" ", "\t"))]
        assert blank_ended == []


def test_the_filter_keeps_colours_and_holds_blanks_across_writes() -> None:
    out = io.StringIO()
    filtered = _NoTrailingBlanks(out)
    filtered.write("a  \x1b[0m \x1b[2m  \x1b[0m\nb ")
    filtered.write("\n  c\t")
    filtered.write(" d\n")
    filtered.write("tail ")
    assert out.getvalue() == "a\x1b[0m\x1b[2m\x1b[0m\nb\n  c\t d\ntail"
    filtered.flush()  # blanks not followed by a newline are the text's own: a flush lets them out
    assert out.getvalue().endswith("tail ")


def test_tool_arguments_are_not_padded_to_their_widest_line() -> None:
    _, out = run("show", str(ROOT / "examples" / "openai-tool-calls.sse"))
    assert '\n  {\n    "location": "Lisbon, Portugal",\n    "unit": "celsius"\n  }\n' in out


def test_check_shows_values_as_json_not_python_reprs() -> None:
    plain = str(ROOT / "examples" / "openai-plain-text.sse")
    code, out = run("check", plain, "--expect", "-", input='Server-sent "events" None', columns=300)
    assert code == 1
    assert ('content differs at character 12 (frame 4, line 9): the reference has "events keep one HTTP", '
            'the client has "\\"events\\" None". Probable cause:') in out
    tools = str(ROOT / "examples" / "openai-tool-calls.sse")
    client = '{"role": "assistant", "content": "I\'ll check the current weather in both cities.", "tool_calls": [' \
             '{"id": "x", "type": "function", "function": {"name": null, "arguments": "{}"}}]}'
    code, out = run("check", tools, "--expect", "-", input=client, columns=300)
    assert code == 1
    assert "tool_calls differs at character 0: the reference has 2, the client has 1." in out


def test_check_names_a_missing_tool_name_null() -> None:
    tools = str(ROOT / "examples" / "openai-tool-calls.sse")
    calls = ", ".join(json.dumps({"id": call_id, "type": "function", "function": {
                          "name": name, "arguments": json.dumps({"location": f"{city}, Portugal", "unit": "celsius"})}})
                      for call_id, name, city in (("call_DtrFk5YInvn1XlU38zqNPORr", None, "Lisbon"),
                                                  ("call_Aa75gcaVRgLlwQYEn9LJeiga", "get_weather", "Porto")))
    client = ('{"role": "assistant", "content": "I\'ll check the current weather in both cities.", '
              f'"tool_calls": [{calls}]}}')
    code, out = run("check", tools, "--expect", "-", input=client, columns=300)
    assert code == 1
    assert 'tool:0 name differs at character 0: the reference has "get_weather", the client has null.' in out


def test_diff_picks_the_har_entry_on_each_side() -> None:
    har = str(INPUTS / "base64-two-streams.har")
    code, out = run("diff", har, har, "--entry", "1", columns=300)
    assert (code, out) == (0, "A: openai-chat, 13 frames · B: openai-chat, 13 frames · 13 frames alike (ids, "
                              "timestamps and padding ignored)\nthe replies are the same\n")
    code, out = run("diff", har, har, "--entry-a", "1", "--entry-b", "retry=1", columns=300)
    assert code == 1
    assert out.startswith("A: openai-chat, 13 frames · B: ")
    assert 'differs content: A "The kettle is on; tea in five minutes." · B ' in out
    # --entry-a/--entry-b override --entry for their side; a URL substring picks as `show --entry` does
    assert run("diff", har, har, "--entry", "0", "--entry-a", "1", "--entry-b", "1", columns=300)[0] == 0
    code, out = run("diff", har, har, "--entry-a", "/v1/chat", "--entry-b", "2", columns=300)
    assert code == 0 and out.startswith("A: unknown, 1 frames · B: unknown, 1 frames · 1 frames alike")


BEDROCK = ROOT / "tests" / "captures" / "bedrock"


def test_bedrock_frame_rows_read_like_the_other_dialects() -> None:
    _, out = run("frames", str(BEDROCK / "converse-reasoning-tool-call.bin"), columns=200)
    summaries = [line.split("json", 1)[1].strip() for line in out.splitlines()[1:]]
    assert summaries == ['role "assistant"', '[0] reasoning "User wants Oslo weather."',
                         '[0] signature "EqoBCkgIBxACGAIiQOk8n1vG2"', "[0] stop",
                         "[1] start tool_use get_weather tooluse_7Hs2kQWvRZ6yJ9bN3cXe1A", '[1] input "{\\"city\\":"',
                         '[1] input " \\"Oslo\\"}"', "[1] stop", "stop tool_use",
                         "usage input 402, output 61, total 463 · latency 1830 ms"]


def test_bedrock_rows_of_an_sdk_log_and_of_a_damaged_message() -> None:
    _, out = run("frames", str(BEDROCK / "sdk-events-logged-as-jsonl.ndjson"), columns=200)
    assert [line.split("json", 1)[1].strip() for line in out.splitlines()[1:]] == [
        'role "assistant"', '[0] text "Hola"', '[0] text ", ¿qué tal?"', "[0] stop", "stop max_tokens",
        "usage input 5, output 6, total 11 · latency 120 ms"]
    _, out = run("frames", str(BEDROCK / "converse-bad-crc.bin"), columns=200)
    assert 'crc-mismatch [0] text " capital"' in out
