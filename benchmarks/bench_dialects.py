"""How fast streamfold folds a long text reply in each major dialect.

bench_fold.py measures OpenAI chat in depth against the tools users would use
instead. This one asks a narrower question for the other dialects: does
`fold(data)` stay close to the cost of splitting the frames and decoding
their JSON, and does its cost per frame stay flat as the stream grows?

Each stream is a realistic text reply (the vendor's prologue, N text deltas,
the vendor's epilogue) generated from a seeded RNG. The folded text is
checked against the generated one before anything is timed. Times are CPU
time (`time.process_time`), the median of several rounds, so that other work
on the machine counts less; the load average is printed with them.

The floor is what any folder must pay: split the frames and decode each
payload with orjson (SSE: the `data:` line of each block; NDJSON: each line;
WebSocket JSONL: each line, then the `data` string it carries; AWS event-stream:
walk the preludes and decode each payload, and a second floor that checks both
CRCs as well).

    python benchmarks/bench_dialects.py                 # 1k and 100k frames
    python benchmarks/bench_dialects.py --sizes 1k      # a few seconds
    python benchmarks/bench_dialects.py --sizes 1k,100k,1m --only a2a,mcp
    python benchmarks/bench_dialects.py --src /tmp/base/src   # another checkout, for before/after
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import struct
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import orjson

SIZES = {"1k": 1_000, "10k": 10_000, "100k": 100_000, "1m": 1_000_000}
RUNS = {"1k": 25, "10k": 7, "100k": 5, "1m": 3}
_WORDS = ["the", " quick", " brown", " fox", " é", " 🚀", "\n", " \"quoted\"", " back\\slash", ",", " jumps", " 中文"]


def _tokens(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 3))) for _ in range(n)]


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _sse(events: list[tuple[str | None, object]]) -> bytes:
    out = []
    for name, value in events:
        head = f"event: {name}\n" if name else ""
        out.append(f"{head}data: {_dumps(value)}\n\n")
    return "".join(out).encode()


def anthropic(tokens: list[str]) -> bytes:
    usage = {"input_tokens": 12, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1}
    events: list[tuple[str | None, object]] = [
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_01R8Ljb3ZxqJ9c2kGvWnHu4T", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    ]
    events += [("content_block_delta", {"type": "content_block_delta", "index": 0,
                                        "delta": {"type": "text_delta", "text": token}}) for token in tokens]
    events += [
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                           "usage": {"output_tokens": len(tokens)}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return _sse(events)


def openai_responses(tokens: list[str]) -> bytes:
    text = "".join(tokens)
    response = {"id": "resp_68a1", "object": "response", "created_at": 1769922455, "status": "in_progress",
                "model": "gpt-4.1-2025-04-14", "output": [], "usage": None}
    item = {"id": "msg_68a1", "type": "message", "status": "in_progress", "content": [], "role": "assistant"}
    seq = iter(range(1 << 30))
    events: list[tuple[str | None, object]] = [
        ("response.created", {"type": "response.created", "sequence_number": next(seq), "response": response}),
        ("response.output_item.added", {"type": "response.output_item.added", "sequence_number": next(seq),
                                        "output_index": 0, "item": item}),
        ("response.content_part.added", {"type": "response.content_part.added", "sequence_number": next(seq),
                                         "item_id": "msg_68a1", "output_index": 0, "content_index": 0,
                                         "part": {"type": "output_text", "annotations": [], "text": ""}}),
    ]
    events += [("response.output_text.delta", {
        "type": "response.output_text.delta", "sequence_number": next(seq), "item_id": "msg_68a1", "output_index": 0,
        "content_index": 0, "delta": token, "logprobs": [], "obfuscation": "aB3"}) for token in tokens]
    part = {"type": "output_text", "annotations": [], "text": text}
    done_item = {**item, "status": "completed", "content": [part]}
    events += [
        ("response.output_text.done", {"type": "response.output_text.done", "sequence_number": next(seq),
                                       "item_id": "msg_68a1", "output_index": 0, "content_index": 0, "text": text,
                                       "logprobs": []}),
        ("response.content_part.done", {"type": "response.content_part.done", "sequence_number": next(seq),
                                        "item_id": "msg_68a1", "output_index": 0, "content_index": 0, "part": part}),
        ("response.output_item.done", {"type": "response.output_item.done", "sequence_number": next(seq),
                                       "output_index": 0, "item": done_item}),
        ("response.completed", {"type": "response.completed", "sequence_number": next(seq), "response": {
            **response, "status": "completed", "output": [done_item],
            "usage": {"input_tokens": 12, "output_tokens": len(tokens), "total_tokens": 12 + len(tokens)}}}),
    ]
    return _sse(events)


def gemini(tokens: list[str]) -> bytes:
    events: list[tuple[str | None, object]] = []
    for i, token in enumerate(tokens):
        candidate: dict[str, object] = {"content": {"parts": [{"text": token}], "role": "model"}, "index": 0}
        if i == len(tokens) - 1:
            candidate["finishReason"] = "STOP"
        events.append((None, {"candidates": [candidate], "usageMetadata": {
            "promptTokenCount": 12, "candidatesTokenCount": i + 1, "totalTokenCount": 13 + i},
            "modelVersion": "gemini-2.5-flash", "responseId": "Ak9iaOPPGNyokdUPjryJ2Qw"}))
    return _sse(events)


def ollama(tokens: list[str]) -> bytes:
    lines = [_dumps({"model": "qwen3:8b", "created_at": "2026-03-02T10:00:00.101Z",
                     "message": {"role": "assistant", "content": token}, "done": False}) for token in tokens]
    lines.append(_dumps({"model": "qwen3:8b", "created_at": "2026-03-02T10:00:09.455Z",
                         "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop",
                         "total_duration": 612004311, "load_duration": 21750098, "prompt_eval_count": 12,
                         "prompt_eval_duration": 98102004, "eval_count": len(tokens), "eval_duration": 400000000}))
    return ("\n".join(lines) + "\n").encode()


def cohere(tokens: list[str]) -> bytes:
    events: list[tuple[str | None, object]] = [
        ("message-start", {"id": "5e9a2c71-8d40-4f3b-a6e2-91c0d7b4f258", "type": "message-start", "delta": {
            "message": {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []}}}),
        ("content-start", {"type": "content-start", "index": 0,
                           "delta": {"message": {"content": {"type": "text", "text": ""}}}}),
    ]
    events += [("content-delta", {"type": "content-delta", "index": 0,
                                  "delta": {"message": {"content": {"text": token}}}}) for token in tokens]
    events += [("content-end", {"type": "content-end", "index": 0}),
               ("message-end", {"type": "message-end", "delta": {"finish_reason": "COMPLETE", "usage": {
                   "billed_units": {"input_tokens": 12, "output_tokens": len(tokens)},
                   "tokens": {"input_tokens": 12, "output_tokens": len(tokens)}}}})]
    return _sse(events)


def openai_chat(tokens: list[str]) -> bytes:
    head = {"id": "chatcmpl-bKNkgmYivS9b6aL4UjskXsVKmaqpq", "object": "chat.completion.chunk", "created": 1732932228,
            "model": "gpt-4o-2024-08-06", "service_tier": "default", "system_fingerprint": "fp_78197ab3d0"}
    events: list[tuple[str | None, object]] = [(None, {**head, "choices": [
        {"index": 0, "delta": {"role": "assistant", "content": "", "refusal": None}, "logprobs": None,
         "finish_reason": None}], "usage": None, "obfuscation": "XKlf"})]
    events += [(None, {**head, "choices": [{"index": 0, "delta": {"content": token}, "logprobs": None,
                                            "finish_reason": None}], "usage": None, "obfuscation": "RdSCv"})
               for token in tokens]
    events.append((None, {**head, "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}],
                          "usage": None, "obfuscation": "q"}))
    return _sse(events) + b"data: [DONE]\n\n"


def _with_ids(data: bytes) -> bytes:
    """The same SSE stream with an `id:` line heading each block (as MCP servers and some gateways send)."""
    blocks = data.split(b"\n\n")
    return b"\n\n".join(b"id: %d\n" % i + block if block else block for i, block in enumerate(blocks))


def anthropic_ids(tokens: list[str]) -> bytes:
    return _with_ids(anthropic(tokens))


def mcp(tokens: list[str]) -> bytes:
    """A long tool call: a progress notification per token, then the result, which holds the text."""
    events: list[tuple[str | None, object]] = [
        (None, {"jsonrpc": "2.0", "method": "notifications/progress", "params": {
            "progressToken": "tok-1", "progress": i, "total": len(tokens), "message": token}})
        for i, token in enumerate(tokens[:-1])]
    events.append((None, {"jsonrpc": "2.0", "id": 2, "result": {
        "content": [{"type": "text", "text": "".join(tokens)}], "isError": False}}))
    return _with_ids(_sse(events))


def a2a(tokens: list[str]) -> bytes:
    """A task whose one artifact comes in chunks, each appended to the last."""
    task, context = "225d6247-06ba-4cda-a08b-33ae35c8dcfa", "05217e44-7e9f-473e-ab4f-2c2dde50a2b1"

    def result(value: dict[str, object]) -> tuple[None, object]:
        return None, {"jsonrpc": "2.0", "id": 1, "result": value}

    events = [result({"id": task, "contextId": context, "status": {"state": "submitted"}, "kind": "task"})]
    events += [result({"taskId": task, "contextId": context, "artifact": {
        "artifactId": "9b6934dd", "parts": [{"kind": "text", "text": token}]}, "append": i > 0,
        "lastChunk": i == len(tokens) - 1, "kind": "artifact-update"}) for i, token in enumerate(tokens)]
    events.append(result({"taskId": task, "contextId": context, "status": {"state": "completed"}, "final": True,
                          "kind": "status-update"}))
    return _sse(events)


def openai_realtime(tokens: list[str]) -> bytes:
    """A text reply over the Realtime WebSocket, as a capture's JSONL (one line per message)."""
    ids = {"response_id": "resp_C9xT6bQm1Xv2", "item_id": "item_C9xT6cAsst01", "output_index": 0,
           "content_index": 0}
    text = "".join(tokens)
    response = {"object": "realtime.response", "id": "resp_C9xT6bQm1Xv2", "status": "in_progress", "output": []}
    item = {"id": "item_C9xT6cAsst01", "object": "realtime.item", "type": "message", "role": "assistant"}
    events: list[dict[str, object]] = [
        {"type": "response.created", "response": response},
        {"type": "response.output_item.added", "response_id": ids["response_id"], "output_index": 0,
         "item": {**item, "status": "in_progress", "content": []}},
        {"type": "response.content_part.added", **ids, "part": {"type": "text", "text": ""}}]
    events += [{"type": "response.output_text.delta", **ids, "delta": token} for token in tokens]
    done_item = {**item, "status": "completed", "content": [{"type": "output_text", "text": text}]}
    events += [
        {"type": "response.output_text.done", **ids, "text": text},
        {"type": "response.output_item.done", "response_id": ids["response_id"], "output_index": 0,
         "item": done_item},
        {"type": "response.done", "response": {**response, "status": "completed", "output": [done_item], "usage": {
            "total_tokens": 12 + len(tokens), "input_tokens": 12, "output_tokens": len(tokens)}}}]
    lines = [_dumps({"type": "receive", "time": 1764633600.0 + i / 100, "opcode": 1,
                     "data": _dumps({"event_id": f"event_{i:08d}", **event})}) for i, event in enumerate(events)]
    return ("\n".join(lines) + "\n").encode()


