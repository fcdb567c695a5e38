"""`assert_reply` names the real cause of frames a client lost, told apart: a client that parses
each network read on its own loses the frames split across two reads (not "it stopped reading"),
and a client that stopped reading early loses the last frames. Real clients over the real replay
server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from streamfold import fold
from streamfold.testing import ReplyMismatchError, assert_reply, start_server

ROOT = Path(__file__).resolve().parents[2]
PLAIN = ROOT / "examples" / "openai-plain-text.sse"


def _naive_per_read(url: str) -> dict[str, Any]:
    """The mistake: each network read split into lines and parsed alone, nothing carried over."""
    content, finish = "", None
    with httpx.stream("POST", url, json={"stream": True}, timeout=30) as response:
        for read in response.iter_raw():
            for line in read.split(b"\n"):
                if not line.startswith(b"data: ") or line == b"data: [DONE]":
                    continue
                try:
                    chunk = json.loads(line[6:])
                except ValueError:
                    continue  # half a frame: the other half is in the next read, and is dropped there too
                for choice in chunk.get("choices", []):
                    content += choice.get("delta", {}).get("content") or ""
                    finish = choice.get("finish_reason") or finish
    return {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}]}


def _stops_after(url: str, frames: int) -> str:
    """A correct parser (bytes kept until the blank line) that stops reading after `frames` frames."""
    content, buffer, seen = "", b"", 0
    with httpx.stream("POST", url, json={"stream": True}, timeout=30) as response:
        for read in response.iter_raw():
            buffer += read
            while b"\n\n" in buffer and seen < frames:
                frame, buffer = buffer.split(b"\n\n", 1)
                seen += 1
                data = frame.removeprefix(b"data: ")
                if data != b"[DONE]":
                    content += json.loads(data)["choices"][0]["delta"].get("content") or ""
            if seen >= frames:
                break
    return content


def _cause(built: Any, expected: Any) -> str:
    with pytest.raises(ReplyMismatchError) as caught:
        assert_reply(built, expected)
    return str(caught.value).split("Probable cause: ", 1)[1]


def test_a_client_that_parses_each_read_alone_is_told_its_frames_were_split_across_reads() -> None:
    # Writes of 40 bytes, 2 ms apart: each read holds one write, and almost every frame spans two or more.
    with start_server(PLAIN, faults=["chunk:40", "slow:2"]) as server:
        built = _naive_per_read(f"{server.base_url_for('openai')}/chat/completions")
        cause = _cause(built, server.expected)
    assert "split across two network reads" in cause and "parses each read on its own" in cause, cause
    assert "stopped reading" not in cause
    assert _cause(built["choices"][0]["message"]["content"], PLAIN) == cause  # told from the text alone too


def test_a_client_that_stopped_reading_is_told_so() -> None:
    with start_server(PLAIN) as server:
        text = _stops_after(f"{server.base_url_for('openai')}/chat/completions", 20)
    reference = fold(PLAIN.read_bytes())
    assert text and reference.choices[0].content.startswith(text) and text != reference.choices[0].content
    cause = _cause(text, PLAIN)
    assert cause.startswith("the client lost the last frame(s) 20, 21,") and "stopped reading" in cause, cause


def test_the_last_frames_lost_by_a_client_that_read_on_to_the_finish_were_not_a_stop() -> None:
    """The same text lost at the end, but the client's reply has the finish reason, which only the frame
    after that text carries: it read on, so the frames were lost on the way (split across reads)."""
    reference = fold(PLAIN.read_bytes())
    start, _, frame = reference.text_runs()[-1]
    text = reference.choices[0].content[:start]
    stopped = _cause(text, PLAIN)
    read_on = _cause({"choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                   "finish_reason": "stop"}]}, PLAIN)
    assert f"lost the last frame(s) {frame}: it stopped reading" in stopped
    assert f"dropped frame(s) {frame} and read on to the end: a frame split across two network reads" in read_on
