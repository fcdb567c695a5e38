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
  anthropic-sparse-index  N tool_use blocks at indexes i * 10**6 (sparse)
  anthropic-huge-index    N text blocks, the last at index 10**9
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
_ANTHROPIC_END = ['{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}',
                  '{"type":"message_stop"}']


def _anthropic(blocks: list[tuple[int, str, str]]) -> bytes:
    """Blocks (index, content_block, delta) each started, given its delta and stopped."""
    events, payloads = ["message_start"], [_ANTHROPIC_START]
    for index, block, delta in blocks:
        events += ["content_block_start", "content_block_delta", "content_block_stop"]
        payloads += [f'{{"type":"content_block_start","index":{index},"content_block":{block}}}',
                     f'{{"type":"content_block_delta","index":{index},"delta":{delta}}}',
                     f'{{"type":"content_block_stop","index":{index}}}']
    events += ["message_delta", "message_stop"]
    return _sse(payloads + _ANTHROPIC_END, events)


def anthropic_sparse_index(n: int) -> bytes:
    return _anthropic([(i * 10**6, f'{{"type":"tool_use","id":"t{i}","name":"f","input":{{}}}}',
                        '{"type":"input_json_delta","partial_json":"{}"}') for i in range(n)])


def anthropic_huge_index(n: int) -> bytes:
    return _anthropic([(10**9 if i == n - 1 else i, '{"type":"text","text":""}', '{"type":"text_delta","text":"a"}')
                       for i in range(n)])


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
    "anthropic-sparse-index": (anthropic_sparse_index, "block", _BIG),
    "anthropic-huge-index": (anthropic_huge_index, "block", _BIG),
}
