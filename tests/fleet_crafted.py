"""A fleet of crafted captures whose answers are known, for the tests of `fleet query` and `fleet report`.

Each capture is a JSONL capture record (`streamfold.fleet.records`): an SSE body built frame by frame, so
its arrival times can name the offset of each frame, and request metadata. What each one is, and so what
every report must count, is said beside it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fleet_helpers import fold_here

GATEWAY = "gw.example.test"
ANTHROPIC = "api.anthropic.com"
CHAT_URL = f"https://{GATEWAY}/v1/chat/completions"
MESSAGES_URL = f"https://{ANTHROPIC}/v1/messages"


def _chunk(delta: dict[str, Any], finish: str | None = None, model: str | None = "gpt-x") -> dict[str, Any]:
    chunk: dict[str, Any] = {"id": "c", "object": "chat.completion.chunk",
                             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if model is not None:
        chunk["model"] = model
    return chunk


def _call(arguments: str) -> dict[str, Any]:
    return {"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                            "function": {"name": "lookup", "arguments": arguments}}]}


USAGE = {"id": "c", "object": "chat.completion.chunk", "model": "gpt-x", "choices": [],
         "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}


def sse(*events: dict[str, Any] | str) -> list[bytes]:
    """Each event as one SSE frame (a str is sent as it is: `[DONE]`, or a frame with its `event:` line)."""
    return [(event if isinstance(event, str) and event.startswith("event:") else
             f"data: {event if isinstance(event, str) else json.dumps(event)}\n\n").encode() for event in events]


def _anthropic(*events: dict[str, Any]) -> list[bytes]:
    return sse(*(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n" for event in events))


_MESSAGE_START = {"type": "message_start", "message": {
    "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", "content": [], "stop_reason": None,
    "usage": {"input_tokens": 5, "output_tokens": 1}}}
_THINKING = [_MESSAGE_START,
             {"type": "content_block_start", "index": 0,
              "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
             {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Hm."}}]
_SIGNED = [{"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqSig=="}},
           {"type": "content_block_stop", "index": 0},
           {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 4}},
           {"type": "message_stop"}]


def record(name: str, frames: list[bytes], *, url: str = CHAT_URL, times: list[float] | None = None,
           **fields: Any) -> dict[str, Any]:
    """A capture record of `frames`; `times`: the seconds after the request at which each frame arrived."""
    value: dict[str, Any] = {"id": name, "body": b"".join(frames).decode(), "method": "POST", "url": url,
                             "request_model": "gpt-req", "status": 200, **fields}
    if times is not None:
        offsets = [sum(len(frame) for frame in frames[:index]) for index in range(len(frames))]
        value["arrivals"] = [[offset, seconds] for offset, seconds in zip(offsets, times, strict=True)]
    return value


def records(*, timed: bool = True) -> list[dict[str, Any]]:
    """The crafted captures. On the gateway (openai-chat, model gpt-x): 5 streams, 3 cut (2 upstream, 1 by the
    client), 1 reporting usage, 3 tool calls of which 1 has arguments that are not JSON, 3 recorded with
    arrival times (ttfb .1 .3 .2, ttft .2 .5 .4) of which one stalled once; one more reply names no model (the
    request's, gpt-req, counts). On api.anthropic.com (claude-x): 2 streams, 1 cut inside a thinking block
    (its signature dropped), 1 signed. One record has no body (unreadable)."""
    role = _chunk({"role": "assistant", "content": ""})

    def when(*seconds: float) -> list[float] | None:
        return list(seconds) if timed else None

    return [
        record("c1", sse(role, _chunk({"content": "Hi"}), _chunk(_call('{"q": 1}'), "tool_calls"), USAGE, "[DONE]"),
               times=when(0.1, 0.2, 0.25, 0.3, 0.3)),
        record("c2", sse(role, _chunk({"content": "Hi"}), _chunk(_call('{"q": '), "tool_calls"), "[DONE]"),
               times=when(0.3, 0.5, 0.6, 0.6)),
        record("c3", sse(role, _chunk({"content": "Hi"}), _chunk(_call('{"q": 2}'))),
               times=when(0.2, 0.4, 3.5)),
        record("c4", sse(role, _chunk({"content": "Hel"})), outcome="client-cut"),
        record("c5", sse(_chunk({"role": "assistant", "content": "\x1b[31mred"}, model=None))),
        record("a1", _anthropic(*_THINKING, *_SIGNED), url=MESSAGES_URL, request_model="claude-req"),
        record("a2", _anthropic(*_THINKING), url=MESSAGES_URL, request_model="claude-req"),
        {"id": "broken", "url": CHAT_URL},
    ]


def make_fleet(directory: Path, *, timed: bool = True) -> Path:
    """A fleet of `records()` in `directory`/fleet, folded in this process."""
    source = directory / "records.jsonl"
    source.write_text("".join(json.dumps(value) + "\n" for value in records(timed=timed)), encoding="utf-8")
    out = directory / "fleet"
    fold_here([source], out)
    return out


def make_empty_fleet(directory: Path) -> Path:
    """A fleet no capture was folded into (its one input, a directory, holds no file)."""
    source = directory / "nothing"
    source.mkdir()
    out = directory / "empty"
    fold_here([source], out)
    return out
