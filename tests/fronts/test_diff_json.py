"""`diff` says no Python `None` (a finding without a frame was "(frame None)"), prints one JSON
object with --json (schema 1, for CI and jq), and compares tool arguments as JSON values: the
same value written with other spacing is alike, with a note, in the CLI and the page's diff."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from streamfold import fold
from streamfold.cli import cli
from streamfold.web.app import create_app

ROOT = Path(__file__).resolve().parents[2]
PLAIN = ROOT / "examples" / "openai-plain-text.sse"
CAPTURES = sorted(path for path in (ROOT / "tests" / "captures").rglob("*")
                  if path.is_file() and not path.name.endswith((".md", ".expect.json")))
INPUTS = sorted((ROOT / "tests" / "inputs").iterdir())
# A capture whose last line has no line end: its unterminated-final-line finding points at no frame.
FRAMELESS = ROOT / "tests" / "captures" / "openai" / "f1-llamacpp-null-content-pings-unterminated-done.sse"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env={"COLUMNS": "200", "NO_COLOR": "1"})
    return result.exit_code, result.stdout, result.stderr


def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    return "data: " + json.dumps({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
                                  "model": "gpt-4.1-mini", "choices": [{"index": 0, "delta": delta,
                                                                        "finish_reason": finish}]}) + "\n\n"


def tool_stream(tmp_path: Path, name: str, arguments: str, text: str = "Let me look.") -> Path:
    body = (chunk({"role": "assistant", "content": ""}) + chunk({"content": text})
            + chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                     "function": {"name": "lookup", "arguments": ""}}]})
            # In two pieces, so that arguments of any length take as many frames.
            + "".join(chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
                      for piece in (arguments[: len(arguments) // 2], arguments[len(arguments) // 2 :]))
            + chunk({}, "tool_calls") + "data: [DONE]\n\n")
    path = tmp_path / name
    path.write_text(body)
    return path


# -- no Python None --------------------------------------------------------------------------


@pytest.mark.parametrize("path", [*CAPTURES, *INPUTS], ids=lambda path: path.name)
def test_no_python_none_in_diff_or_show(path: Path) -> None:
    if b"None" in path.read_bytes():
        pytest.skip("the input itself says None")
    for args in (("diff", str(PLAIN), str(path)), ("diff", str(path), str(PLAIN)), ("show", str(path))):
        code, out, err = run(*args)
        assert code in (0, 1, 2) and "None" not in out + err, args


def test_a_finding_without_a_frame_is_named_by_its_code_alone() -> None:
    code, out, _ = run("diff", str(PLAIN), str(FRAMELESS))
    assert code == 1 and '"unterminated-final-line\\nmissing-terminal (frame 27)"' in out
    field = next(field for field in diff_page(PLAIN.read_bytes(), FRAMELESS.read_bytes())["fields"]
                 if field["label"] == "diagnostics")
    assert field["right"] == "unterminated-final-line\nmissing-terminal (frame 27)"


# -- diff --json -----------------------------------------------------------------------------


def diff_json(*args: str) -> tuple[int, dict[str, Any]]:
    """`python -m streamfold diff --json ...` as CI runs it: exit code and the object it printed."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, "-m", "streamfold", "diff", "--json", *args], capture_output=True,
                          text=True, env=env, timeout=60, check=False)
    return done.returncode, json.loads(done.stdout)


def test_diff_json_of_two_captures(tmp_path: Path) -> None:
    body = PLAIN.read_text()
    reply = fold(PLAIN.read_bytes()).choices[0].content
    word = reply.split()[3]
    changed = tmp_path / "changed.sse"
    changed.write_text(body.replace(f'"content":" {word}"', '"content":" WORD"', 1))
    code, report = diff_json(str(PLAIN), str(changed))
    assert code == 1 and report["schema"] == 1 and report["same"] is False
    assert report["a"] == {"file": str(PLAIN), "kind": "stream", "dialect": "openai-chat", "transport": "sse",
                           "complete": True, "model": "gpt-4.1-mini-2025-04-14", "frames": 54}
    assert report["b"]["file"] == str(changed) and report["b"]["kind"] == "stream"
    (pair,) = report["frames"]["changed"]
    assert pair["a"] == pair["b"] and pair["a_summary"] == f'content " {word}"' and pair["b_summary"] == 'content " WORD"'
    assert report["frames"]["alike"] == 53 and report["frames"]["only_a"] == report["frames"]["only_b"] == []
    (difference,) = report["differences"]
    at = reply.index(f" {word}") + 1
    assert difference == {"path": "content", "a": reply, "b": reply.replace(f" {word}", " WORD", 1),
                          "first_difference": {"character": at, "line": 1, "column": at + 1},
                          "frames": {"a": pair["a"], "b": pair["b"]}}
    assert report["notes"] == []


