"""Hostile input for gemini, gemini-interactions, vercel-ui, vercel-data, cohere-v1 and anthropic
(issue 20 part 3, group C): the sites that went quadratic in the number of candidates, tool keys or
data parts, and the shapes whose fold peaked above 20x the input.

  gemini-candidates       N frames, each opening (and finishing) candidate i
  gemini-candidates-one   one frame holding N candidates
  gemini-parts            one frame holding N parts that alternate text and thought (a block each)
  gemini-parts-frames     the same N parts, ten a frame
  gemini-interactions-tools  N `step.start` function calls, step i, each with an arguments delta
  vercel-ui-data          N `data-x` chunks, each with a new id
  vercel-data-annotations N lines, `8:` annotations and `2:` data alternating
  cohere-v1-tools         N `tool-calls-chunk` lines, tool index i
  anthropic-sparse-tools  N tool_use block starts at indexes i * 1,000,003 (no `event:` lines)
  anthropic-huge-index    N text block starts at indexes from 10**9 on, as sparse
  anthropic-missing-starts  N text deltas for blocks that never started, as sparse
"""

from __future__ import annotations

import json
from collections.abc import Callable

Generator = Callable[[int], bytes]


def _sse(payloads: list[str], events: list[str] | None = None) -> bytes:
    if events is None:
        return "".join(f"data: {p}\n\n" for p in payloads).encode()
    return "".join(f"event: {e}\ndata: {p}\n\n" for e, p in zip(events, payloads)).encode()


def gemini_candidates(n: int) -> bytes:
    return _sse([f'{{"candidates":[{{"index":{i},"content":{{"parts":[{{"text":"a"}}],"role":"model"}},'
                 f'"finishReason":"STOP"}}]}}' for i in range(n)])


def gemini_candidates_one(n: int) -> bytes:
    candidates = ",".join(f'{{"index":{i},"content":{{"parts":[{{"text":"a"}}],"role":"model"}},"finishReason":"STOP"}}'
                          for i in range(n))
    return _sse([f'{{"candidates":[{candidates}]}}'])


def gemini_parts(n: int) -> bytes:
    parts = ",".join('{"text":"a"}' if i % 2 else '{"text":"b","thought":true}' for i in range(n))
    return _sse([f'{{"candidates":[{{"content":{{"parts":[{parts}],"role":"model"}},"finishReason":"STOP"}}]}}'])


def gemini_parts_frames(n: int) -> bytes:
    """The same parts, ten a frame: what the fold keeps per part, without one huge frame to decode."""
    frame = ",".join(['{"text":"a"}', '{"text":"b","thought":true}'] * 5)
    chunk = f'{{"candidates":[{{"content":{{"parts":[{frame}],"role":"model"}}}}]}}'
    last = '{"candidates":[{"content":{"parts":[{"text":"."}],"role":"model"},"finishReason":"STOP"}]}'
    return _sse([chunk] * (n // 10) + [last])


def gemini_interactions_tools(n: int) -> bytes:
    events = ['{"event_type":"interaction.created","interaction":{"id":"i","status":"in_progress"}}']
    for i in range(n):
        events.append(f'{{"event_type":"step.start","index":{i},"step":{{"type":"function_call","id":"c{i}",'
                      f'"name":"f","arguments":{{}}}}}}')
        events.append(f'{{"event_type":"step.delta","index":{i},"delta":{{"type":"arguments_delta",'
                      f'"arguments":"{{}}"}}}}')
    events.append('{"event_type":"interaction.completed","interaction":{"id":"i","status":"requires_action"}}')
    return _sse(events)


def vercel_ui_data(n: int) -> bytes:
    chunks = ['{"type":"start","messageId":"m"}']
    chunks += [f'{{"type":"data-x","id":"d{i}","data":{i}}}' for i in range(n)]
    chunks.append('{"type":"finish"}')
    return _sse(chunks) + b"data: [DONE]\n\n"


def vercel_data_annotations(n: int) -> bytes:
    lines = ['f:{"messageId":"m"}', '0:"hi"']
    lines += [f'8:[{{"a":{i}}}]' if i % 2 else f'2:[{{"x":{i}}}]' for i in range(n)]
    lines.append('d:{"finishReason":"stop","usage":{"promptTokens":1,"completionTokens":1}}')
    return ("\n".join(lines) + "\n").encode()


def cohere_v1_tools(n: int) -> bytes:
    lines = [json.dumps({"event_type": "stream-start", "generation_id": "g"})]
    lines += [f'{{"event_type":"tool-calls-chunk","tool_call_delta":{{"index":{i},"name":"f","parameters":"{{}}"}}}}'
              for i in range(n)]
    lines.append('{"event_type":"stream-end","finish_reason":"COMPLETE"}')
    return ("\n".join(lines) + "\n").encode()


_ANTHROPIC_START = ('{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"c",'
                    '"content":[],"stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}}')


def _anthropic(events: list[str]) -> bytes:
    """Without `event:` lines (a proxy stripped them, A1): the fewest bytes for what the fold keeps."""
    return _sse([_ANTHROPIC_START, *events])


def anthropic_sparse_tools(n: int) -> bytes:
    # Past max_tool_calls (10,000) the further calls are dropped: the first 10,000 are the costly ones.
    return _anthropic([f'{{"type":"content_block_start","index":{i * 1_000_003},"content_block":{{"type":"tool_use",'
                       f'"id":"t","name":"f","input":{{}}}}}}' for i in range(n)])


def anthropic_huge_index(n: int) -> bytes:
    return _anthropic([f'{{"type":"content_block_start","index":{10**9 + i * 1_000_003},"content_block":'
                       '{"type":"text","text":""}}' for i in range(n)])


def anthropic_missing_starts(n: int) -> bytes:
    return _anthropic([f'{{"type":"content_block_delta","index":{i * 1_000_003},"delta":{{"type":"text_delta",'
                       '"text":"a"}}' for i in range(n)])


_SIZES = {"small": [2_000, 20_000], "default": [5_000, 20_000, 80_000], "large": [20_000, 80_000, 320_000]}
_BIG = {"small": [20_000, 100_000], "default": [20_000, 100_000, 400_000], "large": [100_000, 400_000, 1_600_000]}

#: name -> (generator, what a unit is, sizes per scale)
CASES: dict[str, tuple[Generator, str, dict[str, list[int]]]] = {
    "gemini-candidates": (gemini_candidates, "candidate", _SIZES),
    "gemini-candidates-one": (gemini_candidates_one, "candidate", _SIZES),
    "gemini-parts": (gemini_parts, "part", _BIG),
    "gemini-parts-frames": (gemini_parts_frames, "part", _BIG),
    "gemini-interactions-tools": (gemini_interactions_tools, "call", _SIZES),
    "vercel-ui-data": (vercel_ui_data, "part", _SIZES),
    "vercel-data-annotations": (vercel_data_annotations, "line", _BIG),
    "cohere-v1-tools": (cohere_v1_tools, "call", _SIZES),
    "anthropic-sparse-tools": (anthropic_sparse_tools, "block", {
        "small": [10_000, 40_000], "default": [2_500, 10_000, 40_000], "large": [10_000, 40_000, 160_000]}),
    "anthropic-huge-index": (anthropic_huge_index, "block", _BIG),
    "anthropic-missing-starts": (anthropic_missing_starts, "block", _BIG),
}
