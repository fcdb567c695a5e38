#!/usr/bin/env python3
"""Benchmark: `streamfold.tables.tables()` beside the fold it flattens.

For a small real capture and generated OpenAI chat streams (1k and 100k
frames; text, and text with a tool call every 50 frames), prints the best time of `fold(data)`, of
`tables(result, id)` and of `tables(result, id, frames=True)` on that result,
and what the tables add to the fold. A benchmark, not a test: it prints a
table and never fails.

Run:  .venv/bin/python benchmarks/bench_tables.py [--frames 1000,100000] [--budget SECONDS]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from streamfold import fold
from streamfold.tables import tables

SMALL = Path(__file__).resolve().parents[1] / "tests" / "captures" / "openai" / "a2-tool-call-empty-arguments.sse"


def stream(frames: int, tools: bool) -> bytes:
    """An OpenAI chat stream of `frames` frames: content deltas (with a tool call every 50th when
    `tools`), a finish reason, usage and `[DONE]`."""
    head = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "model": "gpt-4o-2024-08-06"}
    out = []
    for index in range(frames - 3):
        if tools and index % 50 == 49:
            delta: dict[str, Any] = {"tool_calls": [{"index": index // 50, "id": f"call_{index}", "function": {
                "name": "get_weather", "arguments": json.dumps({"city": "Zürich", "day": index})}}]}
        else:
            delta = {"content": f" token{index} —"}
        out.append({**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
    out.append({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls" if tools else "stop"}]})
    out.append({**head, "choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": frames,
                                                 "total_tokens": frames + 12}})
    lines = [f"data: {json.dumps(frame, ensure_ascii=False)}\n\n" for frame in out]
    return ("".join(lines) + "data: [DONE]\n\n").encode()


def best(call: Callable[[], Any], budget: float) -> float:
    """The best of repeated runs of `call` (at least 3), until `budget` seconds are spent."""
    times: list[float] = []
    spent = 0.0
    while len(times) < 3 or spent < budget:
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
        spent += times[-1]
        if len(times) >= 1000:
            break
    return min(times)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:10.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", default="1000,100000", help="frames of the generated streams")
    parser.add_argument("--budget", type=float, default=2.0, help="seconds spent repeating each timing")
    options = parser.parse_args()
    inputs = [("small capture (a2, 1 tool call)", SMALL.read_bytes())]
    for frames in (int(value) for value in options.frames.split(",")):
        for tools in (False, True):
            inputs.append((f"{'tools' if tools else 'text'} {frames} frames", stream(frames, tools)))
    print(f"{'input':34} {'frames':>8} {'fold ms':>10} {'tables ms':>10} {'+frames ms':>10} "
          f"{'tables/fold':>11} {'+frames/fold':>12}")
    for name, data in inputs:
        result = fold(data)
        fold_time = best(lambda data=data: fold(data), options.budget)
        table_time = best(lambda result=result: tables(result, "bench"), options.budget)
        frames_time = best(lambda result=result: tables(result, "bench", frames=True), options.budget)
        print(f"{name:34} {result.frame_counts['total']:8d} {_ms(fold_time)} {_ms(table_time)} {_ms(frames_time)} "
              f"{table_time / fold_time:10.1%} {frames_time / fold_time:11.1%}")


if __name__ == "__main__":
    main()
