"""Issue 20, part 3, group B, through the fronts: what `show --json`, the page and the input readers
give for a WebSocket message of a lone surrogate (show died with a traceback, the page answered 500),
a message time of 10**400 (OverflowError), a non-streaming reply whose usage holds NaN (`show --json`
printed NaN), and every input made hostile: text that is Unicode, JSON that is strict. The CLI runs as
a real subprocess, whose stdout is a real UTF-8 stream."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from streamfold.services import InputError, load
from streamfold.web import create_app
from streamfold.web.fold_view import build_fold_view, encode
from values import not_strict

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"

WS_SURROGATE = (b'{"type":"receive","time":1.0,"opcode":1,"data":"\\ud800"}\n'
                b'{"type":"receive","time":2.0,"opcode":1,"data":"{\\"type\\":\\"response.created\\",\\"response\\":'
                b'{\\"id\\":\\"resp_1\\",\\"status\\":\\"in_progress\\",\\"output\\":[]}}"}\n'
                b'{"type":"receive","time":2.5,"opcode":1,"data":"{\\"type\\":\\"response.output_text.delta\\",'
                b'\\"output_index\\":0,\\"content_index\\":0,\\"delta\\":\\"GOOD\\"}"}\n')
WS_HUGE_TIME = WS_SURROGATE.replace(b'"time":1.0', b'"time":' + str(10**400).encode()).replace(b"\\ud800", b"x")
NAN_REPLY = (b'{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":'
             b'{"role":"assistant","content":"Hello"},"finish_reason":"stop"}],'
             b'"usage":{"prompt_tokens":NaN,"completion_tokens":2,"total_tokens":Infinity}}')


def _strict_json(text: str) -> Any:
    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def _show_json(tmp_path: Path, data: bytes, name: str) -> Any:
    path = tmp_path / name
    path.write_bytes(data)
    env = {**os.environ, "PYTHONPATH": str(SRC), "NO_COLOR": "1", "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run([sys.executable, "-m", "streamfold", "show", "--json", str(path)], capture_output=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")[-2000:]
    return _strict_json(done.stdout.decode("utf-8"))  # strict UTF-8 and strict JSON


def test_show_json_of_a_websocket_message_of_a_lone_surrogate(tmp_path: Path) -> None:
    out = _show_json(tmp_path, WS_SURROGATE, "ws.jsonl")
    assert [(e["code"], e["frame"], e["raw"]) for e in out["errors"]] == [("invalid-json", 0, "\ufffd")]
    assert ("non-strict-json", 0) in {(d["code"], d["frame"]) for d in out["diagnostics"]}
    assert out["choices"][0]["content"] == "GOOD"


def test_show_json_of_a_websocket_message_timed_past_a_float(tmp_path: Path) -> None:
    out = _show_json(tmp_path, WS_HUGE_TIME, "ws.jsonl")
    assert out["transport"] == "websocket" and out["choices"][0]["content"] == "GOOD"
    assert "timing" not in out  # not every message has a time a float holds: no arrival times


def test_show_json_of_a_non_streaming_reply_with_nan_usage(tmp_path: Path) -> None:
    out = _show_json(tmp_path, NAN_REPLY, "reply.json")
    assert out["choices"][0]["content"] == "Hello"
    assert (out["usage"]["input_tokens"], out["usage"]["output_tokens"], out["usage"]["total_tokens"]) == (None, 2, None)
    assert {"not-a-stream", "non-strict-json"} <= {d["code"] for d in out["diagnostics"]}


@pytest.mark.parametrize("data", [WS_SURROGATE, WS_HUGE_TIME, NAN_REPLY], ids=["surrogate", "time", "nan"])
def test_the_page_folds_them_to_strict_json(data: bytes) -> None:
    client = TestClient(create_app(), base_url="http://127.0.0.1")
    response = client.post("/api/fold", content=data)
    assert response.status_code == 200
    view = _strict_json(response.content.decode("utf-8"))
    assert view["result"]["choices"][0]["content"] in ("GOOD", "Hello")


# -- every input the readers take, made hostile -------------------------------------------------------

_STRING_START = re.compile(rb'(":\s*")')
_NUMBER = re.compile(rb'(":\s*)(\d+(?:\.\d+)?)(?=[,}\]])')


def _hostile_versions(data: bytes) -> Iterator[tuple[str, bytes]]:
    yield "surrogate-escape", _STRING_START.sub(rb"\1\\ud800", data)
    yield "surrogate-bytes", _STRING_START.sub(lambda found: found.group(1) + b"\xed\xa0\x80", data)
    yield "python-repr", data.replace(b"='", b"='\\ud800")  # a Python escape in an SDK object's repr
    yield "websocket-data", data.replace(b'"data":"', b'"data":"\\ud800').replace(b'"data": "', b'"data": "\\ud800')
    for name, number in (("nan", b"NaN"), ("1e999", b"1e999"), ("10**400", str(10**400).encode())):
        yield name, _NUMBER.sub(lambda found, number=number: found.group(1) + number, data)  # type: ignore[misc]


INPUTS = sorted([*(ROOT / "tests" / "inputs").iterdir(), *(ROOT / "tests" / "captures").rglob("*.har"),
                 *(ROOT / "tests" / "captures").rglob("*.jsonl")])


@pytest.mark.parametrize("path", INPUTS, ids=lambda path: path.name)
def test_every_input_made_hostile_loads_and_shows_as_text_and_strict_json(path: Path) -> None:
    for name, data in _hostile_versions(path.read_bytes()):
        try:
            loaded = load(data)
        except InputError:
            continue  # said in one line, as any input that cannot be used
        out = loaded.result.to_dict()
        if loaded.timing is not None:
            out["timing"] = loaded.timing.to_dict()
        assert not_strict(out) == [], name
        view = build_fold_view(data)
        assert not_strict(view) == [], name
        _strict_json(encode(view).decode("utf-8"))
