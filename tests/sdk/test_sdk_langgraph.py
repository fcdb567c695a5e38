"""The `langgraph` captures read by langgraph-sdk's own client, as a program runs it: `client.runs.stream`
against `streamfold serve` on 127.0.0.1, in the SDK's v1 form (`StreamPart`s, its `SSEDecoder` parsing
every frame) and its v2 form (typed parts with their namespace). Every part it yields is one the fold
read the same way, and each message's chunks added up by langchain-core (`AIMessageChunk` addition) are
the message the fold merged. The SDK's stream modes and v2 part types are read at test time: each is an
event the dialect knows, so a new mode in a new SDK fails here."""

from __future__ import annotations

import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from streamfold import fold
from streamfold.dialects.langgraph.fold import EVENTS
from streamfold.testing import StreamfoldServer, start_server

langgraph_sdk = pytest.importorskip("langgraph_sdk")
messages = pytest.importorskip("langchain_core.messages")
from langgraph_sdk import schema  # noqa: E402

pytestmark = pytest.mark.sdk
CAPTURES = Path(__file__).resolve().parents[1] / "captures" / "langgraph"
NAMES = sorted(path.stem for path in CAPTURES.glob("*.sse") if path.stem != "cut-inside-event")
#: What the fold compares of a merged message with LangChain's sum.
COMPARED = ("content", "additional_kwargs", "response_metadata", "tool_call_chunks", "usage_metadata", "id")


@pytest.fixture(scope="module")
def server() -> Iterator[StreamfoldServer]:
    with start_server(CAPTURES) as running:
        yield running


def stream(server: StreamfoldServer, name: str, version: str = "v1") -> list[Any]:
    """The parts the SDK yields; when it raises after some, they and the error (as the last item)."""
    parts: list[Any] = []
    with langgraph_sdk.get_sync_client(url=server.url, api_key=None) as client:
        try:
            parts.extend(client.runs.stream(None, "agent", input={"messages": []},
                                            stream_mode=["messages-tuple", "values"],
                                            headers={"x-streamfold-capture": name}, version=version))
        except ValueError as error:  # orjson's JSONDecodeError
            parts.append(error)
    return parts


def test_a_stream_cut_inside_an_event_raises_in_the_sdk_after_the_text_the_fold_keeps(server: StreamfoldServer) -> None:
    """The SDK flushes the cut event at the end and its JSON parse raises: the run's text so far is the
    caller's only if it kept the parts; streamfold keeps it and says where the stream broke."""
    parts = stream(server, "cut-inside-event")
    result = fold((CAPTURES / "cut-inside-event.sse").read_bytes())
    assert isinstance(parts[-1], ValueError) and "unexpected end of data" in str(parts[-1])
    assert "".join(part.data[0]["content"] for part in parts[:-1] if part.event == "messages") == \
        result.choices[0].content
    assert not result.complete and "unterminated-final-frame" in [d.code for d in result.diagnostics]


def test_the_sdks_stream_modes_and_v2_parts_are_events_the_dialect_knows() -> None:
    modes = set(typing.get_args(schema.StreamMode))
    assert modes and modes - {"messages-tuple"} <= EVENTS  # the request's messages-tuple streams `messages` events
    parts = {typing.get_args(typing.get_type_hints(part)["type"])[0] for part in typing.get_args(schema.StreamPartV2)}
    assert parts and parts <= EVENTS


@pytest.mark.parametrize("name", NAMES)
def test_the_sdk_reads_every_part_and_langchain_adds_the_chunks_to_the_folds_messages(server: StreamfoldServer,
                                                                                     name: str) -> None:
    parts = stream(server, name)
    result = fold((CAPTURES / f"{name}.sse").read_bytes())
    assert parts[0].event == "metadata" and parts[0].data["run_id"] == result.id
    chunks: dict[str, list[Any]] = {}
    for part in parts:
        if part.event == "messages" and part.data[0]["type"] == "AIMessageChunk":
            chunk = messages.AIMessageChunk(**{k: v for k, v in part.data[0].items() if k != "type"})
            group = chunk.id if not chunks or not chunk.id.startswith("lc_run-") else list(chunks)[-1]
            chunks.setdefault(group, []).append(chunk)
    merged = [m for m in result.native["messages"] if m["type"] == "AIMessageChunk"]
    summed = [sum(group[1:], group[0]) for group in chunks.values()]
    assert len(summed) == len(merged)
    for ours, theirs in zip(merged, summed):
        dumped = theirs.model_dump()
        assert {key: ours[key] for key in COMPARED} == {key: dumped[key] for key in COMPARED}
    if merged and not result.native.get("other_lanes"):
        assert result.choices[0].content == "".join(str(m.text) for m in summed)
    errors = [part for part in parts if part.event == "error"]
    assert bool(errors) == bool(result.errors)


@pytest.mark.parametrize("name", ["subgraph-lanes", "tool-loop-anthropic"])
def test_the_v2_parts_namespaces_are_the_folds_lanes(server: StreamfoldServer, name: str) -> None:
    parts = stream(server, name, "v2")
    result = fold((CAPTURES / f"{name}.sse").read_bytes())
    lanes = {"|".join(part["ns"]) or "root" for part in parts if part["type"] == "messages"}
    assert lanes == {result.native["lane"], *result.native.get("other_lanes", ())}
