"""Gemini Live captures read by google-genai's own live client (`client.aio.live.connect`, then
`session.receive()` turn after turn) from a real WebSocket server on 127.0.0.1 (TLS: the SDK always dials
`wss://` with an API key) that answers the client's setup and then sends the capture's server messages as
they were recorded, binary or text. Every message arrives as a `LiveServerMessage`; the turn the fold
follows, as the SDK's objects tell it (its text or transcription, its thoughts, its function calls, its
usage, how it ended), is what the fold says. The message and `serverContent` fields are read from the SDK
at test time, so a field a new SDK adds fails here until the dialect folds or names it."""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
from pathlib import Path
from typing import Any

import pytest

from streamfold import fold
from streamfold.dialects.gemini_live.events import CONTENT_FIELDS, MESSAGE_FIELDS
from tls_certificates import self_signed

genai = pytest.importorskip("google.genai")
websockets_server = pytest.importorskip("websockets.asyncio.server")
from google.genai import errors, types  # noqa: E402

CAPTURES = Path(__file__).resolve().parents[1] / "captures" / "gemini-live"
CAPTURES_ALL = sorted([*CAPTURES.glob("*.jsonl"), *CAPTURES.glob("*.ndjson")])


def test_every_field_of_a_live_server_message_is_folded_or_named() -> None:
    assert {field.alias for field in types.LiveServerMessage.model_fields.values()} == MESSAGE_FIELDS
    assert {field.alias for field in types.LiveServerContent.model_fields.values()} == CONTENT_FIELDS


def _received(path: Path) -> list[str | bytes]:
    """The capture's server messages as the socket carried them: text, or the bytes of a binary message (an
    NDJSON capture holds the server's messages alone, each sent as text)."""
    if path.suffix == ".ndjson":
        return list(path.read_text().splitlines())
    messages: list[str | bytes] = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record["type"] == "receive":
            messages.append(base64.b64decode(record["data"]) if record["opcode"] == 2 else record["data"])
    return messages


async def _read(messages: list[str | bytes], tls: tuple[Path, Path]) -> tuple[dict[str, Any], list[Any], Any]:
    """Serve `messages` to google-genai's live client; what setup it sent, every message it yielded, and the
    error it raised for a message that is no LiveServerMessage (None when the socket just closed)."""
    sent: dict[str, Any] = {}

    async def answer(socket: Any) -> None:
        sent.update(json.loads(await socket.recv()))
        for message in messages:
            await socket.send(message)

    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(*map(str, tls))
    async with websockets_server.serve(answer, "127.0.0.1", 0, ssl=server_context) as server:
        port = server.sockets[0].getsockname()[1]
        client = genai.Client(api_key="test-key", http_options=types.HttpOptions(
            base_url=f"https://127.0.0.1:{port}", async_client_args={"ssl": ssl.create_default_context(
                cafile=str(tls[0]))}))
        seen: list[Any] = []
        raised = None
        async with client.aio.live.connect(model="gemini-live-2.5-flash",
                                           config=types.LiveConnectConfig(response_modalities=["TEXT"])) as session:
            try:
                while True:
                    async for message in session.receive():
                        seen.append(message)
            except errors.APIError as error:  # 1000: the server closed the socket once its messages were sent
                raised = None if error.code == 1000 else error
            except TypeError as error:  # google-genai's raise_error(None, ...) for an envelope without a `code`
                raised = error
    return sent, seen, raised


def _turn(seen: list[Any], number: int = 1) -> dict[str, Any]:
    """Turn `number` as a client reads the SDK's messages: each output part or function call, or a transcription,
    opens a turn when none is open; `turn_complete` (the SDK's own end of `receive()`) and `interrupted` close it."""
    turns: list[dict[str, Any]] = []
    open_turn: dict[str, Any] | None = None
    for message in seen:
        content = message.server_content
        parts = (content.model_turn.parts or []) if content and content.model_turn else []
        transcript = content.output_transcription.text if content and content.output_transcription else None
        if (parts or transcript or message.tool_call) and open_turn is None:
            open_turn = {"text": "", "thought": "", "spoken": "", "calls": [], "usage": None, "end": None}
            turns.append(open_turn)
        last = open_turn or (turns[-1] if turns else None)
        if last is None:
            continue
        for part in parts:
            last["thought" if part.thought else "text"] += part.text or ""
        last["spoken"] += transcript or ""
        if message.tool_call:
            last["calls"] += [(call.id, call.name, call.args) for call in message.tool_call.function_calls]
        if message.usage_metadata:
            last["usage"] = message.usage_metadata.total_token_count
        if content and (content.interrupted or content.turn_complete) and open_turn is not None:
            open_turn["end"] = "interrupted" if content.interrupted else "turnComplete"
            open_turn = None
    return turns[number - 1]


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    made = self_signed(tmp_path_factory.mktemp("live-tls"))
    if made is None:
        pytest.skip("cryptography is not installed: no certificate for the TLS server google-genai dials")
    return made


@pytest.mark.parametrize("path", CAPTURES_ALL, ids=lambda path: path.name)
def test_the_sdk_reads_every_message_and_the_turn_folded_is_its_turn(path: Path, tls: tuple[Path, Path]) -> None:
    messages = _received(path)
    sent, seen, raised = asyncio.run(_read(messages, tls))
    assert sent["setup"]["model"] == "models/gemini-live-2.5-flash"
    result = fold(path.read_bytes())
    # `connect()` reads the first message itself (`setupComplete`): `receive()` yields every one after it, but
    # for one that is no LiveServerMessage (the error envelope), where it raises.
    assert "setupComplete" in json.loads(messages[0]) and len(seen) == len(messages) - 1 - bool(raised)
    assert all(isinstance(message, types.LiveServerMessage) for message in seen)
    assert (raised is not None) == bool(result.errors)
    if raised is not None:
        # Google's error envelope as a message: google-genai 3.6.1 calls APIError.raise_error(response.get("code"))
        # with None (the code is inside `error`) and fails comparing it: a TypeError, not its APIError, where
        # streamfold says the server's error and keeps the text before it.
        assert type(raised) is TypeError and "UNAVAILABLE" in result.errors[0].raw
        assert result.choices[0].content == _turn(seen)["text"]
        return
    choice, turn = result.choices[0], _turn(seen)
    assert choice.content == (turn["text"] or turn["spoken"]) and (choice.reasoning or "") == turn["thought"]
    assert [(call.id, call.name, call.parsed) for call in choice.tool_calls] == turn["calls"]
    assert (result.usage.total_tokens if result.usage else None) == turn["usage"]
    assert choice.finish_reason_raw == turn["end"] and result.complete == (turn["end"] is not None)
