"""Managed Agents session streams read by the anthropic SDK's own stream client
(`client.beta.sessions.events.stream(..., event_deltas=[...])`) from `streamfold serve` on 127.0.0.1: every
event of every capture arrives as a typed member of `BetaManagedAgentsStreamSessionEvents`, in order, and
the first turn of the primary thread as the SDK's objects tell it (its messages' text, its tool uses' id,
name and input) is what the fold says. The union's members are read from the SDK at test time, so an event
type a new SDK adds fails here until the dialect folds or names it."""

from __future__ import annotations

import json
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from streamfold import fold
from streamfold.dialects.anthropic_agents.events import BUFFERED_TYPES, PREVIEW_TYPES
from streamfold.testing import start_server

anthropic = pytest.importorskip("anthropic")
sessions = pytest.importorskip("anthropic.types.beta.sessions")
pydantic = pytest.importorskip("pydantic")

CAPTURES = sorted((Path(__file__).resolve().parents[1] / "captures" / "anthropic-agents").glob("*.sse"))
UNION = sessions.BetaManagedAgentsStreamSessionEvents
MEMBERS = typing.get_args(typing.get_args(UNION)[0])
_ENDS = ("session.status_terminated", "session.deleted")


def _types_of(member: Any) -> tuple[str, ...]:
    return typing.get_args(member.model_fields["type"].annotation)


def test_every_event_type_of_the_sdks_union_is_folded_or_named() -> None:
    sdk = {kind for member in MEMBERS for kind in _types_of(member)}
    assert len(sdk) == len(MEMBERS) >= 44
    assert sdk == BUFFERED_TYPES | PREVIEW_TYPES, (sdk - BUFFERED_TYPES - PREVIEW_TYPES,
                                                   BUFFERED_TYPES | PREVIEW_TYPES - sdk)


def _stream(base_url: str) -> list[Any]:
    """Every event the SDK's stream client yields for a session stream served at `base_url`."""
    with anthropic.Anthropic(base_url=base_url, api_key="sk-ant-test", max_retries=0) as client, \
            client.beta.sessions.events.stream("sesn_01streamfold", event_deltas=["agent.message", "agent.thinking"]) \
            as stream:
        return list(stream)


def _first_turn(events: list[Any]) -> dict[str, Any]:
    """The primary thread's first turn as a client reads the SDK's objects: the messages' text, the deltas of
    a preview no message concluded (what it showed last), the tool uses."""
    texts: list[str] = []
    previews: dict[str, list[str]] = {}
    calls: list[tuple[str, str, dict[str, Any]]] = []
    started = False
    for event in events:
        if getattr(event, "session_thread_id", None):
            continue
        started = started or event.type.startswith(("user.", "agent.", "span.", "event_"))
        if event.type == "agent.message":
            texts.append("".join(block.text for block in event.content if block.type == "text"))
            previews.pop(event.id, None)
        elif event.type == "event_delta":
            previews.setdefault(event.event_id, []).append(event.delta.content.text)
        elif event.type == "span.model_request_end":
            previews.clear()  # the request's end closes what it never concluded
        elif event.type in ("agent.tool_use", "agent.mcp_tool_use", "agent.custom_tool_use"):
            calls.append((event.id, event.name, event.input))
        elif started and (event.type in _ENDS or (event.type == "session.status_idle"
                                                  and event.stop_reason.type != "requires_action")):
            break
    return {"content": "".join(texts) + "".join("".join(pieces) for pieces in previews.values()), "calls": calls}


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    with start_server(*CAPTURES) as running:
        yield running


@pytest.mark.parametrize("path", CAPTURES, ids=lambda path: path.stem)
def test_the_sdk_reads_every_event_typed_and_its_first_turn_is_the_fold(path: Path, server: Any) -> None:
    data = path.read_bytes()
    events = _stream(f"{server.url}/@{path.stem}")
    sent = [json.loads(line[6:]) for line in data.decode().splitlines() if line.startswith("data: ")]
    assert [event.type for event in events] == [payload["type"] for payload in sent]
    assert all(isinstance(event, MEMBERS) for event in events)
    result = fold(data)
    turn, choice = _first_turn(events), result.choices[0]
    assert turn["content"] == choice.content
    assert turn["calls"] == [(call.id, call.name, call.parsed) for call in choice.tool_calls]


def test_the_error_the_server_puts_in_is_the_sdks_typed_session_error() -> None:
    path = next(path for path in CAPTURES if path.stem == "tool-use-mcp-end-turn")
    with start_server(path, faults=["error-event:5"]) as server:
        events = _stream(server.url)
        expected = server.expected
    assert events[-1].type == "session.error" and events[-1].error.retry_status.type == "terminal"
    assert [error.code for error in expected.errors] == ["in-stream-error"] and not expected.complete
    assert _first_turn(events)["content"] == expected.choices[0].content == "I'll count the files first."


@pytest.mark.parametrize("path", CAPTURES, ids=lambda path: path.stem)
def test_the_export_is_an_events_page_the_sdks_history_types_take(path: Path) -> None:
    result = fold(path.read_bytes())
    exported = result.export()
    history = pydantic.TypeAdapter(list[sessions.BetaManagedAgentsSessionEvent])
    if "cut_previews" in (result.native or {}):
        # The message a cut stream was in is exported as its preview showed it, never processed: no history
        # event (`processed_at` is null), and the only one the SDK's history types refuse.
        assert [event["processed_at"] for event in exported["data"]].count(None) == 1
        exported["data"] = [event for event in exported["data"] if event["processed_at"] is not None]
    events = history.validate_python(exported["data"])
    assert [event.type for event in events] == [event["type"] for event in exported["data"]]