def ag_ui(tokens: list[str]) -> bytes:
    """An AG-UI run over SSE: one assistant text message, a content event per token."""
    run = {"threadId": "thread_5b1e", "runId": "run_7c2f"}
    events: list[tuple[str | None, object]] = [
        (None, {"type": "RUN_STARTED", **run}),
        (None, {"type": "TEXT_MESSAGE_START", "messageId": "msg_1", "role": "assistant"})]
    events += [(None, {"type": "TEXT_MESSAGE_CONTENT", "messageId": "msg_1", "delta": token}) for token in tokens]
    events += [(None, {"type": "TEXT_MESSAGE_END", "messageId": "msg_1"}), (None, {"type": "RUN_FINISHED", **run})]
    return _sse(events)


def vercel_ui(tokens: list[str]) -> bytes:
    """The Vercel AI SDK's UI message stream: one text part, a text-delta chunk per token."""
    events: list[tuple[str | None, object]] = [
        (None, {"type": "start", "messageId": "msg_5f2a9c"}), (None, {"type": "start-step"}),
        (None, {"type": "text-start", "id": "txt_1"})]
    events += [(None, {"type": "text-delta", "id": "txt_1", "delta": token}) for token in tokens]
    events += [(None, {"type": "text-end", "id": "txt_1"}), (None, {"type": "finish-step"}),
               (None, {"type": "finish", "finishReason": "stop"})]
    return _sse(events) + b"data: [DONE]\n\n"