def test_diff_json_of_a_capture_and_itself_and_of_a_response() -> None:
    code, report = diff_json(str(PLAIN), str(PLAIN))
    assert code == 0 and report["same"] is True and report["differences"] == [] and report["notes"] == []
    assert report["frames"] == {"alike": 54, "changed": [], "only_a": [], "only_b": []}
    inputs = ROOT / "tests" / "inputs"
    code, report = diff_json(str(inputs / "raw-body.sse"), str(inputs / "chat-completion.json"))
    assert report["b"] == {"file": str(inputs / "chat-completion.json"), "kind": "response",
                           "dialect": "openai-chat", "transport": None, "complete": None, "model": None,
                           "frames": None}
    assert report["frames"] is None and code == (0 if report["same"] else 1)
    assert all(difference["frames"]["b"] is None for difference in report["differences"])


# -- JSON values, not their whitespace ----------------------------------------------------------


def test_tool_arguments_that_differ_only_in_spacing_are_alike_with_a_note(tmp_path: Path) -> None:
    compact = tool_stream(tmp_path, "compact.sse", '{"city":"Oslo","days":3}')
    spaced = tool_stream(tmp_path, "spaced.sse", '{"city": "Oslo", "days": 3}')
    reordered = tool_stream(tmp_path, "reordered.sse", '{"days": 3, "city": "Oslo"}')
    # The frames carried other pieces of text, so they differ (exit 1); the replies do not.
    code, out, _ = run("diff", str(compact), str(spaced))
    assert code == 1 and not any(line.startswith("differs ") for line in out.splitlines())
    assert ("alike tool_calls[0].arguments (equal as JSON values: only the whitespace differs): "
            'A "{\\"city\\":\\"Oslo\\",\\"days\\":3}" · B "{\\"city\\": \\"Oslo\\", \\"days\\": 3}"') in out
    assert out.rstrip().endswith("the replies are the same; the frames that carried them differ")
    code, report = diff_json(str(compact), str(reordered))
    assert code == 1 and report["same"] is False and report["differences"] == [] and report["frames"]["changed"]
    assert report["notes"] == [{"path": "tool_calls[0].arguments", "a": '{"city":"Oslo","days":3}',
                                "b": '{"days": 3, "city": "Oslo"}',
                                "note": "equal as JSON values: only the whitespace and the order of keys differ"}]


def test_a_non_streaming_response_with_spaced_arguments_is_the_same_reply(tmp_path: Path) -> None:
    stream = tool_stream(tmp_path, "compact.sse", '{"city":"Oslo","days":3}')
    completion = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4.1-mini",
                  "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                      "role": "assistant", "content": "Let me look.", "tool_calls": [{
                          "id": "call_1", "type": "function",
                          "function": {"name": "lookup", "arguments": '{\n  "city": "Oslo",\n  "days": 3\n}'}}]}}]}
    response = tmp_path / "response.json"
    response.write_text(json.dumps(completion))
    code, report = diff_json(str(stream), str(response))
    # A response tells the parsed arguments, not the text a stream joined: they are compared as values.
    assert code == 0 and report["same"] is True and report["differences"] == [] and report["notes"] == []
    code, out, _ = run("diff", str(stream), str(response))
    assert code == 0 and out.rstrip().endswith("the replies are the same")


def test_tool_arguments_of_other_values_still_differ(tmp_path: Path) -> None:
    three = tool_stream(tmp_path, "three.sse", '{"days": 3}')
    for other, at in (('{"days": 3.0}', 10), ('{"days": true}', 9), ('{"days": 4}', 9)):
        code, report = diff_json(str(three), str(tool_stream(tmp_path, "other.sse", other)))
        paths = [difference["path"] for difference in report["differences"]]
        assert code == 1 and "tool_calls[0].arguments" in paths and report["notes"] == [], other
        (arguments,) = [found for found in report["differences"] if found["path"] == "tool_calls[0].arguments"]
        assert arguments["first_difference"]["character"] == at
        assert arguments["frames"]["a"] is not None and arguments["frames"]["b"] is not None


def diff_page(left: bytes, right: bytes) -> dict[str, Any]:
    client = TestClient(create_app(), base_url="http://127.0.0.1")
    response = client.post("/api/diff", content=left + right, params={"left_size": str(len(left))})
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def test_the_page_diff_compares_tool_arguments_as_json_values(tmp_path: Path) -> None:
    compact = tool_stream(tmp_path, "compact.sse", '{"a":1}').read_bytes()
    spaced = tool_stream(tmp_path, "spaced.sse", '{"a": 1}').read_bytes()
    fields = {(field["section"], field["label"]): field for field in diff_page(compact, spaced)["fields"]}
    arguments = fields[("choice 0 · tool call 0", "arguments (raw join)")]
    assert arguments["same"] is True and arguments["note"] == "equal as JSON values: only the whitespace differs"
    assert (arguments["left"], arguments["right"]) == ('{"a":1}', '{"a": 1}')  # both shown as sent
    assert all(field["same"] for field in fields.values())
    assert all(field["note"] is None for key, field in fields.items() if key != ("choice 0 · tool call 0",
                                                                                   "arguments (raw join)"))
    other = tool_stream(tmp_path, "other.sse", '{"a": 2}').read_bytes()
    fields = {(field["section"], field["label"]): field for field in diff_page(compact, other)["fields"]}
    assert fields[("choice 0 · tool call 0", "arguments (raw join)")]["same"] is False
