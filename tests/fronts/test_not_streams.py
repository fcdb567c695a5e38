"""Bodies that are well known and no stream are named in one line, and no transport is claimed
for them: an API's error response (not a one-frame `json-array` stream) and a file of a
well-known binary format (not five `unknown-field` findings under an `sse` header). And an SDK
repr's missing end marker is decided once: never raised, then retracted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from streamfold.services import load
from streamfold.web.app import create_app

ROOT = Path(__file__).resolve().parents[2]
INPUTS = ROOT / "tests" / "inputs"
STREAMFOLD = [sys.executable, "-m", "streamfold"]
ENV = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}

OPENAI_401 = json.dumps({"error": {
    "message": "Incorrect API key provided: sk-abc. You can find your API key at "
               "https://platform.openai.com/account/api-keys.",
    "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}}, indent=4).encode() + b"\n"
ANTHROPIC_401 = (b'{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},'
                 b'"request_id":"req_011CXy"}')
GEMINI_400 = json.dumps([{"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.",
                                    "status": "INVALID_ARGUMENT"}}]).encode()
OLLAMA_404 = b'{"error":"model \\"llama9\\" not found, try pulling it first"}'

ERRORS = {
    "openai-401": (OPENAI_401, "OpenAI-style", ["invalid_request_error", "invalid_api_key", "Incorrect API key"]),
    "anthropic-401": (ANTHROPIC_401, "Anthropic", ["authentication_error", "invalid x-api-key"]),
    "gemini-400": (GEMINI_400, "Google", ["INVALID_ARGUMENT", "400", "API key not valid"]),
    "ollama-404": (OLLAMA_404, "plain", ['model "llama9" not found']),
}


def _run(*args: str, data: bytes) -> str:
    done = subprocess.run([*STREAMFOLD, *args], input=data, capture_output=True, env=ENV, timeout=60)
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    return done.stdout.decode()


def _only(diagnostics: list[dict[str, Any]], code: str) -> dict[str, Any]:
    found = [d for d in diagnostics if d["code"] == code]
    assert len(found) == 1, diagnostics
    return found[0]


@pytest.mark.parametrize("name", list(ERRORS))
def test_an_error_response_is_named_in_one_line_and_claims_no_stream(name: str) -> None:
    data, vendor, words = ERRORS[name]
    out = _run("show", "-", data=data)
    lines = out.splitlines()
    assert lines[0] == f"not a stream · an error response ({vendor})", out
    finding = [line for line in lines if line.startswith("error ")]
    assert len(finding) == 1 and "error-response" in finding[0], out
    assert all(word in finding[0] for word in words), finding
    assert "json-array" not in out and "ndjson" not in out and "in-stream-error" not in out and "frames:" not in out

    result = json.loads(_run("show", "--json", "-", data=data))
    found = _only(result["diagnostics"], "error-response")
    assert found["severity"] == "error" and found["details"]["vendor"] == vendor
    assert result["errors"] == [] and result["frames"]["total"] == 0 and result["choices"] == []

    view = TestClient(create_app(), base_url="http://127.0.0.1").post("/api/fold", content=data).json()
    assert _only(view["result"]["diagnostics"], "error-response") == found  # the page's fold: the same Result


def test_an_error_response_behind_curl_i_is_said_once() -> None:
    data = b"HTTP/2 401\r\ncontent-type: application/json\r\n\r\n" + ANTHROPIC_401
    for out in (_run("show", "-", data=data), _run("tail", data=data)):
        assert "error-response" in out and "http-status" in out and out.count("invalid x-api-key") == 1, out


@pytest.mark.parametrize("data", [
    b'{"error": {"message": "x"}, "choices": []}\n{"error": {"message": "y"}}\n',  # two documents: a stream
    b'data: {"error": {"message": "overloaded", "type": "server_error"}}\n\n',  # an error inside an SSE stream
    b'{"id": "x", "message": "hello"}',  # an object with a message is no error by that alone
    # A reply cut by an error carries it beside its output: still a reply (read by its dialect).
    b'{"id": "resp_1", "object": "response", "status": "failed", "output": [],'
    b' "error": {"code": "server_error", "message": "The server had an error"}}',
])
def test_what_only_looks_like_an_error_response_is_read_as_before(data: bytes) -> None:
    assert "error-response" not in {d.code for d in load(data).result.diagnostics}


FORMATS = {
    "pdf": (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n", "a PDF document"),
    "png": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(40), "a PNG image"),
    "jpeg": (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + bytes(40), "a JPEG image"),
    "gif": (b"GIF89a\x01\x00\x01\x00\x80\x00\x00" + bytes(20), "a GIF image"),
    "zip": (b"PK\x03\x04\x14\x00\x00\x00\x08\x00" + bytes(40), "a ZIP archive"),
    "sqlite": (b"SQLite format 3\x00\x10\x00\x01\x01" + bytes(80), "an SQLite database"),
    "elf": (b"\x7fELF\x02\x01\x01\x00" + bytes(56), "an ELF executable"),
    "mach-o": (b"\xcf\xfa\xed\xfe\x07\x00\x00\x01" + bytes(24), "a Mach-O executable"),
    "wasm": (b"\x00asm\x01\x00\x00\x00\x01\x07\x01" + bytes(20), "a WebAssembly module"),
    "mp3": (b"ID3\x04\x00\x00\x00\x00\x00\x23TSSE" + bytes(40), "an MP3 audio file"),
    "mp4": (b"\x00\x00\x00\x20ftypisom\x00\x00\x02\x00" + bytes(40), "an MP4 or QuickTime media file"),
    "ogg": (b"OggS\x00\x02" + bytes(40), "an Ogg media file"),
}


@pytest.mark.parametrize("name", list(FORMATS))
def test_a_well_known_binary_format_is_named_in_one_line(name: str) -> None:
    data, what = FORMATS[name]
    out = _run("show", "-", data=data)
    lines = out.splitlines()
    assert lines[0].startswith(f"not a stream · {what}") and "(" not in lines[0], out
    found = [line for line in lines if line.startswith(("error ", "warning ", "info "))]
    assert len(found) == 1 and f"not-text: the body is {what}" in found[0], out
    assert " sse " not in out and "unknown-field" not in out and "invalid-utf8" not in out
    assert json.loads(_run("show", "--json", "-", data=data))["diagnostics"][0]["details"]["format"].startswith(what)
    tail = _run("tail", data=data)
    assert tail.splitlines()[0] == lines[0] and "unknown-field" not in tail, tail


def test_an_sdk_repr_that_ended_raises_no_missing_terminal_to_retract() -> None:
    data = (INPUTS / "sdk-repr-openai.txt").read_bytes()
    result = json.loads(_run("show", "--json", "-", data=data))
    codes = [d["code"] for d in result["diagnostics"]]
    assert "missing-terminal" not in codes and result["complete"] is True
    note = _only(result["diagnostics"], "sdk-repr")["message"]
    assert "missing-terminal" not in note and "says nothing" not in note  # nothing raised, nothing retracted


def test_an_sdk_repr_without_its_finish_is_called_cut_once() -> None:
    lines = (INPUTS / "sdk-repr-openai.txt").read_bytes().splitlines(keepends=True)
    cut = b"".join(line for line in lines if b"finish_reason='stop'" not in line)
    result = load(cut).result
    assert [d.code for d in result.diagnostics].count("missing-terminal") == 1 and result.complete is False