def _eventstream_message(event: str, value: object) -> bytes:
    """One AWS event-stream message as Bedrock sends it: three string headers, the JSON payload."""
    headers = b"".join(bytes([len(name)]) + name + b"\x07" + struct.pack(">H", len(text)) + text
                       for name, text in ((b":event-type", event.encode()), (b":content-type", b"application/json"),
                                          (b":message-type", b"event")))
    payload = _dumps(value).encode()
    prelude = struct.pack(">II", 16 + len(headers) + len(payload), len(headers))
    body = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + payload
    return body + struct.pack(">I", zlib.crc32(body))


def bedrock(tokens: list[str]) -> bytes:
    """ConverseStream over the AWS event-stream framing, with the random-length `p` padding of every payload."""
    rng = random.Random(len(tokens))

    def pad() -> str:
        return "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"[: rng.randint(1, 36)]

    events: list[tuple[str, object]] = [("messageStart", {"role": "assistant", "p": pad()})]
    events += [("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": token}, "p": pad()})
               for token in tokens]
    events += [("contentBlockStop", {"contentBlockIndex": 0, "p": pad()}),
               ("messageStop", {"stopReason": "end_turn", "p": pad()}),
               ("metadata", {"usage": {"inputTokens": 12, "outputTokens": len(tokens), "totalTokens": 12 + len(tokens)},
                             "metrics": {"latencyMs": 1830}, "p": pad()})]
    return b"".join(_eventstream_message(event, value) for event, value in events)


