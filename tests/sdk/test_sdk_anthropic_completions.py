"""The legacy Text Completions (`/v1/complete`) read by the last anthropic SDK that has them (0.49, in a
virtualenv of its own: the SDK the suite installs dropped the resource), talking HTTP to `streamfold serve`
on 127.0.0.1: `client.completions.create(stream=True)` yields each `Completion` the capture holds, whose
pieces join to the reply streamfold folds, with its stop reason and model; and the error event the replay
server puts in the stream is the SDK's API error, raised after the text before it.

The interpreter is $STREAMFOLD_ANTHROPIC_LEGACY_PYTHON (.ci/run makes it from requirements/anthropic-legacy.txt);
without it these tests skip and say how to make one.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from streamfold import fold
from streamfold.testing import start_server

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = sorted((ROOT / "tests" / "captures" / "anthropic-completions").glob("*.sse"))
LEGACY = os.environ.get("STREAMFOLD_ANTHROPIC_LEGACY_PYTHON")
pytestmark = pytest.mark.skipif(
    not LEGACY, reason="no anthropic<0.50 interpreter: python3 -m venv .venv-anthropic-legacy && "
    ".venv-anthropic-legacy/bin/pip install -r requirements/anthropic-legacy.txt, then "
    "STREAMFOLD_ANTHROPIC_LEGACY_PYTHON=$PWD/.venv-anthropic-legacy/bin/python")

#: Run by the legacy interpreter: every Completion the SDK yields, or the error it raised after them.
CLIENT = """
import json, sys
import anthropic
client = anthropic.Anthropic(base_url=sys.argv[1], api_key="sk-ant-test", max_retries=0)
seen, error = [], None
try:
    for completion in client.completions.create(model="claude-2.1", prompt="\\n\\nHuman: hi\\n\\nAssistant:",
                                                max_tokens_to_sample=64, stream=True):
        seen.append(completion.model_dump())
except anthropic.APIError as exc:
    error = type(exc).__name__ + ": " + str(exc)
print(json.dumps({"version": anthropic.__version__, "completions": seen, "error": error}))
"""


def _read(base_url: str) -> dict[str, Any]:
    done = subprocess.run([str(LEGACY), "-c", CLIENT, base_url], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    read: dict[str, Any] = json.loads(done.stdout)
    assert read["version"].startswith("0.")
    return read


@pytest.mark.parametrize("path", CAPTURES, ids=lambda path: path.stem)
def test_the_sdk_reads_each_completion_and_they_join_to_the_fold(path: Path) -> None:
    with start_server(path) as server:
        read = _read(server.url)
    result = fold(path.read_bytes())
    pieces = read["completions"]
    if b"event: " not in path.read_bytes():
        # The SDK skips every frame without an `event:` line (its Stream's `if sse.event is None: continue`):
        # a proxy that strips them leaves its user nothing, where streamfold still folds the text.
        assert pieces == [] and read["error"] is None and result.choices[0].content
        return
    assert "".join(piece["completion"] for piece in pieces) == result.choices[0].content
    assert [piece["model"] for piece in pieces] == [result.model] * len(pieces)
    if result.errors:
        assert read["error"] is not None and "Overloaded" in read["error"]
    else:
        assert read["error"] is None
        assert next((p["stop_reason"] for p in pieces if p["stop_reason"]), None) == result.choices[0].finish_reason_raw


def test_the_error_event_the_server_puts_in_is_the_sdks_api_error() -> None:
    path = CAPTURES[[p.stem for p in CAPTURES].index("text-stop-sequence")]
    with start_server(path, faults=["error-event:4"]) as server:
        read = _read(server.url)
        expected = server.expected
    assert read["error"] is not None and "overloaded_error" in read["error"]
    assert "".join(piece["completion"] for piece in read["completions"]) == expected.choices[0].content
    assert [error.code for error in expected.errors] == ["in-stream-error"]
