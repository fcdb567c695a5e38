#!/usr/bin/env python3
"""Benchmark: `streamfold fleet report`'s queries over a fleet of generated captures.

Writes N capture records (JSONL) of mixed kinds — OpenAI chat replies with a tool call (1 in 10 with
arguments that are not JSON), cut ones, Anthropic replies with a signed thinking block (1 in 5 cut inside
it), arrival times on half of them, four gateways, eight models — folds them into a fleet once, then
prints the best time of each report (and of opening the fleet) over it. A benchmark, not a test: it
prints a table and never fails.

Run:  .venv/bin/python benchmarks/bench_fleet_report.py [--captures 100000] [--jobs 2] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from streamfold.fleet.engines import LocalEngine
from streamfold.fleet.query import open_fleet
from streamfold.fleet.report import REPORTS, run_report
from streamfold.fleet.run import fold_fleet

GATEWAYS = ("api.openai.com", "gw-a.example.test", "gw-b.example.test", "api.anthropic.com")


def _data(value: dict[str, Any]) -> str:
    return f"data: {json.dumps(value)}\n\n"


def _chat(rng: random.Random, model: str) -> list[str]:
    head = {"id": "c", "object": "chat.completion.chunk", "model": model}
    frames = [_data({**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})]
    frames += [_data({**head, "choices": [{"index": 0, "delta": {"content": f" word{index}"}}]})
               for index in range(rng.randint(3, 20))]
    arguments = '{"city": "Oslo"' + ("}" if rng.random() > 0.1 else "")
    frames.append(_data({**head, "choices": [{"index": 0, "delta": {"tool_calls": [{
        "index": 0, "id": "call_1", "function": {"name": "weather", "arguments": arguments}}]},
        "finish_reason": "tool_calls"}]}))
    if rng.random() < 0.7:
        frames.append(_data({**head, "choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 20,
                                                                "total_tokens": 29}}))
    frames.append("data: [DONE]\n\n")
    return frames[:rng.randint(2, len(frames) - 1)] if rng.random() < 0.15 else frames


def _anthropic(rng: random.Random, model: str) -> list[str]:
    def event(value: dict[str, Any]) -> str:
        return f"event: {value['type']}\ndata: {json.dumps(value)}\n\n"

    frames = [event({"type": "message_start", "message": {"id": "msg", "type": "message", "role": "assistant",
                                                          "model": model, "content": [],
                                                          "usage": {"input_tokens": 5, "output_tokens": 1}}}),
              event({"type": "content_block_start", "index": 0,
                     "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
              event({"type": "content_block_delta", "index": 0,
                     "delta": {"type": "thinking_delta", "thinking": "Let me think."}})]
    if rng.random() < 0.2:
        return frames
    return [
        *frames,
        event({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "Eq=="}}),
        event({"type": "content_block_stop", "index": 0}),
        event({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        event({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Hello."}}),
        event({"type": "content_block_stop", "index": 1}),
        event({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}}),
        event({"type": "message_stop"})]


def records(count: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for index in range(count):
        host = rng.choice(GATEWAYS)
        anthropic = host == "api.anthropic.com"
        model = rng.choice(("claude-a", "claude-b") if anthropic else ("gpt-a", "gpt-b", "gpt-c", "gpt-d"))
        frames = _anthropic(rng, model) if anthropic else _chat(rng, model)
        value: dict[str, Any] = {"id": index, "body": "".join(frames), "url": f"https://{host}/v1/x",
                                 "request_model": model, "started_at": 1765078200 + index, "status": 200}
        if rng.random() < 0.5:
            start, offset, arrivals = rng.uniform(0.05, 0.8), 0, []
            for position, frame in enumerate(frames):
                arrivals.append([offset, round(start + 0.02 * position + (3.0 if rng.random() < 0.01 else 0), 4)])
                offset += len(frame.encode())
            value["arrivals"] = arrivals
        out.append(value)
    return out


def best(function: Any, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--captures", type=int, default=100_000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-fleet-report-"))
    try:
        source = work / "records.jsonl"
        source.write_text("".join(json.dumps(value) + "\n" for value in records(options.captures)), encoding="utf-8")
        started = time.perf_counter()
        run = fold_fleet([str(source)], str(work / "fleet"), engine=LocalEngine(options.jobs))
        print(f"{run.summary()}  [{time.perf_counter() - started:.1f} s]")
        size = sum(path.stat().st_size for path in (work / "fleet").rglob("*.parquet"))
        print(f"Parquet: {size / 1e6:.1f} MB, {size / max(run.captures, 1):.0f} bytes a capture\n")
        print(f"{'report':<16} {'rows':>6} {'best of ' + str(options.repeat):>12}")
        print(f"{'open_fleet':<16} {'':>6} {best(lambda: open_fleet(work / 'fleet').close(), options.repeat) * 1e3:>9.1f} ms")
        with open_fleet(work / "fleet") as db:
            total = 0.0
            for report in REPORTS:
                rows = len(run_report(db, report)[1])
                seconds = best(lambda report=report: run_report(db, report), options.repeat)
                total += seconds
                print(f"{report.name:<16} {rows:>6} {seconds * 1e3:>9.1f} ms")
            print(f"{'all six':<16} {'':>6} {total * 1e3:>9.1f} ms")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
