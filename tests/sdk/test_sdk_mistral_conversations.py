"""The `mistral-conversations` captures read by mistralai's own streaming client, as a program runs it:
`client.beta.conversations.start_stream` / `restart_stream` against `streamfold serve` on 127.0.0.1. Every
event it yields is one of its `ConversationEvents` (a capture it could not parse would raise), and what the
events say per agent is what the fold says for its lane; the export is a `ConversationResponse` the SDK
takes; each event type of the SDK's union is one the dialect folds (read from the SDK at test time, so a
new event type in a new SDK fails here)."""

from __future__ import annotations

import json
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from streamfold import fold
from streamfold.dialects.mistral_conversations.fold import EVENT_TYPES
from streamfold.testing import StreamfoldServer, start_server

pytest.importorskip("mistralai")
try:  # mistralai 2+: the SDK is the `mistralai.client` package
    import mistralai.client as mistralai
    from mistralai.client import models
    from mistralai.client.utils import unmarshal_json
except ImportError:  # 1.x
    import mistralai  # type: ignore[no-redef]
    from mistralai import models  # type: ignore[no-redef]
    from mistralai.utils import unmarshal_json  # type: ignore[no-redef]

pytestmark = pytest.mark.sdk
CAPTURES = Path(__file__).resolve().parents[1] / "captures" / "mistral-conversations"
NAMES = sorted(path.stem for path in CAPTURES.glob("*.sse"))


@pytest.fixture(scope="module")
def server() -> Iterator[StreamfoldServer]:
    with start_server(CAPTURES) as running:
        yield running


def stream(server: StreamfoldServer, name: str, *, restart: bool = False) -> list[Any]:
    client = mistralai.Mistral(api_key="test", server_url=server.url)
    headers = {"x-streamfold-capture": name}
    if restart:
        return list(client.beta.conversations.restart_stream(conversation_id="conv_1", inputs="again",
                                                             from_entry_id="msg_1", http_headers=headers))
    return list(client.beta.conversations.start_stream(inputs="hello", model="mistral-medium-latest",
                                                       http_headers=headers))


def event_tags() -> set[str]:
    """The `type` of each member of the SDK's event union."""
    annotated = typing.get_args(models.ConversationEventsData)
    for meta in annotated[1:]:  # 2+: an open union, its members by tag in its validator
        variants = getattr(getattr(meta, "func", None), "keywords", {}).get("variants")
        if variants:
            return set(variants)
    return {meta.tag for member in typing.get_args(annotated[0]) for meta in typing.get_args(member)[1:]
            if hasattr(meta, "tag")}


def sse_types() -> set[str]:
    """The SDK's `SSETypes` literal (2+: or any other string, which an open enum takes)."""
    args = typing.get_args(models.SSETypes)
    literal = next((arg for arg in args if typing.get_origin(arg) is typing.Literal), None)
    return set(typing.get_args(literal)) if literal is not None else set(args)


def test_the_sdks_event_union_is_what_the_dialect_folds() -> None:
    tags = event_tags()
    assert tags and tags == EVENT_TYPES == sse_types()


@pytest.mark.parametrize("name", NAMES)
def test_the_sdk_reads_every_event_and_the_followed_agent_says_what_the_fold_says(server: StreamfoldServer,
                                                                                  name: str) -> None:
    events = stream(server, name, restart=name == "function-calls")
    result = fold((CAPTURES / f"{name}.sse").read_bytes())
    assert [event.event for event in events] == [event.data.type for event in events]
    native = result.native
    followed = native["lanes"]["followed"] if "lanes" in native else ""
    text, reasoning, current = [], [], ""
    arguments: dict[str, str] = {}
    for event in events:
        data = event.data
        if isinstance(data, models.AgentHandoffDoneEvent):
            current = data.next_agent_id
        elif isinstance(data, models.MessageOutputEvent):
            current = data.agent_id or current
            followed = followed or current
            if current != followed:
                continue
            if isinstance(data.content, str):
                text.append(data.content)
            elif isinstance(data.content, models.ThinkChunk):
                reasoning.extend(piece.text for piece in data.content.thinking if isinstance(piece, models.TextChunk))
        elif isinstance(data, models.FunctionCallEvent):
            arguments[data.tool_call_id] = arguments.get(data.tool_call_id, "") + data.arguments
    choice = result.choices[0]
    assert "".join(text) == choice.content and ("".join(reasoning) or None) == choice.reasoning
    assert arguments == {call.id: call.arguments for call in choice.tool_calls}
    last = events[-1].data
    if isinstance(last, models.ResponseDoneEvent):
        assert result.complete and (last.usage.prompt_tokens, last.usage.completion_tokens) == \
            (result.usage.input_tokens, result.usage.output_tokens)
    elif isinstance(last, models.ResponseErrorEvent):
        assert not result.complete and last.message in result.errors[0].message
    else:
        assert not result.complete and "missing-terminal" in [d.code for d in result.diagnostics]


@pytest.mark.parametrize("name", NAMES)
def test_the_export_is_a_conversation_response_the_sdk_takes(name: str) -> None:
    result = fold((CAPTURES / f"{name}.sse").read_bytes())
    exported = result.export()
    response = unmarshal_json(json.dumps(exported), models.ConversationResponse)
    assert response.conversation_id == result.id
    kinds = [type(output).__name__ for output in response.outputs]
    assert kinds == [{"message.output": "MessageOutputEntry", "function.call": "FunctionCallEntry",
                      "tool.execution": "ToolExecutionEntry", "agent.handoff": "AgentHandoffEntry"}[entry["type"]]
                     for entry in exported["outputs"]]
