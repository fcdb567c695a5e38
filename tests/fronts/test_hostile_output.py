"""What leaves the process stays valid UTF-8 and strict JSON whatever the stream held: a lone
surrogate escape, NaN, Infinity, 1e999, nesting past the cap, wrongly typed values. Once,
`show`, `show --json`, `frames`, `frames --jsonl`, `export` and the web page's fold raised on
them (UnicodeEncodeError, RecursionError, TypeError) or printed `Infinity`. The CLI runs as a
real subprocess: its stdout is a real UTF-8 stream, which click's runner is not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from streamfold.web import create_app

SRC = Path(__file__).resolve().parents[2] / "src"

HOSTILE = b"".join(b"data: " + payload + b"\n\n" for payload in (
    b'{"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"GOOD"}}]}',
    b'{"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"\\ud800 \\udfff"}}]}',
    b'{"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"x"}}],'
    b'"usage":{"prompt_tokens":NaN,"completion_tokens":Infinity,"total_tokens":1e999}}',
    b"[" * 100_000,
    b'{"choices":[{"index":[],"delta":{"content":"a","refusal":true}}]}',
    b'{"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"tool_calls":'
    b'[{"index":0,"id":"call_\\ud800","function":{"name":"f","arguments":"{\\"q\\":\\"\\\\ud800\\"}"}}]}}]}',
    b'{"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"END"},'
    b'"finish_reason":"tool_calls"}]}',
    b"[DONE]",
))


def _strict_json(text: str) -> Any:
    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def _cli(*args: str, path: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(SRC), "NO_COLOR": "1", "COLUMNS": "120", "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run([sys.executable, "-m", "streamfold", *args, str(path)], capture_output=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")[-2000:]
    return done.stdout.decode("utf-8")  # strict: raises on anything that is not UTF-8


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hostile") / "hostile.sse"
    path.write_bytes(HOSTILE)
    return path


def test_show_prints_every_good_frame_and_each_finding(capture: Path) -> None:
    out = _cli("show", path=capture)
    assert "GOOD\ufffd \ufffdx⟦frame 3 lost: invalid JSON⟧aEND" in out  # frame 3 nests too deep to read
    assert "non-strict-json" in out and "invalid-json" in out and "unexpected-payload" in out


@pytest.mark.parametrize("command", [("show", "--json"), ("export",)], ids=["show --json", "export"])
def test_json_output_is_strict_json(capture: Path, command: tuple[str, ...]) -> None:
    value = _strict_json(_cli(*command, path=capture))
    json.dumps(value, ensure_ascii=False).encode("utf-8")  # no lone surrogate anywhere
    if command == ("show", "--json"):
        assert value["choices"][0]["content"] == "GOOD\ufffd \ufffdxaEND"
        assert value["usage"]["raw"] == {"prompt_tokens": None, "completion_tokens": None, "total_tokens": None}
        assert value["choices"][0]["tool_calls"][0]["parsed"] == {"q": "\ufffd"}
        codes = {(f["code"], f["frame"]) for f in (*value["errors"], *value["diagnostics"])}
        assert {("non-strict-json", 1), ("non-strict-json", 2), ("invalid-json", 3), ("unexpected-payload", 4),
                ("non-strict-json", 5)} <= codes


def test_frames_lists_every_frame(capture: Path) -> None:
    out = _cli("frames", path=capture)
    assert "nested more than 256 levels deep" in out
    rows = [_strict_json(line) for line in _cli("frames", "--jsonl", path=capture).splitlines()]
    assert [row["index"] for row in rows] == list(range(8))


def test_the_web_page_fold_is_strict_json() -> None:
    client = TestClient(create_app(), base_url="http://127.0.0.1")
    response = client.post("/api/fold", content=HOSTILE)
    assert response.status_code == 200
    view = _strict_json(response.content.decode("utf-8"))
    assert view["result"]["choices"][0]["content"] == "GOOD\ufffd \ufffdxaEND"
    rows = view["frames"]
    # The page parses each JSON frame itself: frames the core took only leniently come as the value it folded.
    assert _strict_json(rows[2]["payload_json"])["usage"] == {"prompt_tokens": None, "completion_tokens": None,
                                                             "total_tokens": None}
    assert _strict_json(rows[1]["payload_json"])["choices"][0]["delta"]["content"] == "\ufffd \ufffd"
    assert rows[3]["error"]["message"] == "nested more than 256 levels deep"
    assert view["export"] is not None
