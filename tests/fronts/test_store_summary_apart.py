"""The summary fold of a big exchange runs in a process of its own, not on a thread of the recording
process (where it would hold the GIL the proxy's relay needs for as long as it folds): the summary is the
one the fold in this thread gives, and the store's summary thread spent next to no CPU getting it."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

import pytest

from streamfold.store import CaptureStore
from streamfold.store.summarizer import FOLD_APART_BYTES, FoldProcess, summarize_recorded

TASKS = Path("/proc/self/task")


def body_of(frames: int) -> bytes:
    """An OpenAI Chat stream of `frames` content chunks."""
    chunk = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o",
             "choices": [{"index": 0, "delta": {"content": " word"}, "finish_reason": None}]}
    frame = b"data: " + json.dumps(chunk).encode() + b"\n\n"
    return frame * frames + b"data: [DONE]\n\n"


def thread_cpu(thread: threading.Thread) -> float:
    """User + system CPU seconds a thread of this process has used (Linux /proc)."""
    fields = (TASKS / str(thread.native_id) / "stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not TASKS.is_dir(), reason="reads a thread's CPU time from /proc")
def test_a_big_exchange_is_summarized_in_another_process(tmp_path: Path) -> None:
    body = body_of(20_000)  # 3 MB: a fold of about a tenth of a second
    assert len(body) >= 8 * FOLD_APART_BYTES
    with CaptureStore.open(str(tmp_path / "big.sqlite")) as store:
        summarizing = next(thread for thread in threading.enumerate()
                           if thread.name.startswith("streamfold-store-summary"))
        exchange = store.begin("POST", "https://api.openai.com/v1/chat/completions", body=b'{"stream": true}')
        exchange.response(200, [("content-type", "text/event-stream")], at=0.1)
        reads = [body[start:start + 65536] for start in range(0, len(body), 65536)]
        for number, chunk in enumerate(reads):
            exchange.read(chunk, at=0.2 + number / 1000)
        offsets = [(start, 0.2 + number / 1000) for number, start in enumerate(range(0, len(body), 65536))]
        began = time.thread_time()
        here = exchange.summarize(reads, offsets, "complete")  # the same fold, in this thread
        folding = time.thread_time() - began
        spent = thread_cpu(summarizing)
        summary = exchange.end().result(timeout=120)
        spent = thread_cpu(summarizing) - spent
    assert summary == here and summary is not None and summary.frames == 20_001 and summary.complete
    # Handing 3.5 MB over costs a copy, not a fold (the thread CPU counts in ticks of 10 ms).
    assert spent <= max(folding / 3, 0.03), (spent, folding)


def call_of(body: bytes, **changed: object) -> tuple[object, ...]:
    """The arguments of `summarize_recorded` for one exchange of `body`, read in one piece."""
    recorded = {"status": 200, "response_headers": (("content-type", "text/event-stream"),), "request_headers": (),
                "url": "https://api.openai.com/v1/chat/completions", "method": "POST", "outcome": "complete",
                "error": None, **changed}
    return 7, "store.sqlite#7", [body], [(0, 0.1)], recorded, 1_800_000_000.0, "gpt-4o"


def test_the_child_folds_as_this_thread_does_and_raises_what_the_fold_raises() -> None:
    folds = FoldProcess()
    try:
        assert folds.summarize(*call_of(body_of(50))) == summarize_recorded(*call_of(body_of(50)))
        with pytest.raises(TypeError):  # an unknown keyword of stored_capture, raised in the child
            folds.summarize(*call_of(body_of(5), unknown=1))
        assert folds.summarize(*call_of(body_of(3))).frames == 4  # and it goes on
    finally:
        folds.close()


def test_where_no_process_starts_the_summary_is_folded_here(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    folds = FoldProcess()
    assert folds.summarize(*call_of(body_of(50))) == summarize_recorded(*call_of(body_of(50)))
    folds.close()