#: row -> (the dialect the stream must fold as, its generator).
DIALECTS: dict[str, tuple[str, Callable[[list[str]], bytes]]] = {
    "openai-chat": ("openai-chat", openai_chat), "anthropic": ("anthropic", anthropic),
    "anthropic + id:": ("anthropic", anthropic_ids), "openai-responses": ("openai-responses", openai_responses),
    "gemini": ("gemini", gemini), "ollama": ("ollama", ollama), "cohere": ("cohere", cohere),
    "mcp": ("mcp", mcp), "a2a": ("a2a", a2a), "openai-realtime": ("openai-realtime", openai_realtime),
    "bedrock": ("bedrock", bedrock), "ag-ui": ("ag-ui", ag_ui), "vercel-ui": ("vercel-ui", vercel_ui)}

_PRELUDE = struct.Struct(">III")
_CRC = struct.Struct(">I")


def floor(data: bytes) -> int:
    """Split the frames and decode each payload with orjson: what any folder must pay."""
    count = 0
    if data[:1] == b"\x00":  # AWS event-stream: walk the preludes
        return _eventstream_floor(data, check=False)
    if data[:1] == b"{":
        websocket = data.startswith(b'{"type":"receive"')
        for line in data.split(b"\n"):
            if line:
                value = orjson.loads(line)
                if websocket:
                    orjson.loads(value["data"])
                count += 1
        return count
    for block in data.split(b"\n\n"):
        start = block.find(b"data: ")
        if start >= 0 and block[start + 6:] != b"[DONE]":
            orjson.loads(block[start + 6:])
            count += 1
    return count


