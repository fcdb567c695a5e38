"""Every capture through every layer, whole, byte by byte and in random chunks
(`feeding.tr_framer`, `feeding.tr_fold`), and through JSON and back."""

from __future__ import annotations

from pathlib import Path

import pytest

from feeding import tr_fold, tr_framer
from streamfold import EventStreamParser, JSONArrayParser, NDJSONParser, SSEParser, fold, sniff
from streamfold.framing import WebSocketParser
from streamfold.framing._runs import NDJSONRunParser, SSERunParser
from streamfold.services import read_capture
from values import assert_a_value

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = sorted([*(path for path in (ROOT / "tests" / "captures").rglob("*")
                     if path.is_file() and not path.name.endswith((".json", ".md"))),
                   *(ROOT / "examples").glob("*.sse")])
IDS = [str(path.relative_to(ROOT)) for path in CAPTURES]
PLAIN = {"sse": SSEParser, "ndjson": NDJSONParser, "json-array": JSONArrayParser,
         "aws-eventstream": EventStreamParser, "websocket": WebSocketParser}
WITH_RUNS = {"sse": SSERunParser, "ndjson": NDJSONRunParser}


def stream_of(path: Path) -> bytes:
    """A capture's stream: a HAR (a browser's WebSocket export) is read by the input layer first."""
    return read_capture(path.read_bytes()).body if path.suffix == ".har" else path.read_bytes()


@pytest.mark.parametrize("path", CAPTURES, ids=IDS)
def test_framing_is_the_same_however_fed(path: Path) -> None:
    data = stream_of(path)
    transport = sniff(data, final=True) or "sse"
    frames = tr_framer(PLAIN[transport], data)
    if transport in WITH_RUNS:
        # The run-splitting parser (the fold's) makes exactly the plain parser's frames.
        assert tr_framer(WITH_RUNS[transport], data) == frames


@pytest.mark.parametrize("path", CAPTURES, ids=IDS)
def test_the_fold_is_the_same_however_fed(path: Path) -> None:
    tr_fold(stream_of(path))


# The dialects each folder of captures holds (a folder is named for its dialect, but for these).
#: Bedrock's InvokeModel carries another vendor's events: Claude's are `anthropic`.
DIALECTS_OF_FOLDER = {"openai": ("openai-chat", "openai-completions"), "examples": ("openai-chat",),
                      "bedrock": ("bedrock", "anthropic"), "cohere": ("cohere", "cohere-v1"),
                      "websocket": ("openai-responses", "openai-realtime"),
                      #: Multi-agent responses (beta), apart from the captures the SDK's non-beta accumulator reads.
                      "openai-responses-agents": ("openai-responses",),
                      #: Claude Code's stream-json envelopes carry Anthropic events: `anthropic`.
                      "claude-stream-json": ("anthropic",)}


@pytest.mark.parametrize("path", CAPTURES, ids=IDS)
def test_a_result_is_a_value(path: Path) -> None:
    """Read back from its JSON, a Result is equal to itself and exports the same object."""
    result = fold(stream_of(path))
    assert result.dialect in DIALECTS_OF_FOLDER.get(path.parent.name, (path.parent.name,))
    assert_a_value(result)
