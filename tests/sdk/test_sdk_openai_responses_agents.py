"""OpenAI Responses multi-agent (beta) read back by openai-python itself, as a program runs it: over HTTP,
`client.beta.responses.create(stream=True, betas=["responses_multi_agent=v1"])` against `streamfold serve` on
127.0.0.1 (the SDK decodes each SSE event into its `BetaResponseStreamEvent`); over a WebSocket,
`client.beta.responses.connect()` against a WebSocket server on 127.0.0.1 that sends the capture's messages
and waits for the client's (`response.create`, `response.inject`), the SDK parsing each into its
`BetaResponsesServerEvent`. Per agent, the text of its deltas and the function calls of its items, as the
SDK's events carry them, must be what the fold of that lane says; the root's final answer in the SDK's
`response.completed` is the default fold's reply; no lane's text or calls are in another's. Each export validates
as the SDK's `BetaResponse`, every agent's items in it."""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from streamfold import Folder, Result
from streamfold.testing import start_server

openai = pytest.importorskip("openai")
websockets_server = pytest.importorskip("websockets.sync.server")

CAPTURES = Path(__file__).resolve().parents[1] / "captures" / "openai-responses-agents"
SSE = sorted(CAPTURES.glob("*.sse"))
WEBSOCKET = CAPTURES / "websocket-inject.jsonl"
ROOT = "/root"
BETA = "responses_multi_agent=v1"


def folded(data: bytes, lane: str | None) -> Result:
    folder = Folder("openai-responses")
    folder._dialect.lane = lane  # type: ignore[union-attr]  # (until the common lane option: issue 26 part 11)
    folder.feed(data)
    return folder.close()


def _owner(event: Any) -> str:
    agent = getattr(event, "agent", None) or getattr(getattr(event, "item", None), "agent", None)
    return agent.agent_name if agent is not None else ROOT


def _lanes(events: list[Any]) -> dict[str, dict[str, Any]]:
    """Per agent, from the SDK's typed events: its text deltas joined and its function calls."""
    lanes: dict[str, dict[str, Any]] = defaultdict(lambda: {"text": "", "calls": []})
    for event in events:
        if event.type == "response.output_text.delta":
            lanes[_owner(event)]["text"] += event.delta
        elif event.type == "response.output_item.done" and event.item.type == "function_call":
            lanes[_owner(event)]["calls"].append((event.item.call_id, event.item.name, json.loads(event.item.arguments)))
    return lanes


def _agree(events: list[Any], data: bytes) -> None:
    lanes = _lanes(events)
    assert len(lanes) >= 2, "a multi-agent capture holds more than one agent"
    for agent, said in lanes.items():
        result = folded(data, None if agent == ROOT else agent)
        choice = result.choices[0]
        assert choice.content == said["text"], agent
        assert [(call.id, call.name, call.parsed) for call in choice.tool_calls] == said["calls"], agent
        for other, theirs in lanes.items():
            if other != agent and theirs["text"]:
                assert theirs["text"] not in choice.content, (agent, other)
    (completed,) = [event for event in events if event.type == "response.completed"]
    final = [part.text for item in completed.response.output if item.type == "message" and item.phase == "final_answer"
             and item.agent.agent_name == ROOT for part in item.content]
    if final:
        assert folded(data, None).choices[0].content == "".join(final)


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with start_server(*SSE) as server:
        yield server.url


@pytest.mark.parametrize("path", SSE, ids=lambda path: path.stem)
def test_the_sdks_beta_stream_reads_each_agent_as_its_lane_folds(path: Path, server_url: str) -> None:
    client = openai.OpenAI(api_key="sk-test", base_url=f"{server_url}/@{path.stem}/v1", max_retries=0)
    stream = client.beta.responses.create(model="gpt-5.6", input="Plan my trip", stream=True, betas=[BETA],
                                          multi_agent={"enabled": True})
    events = list(stream)
    assert events and all(type(event).__module__.startswith("openai.types.beta") for event in events)
    _agree(events, path.read_bytes())


@contextmanager
def _websocket_server(messages: list[dict[str, Any]]) -> Iterator[str]:
    """Plays the capture: sends each received message, and waits for each sent one (checking its type)."""
    seen: list[str] = []

    def play(connection: Any) -> None:
        for message in messages:
            if message["type"] == "send":
                seen.append(json.loads(connection.recv())["type"])
            else:
                connection.send(message["data"])

    with websockets_server.serve(play, "127.0.0.1", 0) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        yield f"http://127.0.0.1:{server.socket.getsockname()[1]}/v1"
        server.shutdown()
    assert seen == [json.loads(m["data"])["type"] for m in messages if m["type"] == "send"]


def test_the_sdks_websocket_connection_reads_the_agents_and_the_inject_answers() -> None:
    messages = [json.loads(line) for line in WEBSOCKET.read_text().splitlines()]
    events: list[Any] = []
    with _websocket_server(messages) as base_url:
        client = openai.OpenAI(api_key="sk-test", base_url=base_url, max_retries=0)
        with client.beta.responses.connect(extra_headers={"openai-beta": BETA}) as connection:
            for message in messages:
                if message["type"] == "send":
                    connection.send(json.loads(message["data"]))
                else:
                    events.append(connection.recv())
    kinds = [event.type for event in events]
    assert {"response.inject.created", "response.inject.failed"} <= set(kinds) and kinds[-1] == "response.completed"
    (failed,) = [event for event in events if event.type == "response.inject.failed"]
    assert failed.error.code == "response_not_found" and failed.input[0].call_id == "call_fare_2"
    data = WEBSOCKET.read_bytes()
    _agree(events, data)
    injections = folded(data, None).native["agents"]["injections"]
    assert [entry["committed"] for entry in injections] == [kind == "response.inject.created" for kind in kinds
                                                            if kind.startswith("response.inject.")]


@pytest.mark.parametrize("path", [*SSE, WEBSOCKET], ids=lambda path: path.stem)
def test_the_export_validates_as_the_sdks_beta_response(path: Path) -> None:
    from openai.types.beta import BetaResponse

    exported = folded(path.read_bytes(), None).export()
    response = BetaResponse.model_validate(exported)
    assert {item.agent.agent_name for item in response.output if item.agent} >= {ROOT, "/root/researcher"}