def _eventstream_floor(data: bytes, *, check: bool) -> int:
    """Walk the event-stream preludes and decode each payload; with `check`, verify both CRCs too.
    (Slices of the bytes, not of a memoryview: copying a message is cheaper than making a view.)"""
    count = position = 0
    unpack, unpack_crc, crc32 = _PRELUDE.unpack_from, _CRC.unpack_from, zlib.crc32
    while position < len(data):
        total, headers, prelude_crc = unpack(data, position)
        end = position + total
        if check and (crc32(data[position : position + 8]) != prelude_crc
                      or crc32(data[position : end - 4]) != unpack_crc(data, end - 4)[0]):
            raise ValueError("CRC mismatch")
        orjson.loads(data[position + 12 + headers : end - 4])
        position = end
        count += 1
    return count


def median_of(fn: Callable[[], object], runs: int) -> float:
    """The median CPU time of `runs` rounds, each after an untimed warm-up (a full collection
    leaves the caches cold)."""
    times = []
    for _ in range(runs):
        gc.collect()
        fn()
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def options(argv: list[str] | None, description: str, sizes: str) -> argparse.Namespace:
    """The options a dialect bench takes (`--sizes`, `--only`, `--src`), with `--src` put first on the path."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--sizes", default=sizes, help="comma-separated: " + ", ".join(SIZES))
    parser.add_argument("--only", default="", help="comma-separated rows (default: all): " + ", ".join(DIALECTS))
    parser.add_argument("--src", default=str(Path(__file__).resolve().parent.parent / "src"),
                        help="the directory to import streamfold from (default: this checkout's src)")
    args = parser.parse_args(argv)
    sys.path.insert(0, args.src)
    return args


def main(argv: list[str] | None = None) -> int:
    args = options(argv, __doc__.splitlines()[0], "1k,100k")
    import streamfold

    sizes = args.sizes.split(",")
    rows = args.only.split(",") if args.only else list(DIALECTS)
    print(f"streamfold {streamfold.__version__} from {Path(streamfold.__file__).parent.parent}, Python "
          f"{sys.version.split()[0]}; CPU µs per frame, median of " + ", ".join(f"{RUNS[s]} ({s})" for s in sizes)
          + f"; load average {os.getloadavg()[0]:.2f}")
    header = f"{'dialect':18}" + "".join(f"{'fold ' + s:>12}{'floor ' + s:>12}{'ratio':>7}" for s in sizes)
    if len(sizes) > 1:
        header += f"{'growth':>8}{'floor':>7}"
    print(header)
    print("-" * len(header))
    for row_name in rows:
        name, generate = DIALECTS[row_name]
        row = f"{row_name:18}"
        per_frame: dict[str, tuple[float, float]] = {}
        crc_floors: list[str] = []  # event-stream: the floor that checks both CRCs as well
        for size in sizes:
            tokens = _tokens(SIZES[size], seed=SIZES[size])
            data = generate(tokens)
            result = streamfold.fold(data)
            if result.dialect != name or not result.choices or result.choices[0].content != "".join(tokens) or result.errors:
                row += f"  INVALID ({result.dialect}, {len(result.errors)} errors)"
                break
            del result  # a Result held while timing is heap every collection walks
            frames = floor(data)
            fold_s = median_of(lambda d=data: streamfold.fold(d), RUNS[size]) / frames * 1e6
            floor_s = median_of(lambda d=data: floor(d), RUNS[size]) / frames * 1e6
            per_frame[size] = (fold_s, floor_s)
            row += f"{fold_s:12.2f}{floor_s:12.2f}{fold_s / floor_s:7.2f}"
            if data[:1] == b"\x00":
                checked_s = median_of(lambda d=data: _eventstream_floor(d, check=True), RUNS[size]) / frames * 1e6
                crc_floors.append(f"{size}: {checked_s:.2f} µs, ratio {fold_s / checked_s:.2f}")
        if len(per_frame) == len(sizes) > 1:
            first, last = per_frame[sizes[0]], per_frame[sizes[-1]]
            row += f"{last[0] / first[0]:8.2f}{last[1] / first[1]:7.2f}"
        if crc_floors:
            row += "  (floor with CRCs " + "; ".join(crc_floors) + ")"
        print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
