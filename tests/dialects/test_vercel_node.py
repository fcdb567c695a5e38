"""The `vercel-ui` and `vercel-data` dialects against the `ai` package's own readers, run under node:
every capture of tests/captures/vercel-ui is read by `parseJsonEventStream` + `readUIMessageStream`
(tests/node/read_ui_stream.mjs) of ai 6 and of ai 7 (installed as `ai-v7`), and streamfold's export
must be the `UIMessage` each SDK built, part for part: text, reasoning, tool calls with their input,
state, output and approval, sources, files, data parts, and ai 7's reset steps, custom and steering
parts (the `ai7-` captures, whose chunks ai 6's schema rejects, by ai 7 alone). Every capture of tests/captures/vercel-data is read by ai 4's `processDataStream` (the last
`ai` to ship the data stream protocol, installed as `ai-v4`; tests/node/read_data_stream.mjs), and
the text, reasoning, tool calls, finish reason, usage and errors must agree.

npm installs `ai` into tests/node/node_modules once (tests/node_packages.py: kept, gitignored; reinstalled
only when package.json or its lock is newer). Without node or npm, or when the install fails (no registry), the tests
skip with the reason: the suite stays green without them.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from node_packages import NODE_DIR, missing
from streamfold import fold

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = sorted((ROOT / "tests" / "captures" / "vercel-ui").glob("*.sse"))
DATA_CAPTURES = sorted((ROOT / "tests" / "captures" / "vercel-data").glob("*.txt"))


def _read(script: str, captures: list[Path], package: str = "ai") -> dict[str, Any]:
    """{capture name: what the script's reader says of it}, for every capture at once (one node run)."""
    reason = missing("ai", "ai-v4", "ai-v7")
    if reason is not None:
        pytest.skip(f"the ai package's reader is not available: {reason}")
    done = subprocess.run(["node", str(NODE_DIR / script), *map(str, captures)],
                          capture_output=True, text=True, timeout=120, cwd=NODE_DIR,
                          env={**os.environ, "AI_PACKAGE": package})
    assert done.returncode == 0, done.stderr
    return {Path(path).name: read for path, read in json.loads(done.stdout).items()}


@pytest.fixture(scope="module", params=["ai", "ai-v7"])
def sdk_messages(request: pytest.FixtureRequest) -> dict[str, Any]:
    """{capture name: {message, error}} as ai 6's (`ai`) or ai 7's (`ai-v7`) UI message stream reader
    returns them; ai 6 is not asked of the captures of ai 7's chunks."""
    captures = CAPTURES if request.param == "ai-v7" else [path for path in CAPTURES if not path.name.startswith("ai7-")]
    return _read("read_ui_stream.mjs", captures, request.param)


@pytest.fixture(scope="module")
def sdk_data_parts() -> dict[str, Any]:
    """{capture name: {text, reasoning, toolCalls, ...}} as ai 4's data stream reader tells them."""
    return _read("read_data_stream.mjs", DATA_CAPTURES)


def _comparable(message: dict[str, Any]) -> dict[str, Any]:
    # The SDK keeps a reasoning part's chunk id in some versions; it is no content of the message.
    parts = [{key: value for key, value in part.items() if not (key == "id" and part["type"] in ("text", "reasoning"))}
             for part in message["parts"]]
    return {**message, "parts": parts}


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_the_export_is_the_message_the_sdk_reads(path: Path, sdk_messages: dict[str, Any]) -> None:
    if path.name not in sdk_messages:
        pytest.skip("an ai 7 capture: ai 6's schema rejects its chunks")
    read = sdk_messages[path.name]
    result = fold(path.read_bytes())
    sdk = read["message"]
    ours = result.export()
    if read["error"] is not None and "missing" in read["error"]:
        # The SDK's reader stopped at a chunk for a part no start opened; streamfold folded on, and says so.
        assert "part-missing-start" in [d.code for d in result.diagnostics]
        assert sdk["parts"] == ours["parts"][: len(sdk["parts"])]
        return
    assert _comparable(ours) == _comparable(sdk)
    if read["error"] is not None:  # an `error` chunk: the SDK reports it, streamfold too
        assert read["error"] in result.errors[0].message


def test_the_sdk_reader_and_the_fold_agree_on_text_reasoning_and_tool_calls(sdk_messages: dict[str, Any]) -> None:
    for path in CAPTURES:
        if path.name not in sdk_messages:
            continue
        if sdk_messages[path.name]["error"] is not None and "missing" in sdk_messages[path.name]["error"]:
            continue  # the SDK's reader stopped early (checked above)
        sdk = sdk_messages[path.name]["message"]
        choice = fold(path.read_bytes()).choices[0]
        parts = sdk["parts"]
        assert "".join(p["text"] for p in parts if p["type"] == "text") == choice.content, path.name
        assert "".join(p["text"] for p in parts if p["type"] == "reasoning") == (choice.reasoning or ""), path.name
        tools = [p for p in parts if p["type"].startswith("tool-") or p["type"] == "dynamic-tool"]
        assert [(p["toolCallId"], p.get("toolName") or p["type"][5:], p["input"]) for p in tools] == [
            (call.id, call.name, call.parsed) for call in choice.tool_calls], path.name


@pytest.mark.parametrize("path", DATA_CAPTURES, ids=lambda p: p.name)
def test_the_data_stream_reader_and_the_fold_agree(path: Path, sdk_data_parts: dict[str, Any]) -> None:
    read = sdk_data_parts[path.name]
    assert read["error"] is None, read["error"]
    result = fold(path.read_bytes())
    choice = result.choices[0]
    assert (choice.content, choice.reasoning or "") == (read["text"], read["reasoning"])
    whole = [(call["toolCallId"], call["toolName"], call["args"]) for call in read["toolCalls"]]
    # A call cut before its `9:` part is only in the reader's streaming parts: no args to compare.
    streamed = [(call_id, part["toolName"], None) for call_id, part in read["streamed"].items()
                if call_id not in {call[0] for call in whole}]
    assert [(call.id, call.name, call.parsed) for call in choice.tool_calls] == whole + streamed
    assert choice.finish_reason_raw == read["finishReason"] or read["finishReason"] is None
    if read["usage"] is not None:
        assert result.usage is not None
        assert (result.usage.input_tokens, result.usage.output_tokens) == (
            read["usage"]["promptTokens"], read["usage"]["completionTokens"])
    assert [e.message for e in result.errors if e.code == "in-stream-error"] == [
        f"the stream sent an error part: {said}" for said in read["errors"]]
    assert result.id == (read["messageIds"][0] if read["messageIds"] else None)
