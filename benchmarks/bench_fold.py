#!/usr/bin/env python3
"""Benchmark: folding OpenAI Chat Completions SSE streams into a final reply.

Compares, on the same deterministic streams and in one run:

  streamfold fold(data)         streamfold.fold(data), one shot (the user-facing API)
  streamfold Folder 64 KiB      Folder().feed(chunk) per 64 KiB chunk, then close()
  openai SDK                    openai's SSEDecoder + ChatCompletionStreamState
  httpx-sse + dict merge        httpx_sse's decoders + json.loads + a plain dict merge
  floor (orjson|msgspec|json)   split frames + decode every payload, nothing else

plus streamfold fed one byte at a time.  This is a benchmark, not a test: it
prints tables and never fails on its targets.  See benchmarks/README.md.

Run:  .venv/bin/python benchmarks/bench_fold.py [--sizes 1k,100k,1m]
          [--shapes text,tools] [--skip-1m] [--full] [--no-memory] [--regen]
"""

from __future__ import annotations

import argparse
import codecs
import gc
import json
import os
import platform
import random
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
DATA_DIR = HERE / ".data"

GEN_VERSION = 1  # bump when the generator's output changes (invalidates the cache)
SEED = 20_241_130
CHUNK_SIZE = 64 * 1024
SIZES = {"1k": 1_000, "100k": 100_000, "1m": 1_000_000}
# 1k runs take milliseconds: many of them keep a burst of background load out of the best time.
RUNS = {"1k": 25, "100k": 3, "1m": 2}
SHAPES = ("text", "tools")
MEMORY_SIZE = "100k"  # tracemalloc pass only at this size
ONE_BYTE_PREFIX = 100_000  # bytes of the 100k stream fed one byte at a time
REPEAT_BUDGET_S = 20.0  # stop repeating a method once it has used this much time

# Targets (printed next to the results, never enforced).
TARGET_FOLD_VS_FLOOR = 1.3
TARGET_FLATNESS = 1.25
TARGET_ONE_BYTE_MBPS = 5.0


# --------------------------------------------------------------------------
# Stream generator (deterministic, seeded)
# --------------------------------------------------------------------------

# Realistic-looking tokens: leading spaces, punctuation, newlines, markdown,
# quotes and backslashes (need JSON escaping) and multi-byte UTF-8 (so that
# 64 KiB and 1-byte chunk boundaries split characters).
_WORDS = ["the", "of", "and", "to", "a", "in", "is", "that", "for", "it", "as", "was", "with", "be", "by", "on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have", "an", "they", "you", "were", "her", "she", "there", "been", "one", "all", "we", "their", "has", "would", "when", "if", "so", "no", "will", "more", "can", "out", "up", "about", "into", "than", "them", "model", "stream", "token", "reply", "chunk", "frame", "parser", "buffer", "delta", "result", "value", "field", "server", "client", "request", "response", "latency", "throughput", "memory", "string", "object", "function", "argument", "weather", "forecast", "flight", "city", "ticket", "price", "market", "report", "however", "therefore", "because", "although", "meanwhile", "finally", "first", "second", "third"]
_VOCAB: tuple[str, ...] = tuple(
    [" " + w for w in _WORDS]
    + _WORDS[:40]
    + [".", ",", ":", ";", "!", "?", " -", " (", ")", "\n", "\n\n", "\n- ", "**", "`", " `x`"]
    + [' "', '"', "'s", " \\", "\\n", "\t", " {", "}", " [1]", " 42", " 3.14", " 2025"]
    + [" café", " naïve", " Zürich", " São Paulo", " 東京", " 🚀", " —", "…", " ü", " Ωmega", " ✅"]
)
_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_MODEL = "gpt-4o-2024-08-06"


def _alnum(rng: random.Random, n: int) -> str:
    return "".join(rng.choices(_ALNUM, k=n))


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


class _Frames:
    """Builds chunk frames from a fixed per-stream header (string formatting, no per-frame dicts)."""

    def __init__(self, rng: random.Random) -> None:
        self.id = "chatcmpl-" + _alnum(rng, 29)
        self.created = 1_732_900_000 + rng.randrange(86_400)
        self.fingerprint = "fp_" + "".join(rng.choices("0123456789abcdef", k=10))
        self.head = (
            'data: {"id":"%s","object":"chat.completion.chunk","created":%d,"model":"%s",'
            '"service_tier":"default","system_fingerprint":"%s","choices":['
            % (self.id, self.created, _MODEL, self.fingerprint)
        )
        # OpenAI's `obfuscation` padding: random alphanumerics of varying length.
        self.obf_pool = [_alnum(rng, rng.randint(1, 16)) for _ in range(512)]
        self.content_pre = self.head + '{"index":0,"delta":{"content":'
        self.content_mid = '},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"'
        self.end = '"}\n\n'

    def delta(self, delta_json: str, obf: str, finish: str | None = None) -> str:
        fr = "null" if finish is None else f'"{finish}"'
        return f'{self.head}{{"index":0,"delta":{delta_json},"logprobs":null,"finish_reason":{fr}}}],"usage":null,"obfuscation":"{obf}"}}\n\n'

    def role(self, obf: str) -> str:
        return self.delta('{"role":"assistant","content":"","refusal":null}', obf)

    def usage(self, usage: dict[str, Any], obf: str) -> str:
        return f'{self.head}],"usage":{_dumps(usage)},"obfuscation":"{obf}"}}\n\n'


def _usage(prompt: int, completion: int) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _content_frames(fr: _Frames, rng: random.Random, count: int, obfs: list[str]) -> tuple[list[str], list[str]]:
    """`count` content frames of 1-3 tokens each; returns (frames, content pieces)."""
    ks = rng.choices((1, 2, 3), k=count)
    toks = rng.choices(_VOCAB, k=sum(ks))
    pieces: list[str] = []
    out: list[str] = []
    enc: dict[str, str] = {}
    pre, mid, end = fr.content_pre, fr.content_mid, fr.end
    pos = 0
    for i in range(count):
        k = ks[i]
        piece = "".join(toks[pos : pos + k])
        pos += k
        pieces.append(piece)
        cj = enc.get(piece)
        if cj is None:
            cj = enc[piece] = _dumps(piece)
        out.append(f"{pre}{cj}{mid}{obfs[i]}{end}")
    return out, pieces


def gen_text(n: int, seed: int) -> tuple[bytes, dict[str, Any]]:
    """Role frame, n-2 content frames (the last with finish_reason "stop"), usage frame, [DONE]."""
    assert n >= 3
    rng = random.Random(f"text-{n}-{seed}")
    fr = _Frames(rng)
    obfs = rng.choices(fr.obf_pool, k=n)
    frames = [fr.role(obfs[0])]
    body, pieces = _content_frames(fr, rng, n - 3, obfs[1:])
    frames += body
    last = rng.choice(_VOCAB)
    pieces.append(last)
    frames.append(fr.delta(f'{{"content":{_dumps(last)}}}', obfs[n - 2], "stop"))
    usage = _usage(1_234, n - 2)
    frames.append(fr.usage(usage, obfs[n - 1]))
    frames.append("data: [DONE]\n\n")
    data = "".join(frames).encode()
    expected = {
        "shape": "text",
        "frames": n,
        "id": fr.id,
        "model": _MODEL,
        "content": "".join(pieces),
        "finish_reason": "stop",
        "tool_calls": [],
        "usage": usage,
    }
    return data, expected


_TOOL_NAMES = ("get_weather", "search_flights", "lookup_stock", "create_calendar_event")
_CITIES = ("Zürich", "São Paulo", "東京", "Paris", "Reykjavík", "New York", "Kraków", "Cairo")


def _tool_item(rng: random.Random, name: str) -> dict[str, Any]:
    if name == "get_weather":
        return {"city": rng.choice(_CITIES), "units": rng.choice(("metric", "imperial")), "days": rng.randint(1, 14)}
    if name == "search_flights":
        return {
            "from": _alnum(rng, 3).upper(),
            "to": _alnum(rng, 3).upper(),
            "date": "2025-%02d-%02d" % (rng.randint(1, 12), rng.randint(1, 28)),
            "passengers": rng.randint(1, 6),
            "cabin": rng.choice(("economy", "premium", "business")),
        }
    if name == "lookup_stock":
        return {"ticker": _alnum(rng, 4).upper(), "range": rng.choice(("1d", "5d", "1y")), "fields": ["open", "close"]}
    return {
        "title": f'Sync with "Ops" — {rng.choice(_CITIES)}',
        "start": "2025-03-%02dT%02d:30:00+01:00" % (rng.randint(1, 28), rng.randint(8, 18)),
        "attendees": [f"{_alnum(rng, 6).lower()}@example.com"],
        "notes": "naïve plan ✅\nline two\\n %d" % rng.randint(0, 999),
    }


def _tool_args(rng: random.Random, name: str, min_len: int) -> str:
    key = {"get_weather": "locations", "search_flights": "legs", "lookup_stock": "symbols"}.get(name, "events")
    parts: list[str] = []
    length = 0
    while length < min_len or not parts:
        s = json.dumps(_tool_item(rng, name), ensure_ascii=False)
        parts.append(s)
        length += len(s) + 2
    return '{{"{}": [{}]}}'.format(key, ", ".join(parts))


def gen_tools(n: int, seed: int) -> tuple[bytes, dict[str, Any]]:
    """Role frame, a short content preamble, 4 parallel tool calls whose argument fragments are
    interleaved in blocks (round-robin by index), a finish_reason "tool_calls" frame, usage, [DONE]."""
    rng = random.Random(f"tools-{n}-{seed}")
    fr = _Frames(rng)
    preamble = min(12, max(1, (n - 11) // 4))
    n_frags = n - 1 - preamble - 4 - 1 - 1
    assert n_frags >= 4, "stream too short for the tools shape"
    obfs = rng.choices(fr.obf_pool, k=n)
    oi = iter(obfs)
    frames = [fr.role(next(oi))]
    body, pieces = _content_frames(fr, rng, preamble, [next(oi) for _ in range(preamble)])
    frames += body
    per = [n_frags // 4 + (1 if i < n_frags % 4 else 0) for i in range(4)]
    calls: list[dict[str, Any]] = []
    frag_lists: list[list[str]] = []
    for i, name in enumerate(_TOOL_NAMES):
        f = per[i]
        args = _tool_args(rng, name, 4 * f + 8)
        cuts = sorted(rng.sample(range(1, len(args)), f - 1))
        bounds = [0, *cuts, len(args)]
        frag_lists.append([args[bounds[j] : bounds[j + 1]] for j in range(f)])
        calls.append({"index": i, "id": "call_" + _alnum(rng, 24), "name": name, "arguments": args})
    pos = [0, 0, 0, 0]
    started = [False] * 4
    enc_pre = ['{"tool_calls":[{"index":%d,"function":{"arguments":' % i for i in range(4)]
    while any(pos[i] < per[i] for i in range(4)):
        for i in range(4):
            if not started[i]:
                started[i] = True
                hdr = (
                    '{"tool_calls":[{"index":%d,"id":"%s","type":"function",'
                    '"function":{"name":"%s","arguments":""}}]}' % (i, calls[i]["id"], calls[i]["name"])
                )
                frames.append(fr.delta(hdr, next(oi)))
            take = min(rng.randint(1, 24), per[i] - pos[i])
            for frag in frag_lists[i][pos[i] : pos[i] + take]:
                frames.append(fr.delta(f"{enc_pre[i]}{_dumps(frag)}}}}}]}}", next(oi)))
            pos[i] += take
    frames.append(fr.delta("{}", next(oi), "tool_calls"))
    usage = _usage(2_345, n - 3)
    frames.append(fr.usage(usage, next(oi)))
    frames.append("data: [DONE]\n\n")
    assert len(frames) == n + 1, (len(frames), n)
    data = "".join(frames).encode()
    expected = {
        "shape": "tools",
        "frames": n,
        "id": fr.id,
        "model": _MODEL,
        "content": "".join(pieces),
        "finish_reason": "tool_calls",
        "tool_calls": calls,
        "usage": usage,
    }
    return data, expected


GENERATORS = {"text": gen_text, "tools": gen_tools}


@dataclass
class Dataset:
    shape: str
    size: str
    data: bytes
    expected: dict[str, Any]
    frames: int
    chunks: list[bytes] = field(default_factory=list)

    @property
    def mb(self) -> float:
        return len(self.data) / 1e6


def load_dataset(shape: str, size: str, regen: bool = False) -> Dataset:
    n = SIZES[size]
    stem = f"{shape}-{size}-g{GEN_VERSION}-s{SEED}"
    path, meta = DATA_DIR / f"{stem}.sse", DATA_DIR / f"{stem}.expected.json"
    if regen or not (path.exists() and meta.exists()):
        t0 = time.perf_counter()
        data, expected = GENERATORS[shape](n, SEED)
        DATA_DIR.mkdir(parents=True, exist_ok=True)
        for p, blob in ((path, data), (meta, orjson.dumps(expected))):
            tmp = p.with_suffix(p.suffix + ".tmp")
            tmp.write_bytes(blob)
            os.replace(tmp, p)
        print(f"  generated {path.name} ({len(data) / 1e6:.1f} MB) in {time.perf_counter() - t0:.1f}s", flush=True)
    else:
        data = path.read_bytes()
        expected = orjson.loads(meta.read_bytes())
    ds = Dataset(shape, size, data, expected, expected["frames"])
    ds.chunks = [data[i : i + CHUNK_SIZE] for i in range(0, len(data), CHUNK_SIZE)]
    return ds


# --------------------------------------------------------------------------
# Result normalisation / validation (never timed)
# --------------------------------------------------------------------------


class Invalid(Exception):  # noqa: N818 - reads as "the stream is invalid"
    """A method produced a wrong result: its timing must not be trusted."""


def _check(got: dict[str, Any], exp: dict[str, Any], parsed_args: bool = False) -> None:
    bad: list[str] = []
    if got["content"] != exp["content"]:
        c = got["content"]
        bad.append(f"content differs (len {len(c) if isinstance(c, str) else c!r} vs {len(exp['content'])})")
    if got["finish_reason"] != exp["finish_reason"]:
        bad.append(f"finish_reason {got['finish_reason']!r}")
    calls = got["tool_calls"]
    if len(calls) != len(exp["tool_calls"]):
        bad.append(f"{len(calls)} tool calls, expected {len(exp['tool_calls'])}")
    else:
        for g, e in zip(calls, exp["tool_calls"]):
            if (g.get("id"), g.get("name"), g.get("arguments")) != (e["id"], e["name"], e["arguments"]):
                bad.append(f"tool call {e['index']} differs")
            elif parsed_args and g.get("parsed") != json.loads(e["arguments"]):
                bad.append(f"tool call {e['index']} parsed arguments missing/wrong")
    if got["usage_total"] != exp["usage"]["total_tokens"]:
        bad.append(f"usage total {got['usage_total']!r}")
    if bad:
        raise Invalid("; ".join(bad))


def _sf_result_dict(res: Any, folder: Any = None) -> dict[str, Any]:
    if res is None and folder is not None:  # tolerate a close() that returns nothing
        res = getattr(folder, "result", None)
        res = res() if callable(res) else res
    if res is None or not hasattr(res, "to_dict"):
        raise Invalid(f"no Result with to_dict() (got {type(res).__name__})")
    return res.to_dict()


def validate_streamfold(res: Any, exp: dict[str, Any], folder: Any = None) -> None:
    d = _sf_result_dict(res, folder)
    choices = d.get("choices") or []
    if not choices:
        raise Invalid("no choices in to_dict()")
    ch = choices[0]
    content = ch.get("content")
    if not content:
        raise Invalid("empty content")
    calls = ch.get("tool_calls") or []
    if exp["shape"] == "tools":
        if len(calls) != 4:
            raise Invalid(f"{len(calls)} tool calls, expected 4")
        if any(c.get("parsed") is None for c in calls):
            raise Invalid("tool call arguments not parsed")
    _check(
        {
            "content": content,
            "finish_reason": ch.get("finish_reason"),
            "tool_calls": calls,
            "usage_total": (d.get("usage") or {}).get("total_tokens"),
        },
        exp,
        parsed_args=True,
    )


def validate_openai(final: Any, exp: dict[str, Any]) -> None:
    ch = final.choices[0]
    _check(
        {
            "content": ch.message.content,
            "finish_reason": ch.finish_reason,
            "tool_calls": [
                {"id": t.id, "name": t.function.name, "arguments": t.function.arguments}
                for t in (ch.message.tool_calls or [])
            ],
            "usage_total": final.usage.total_tokens if final.usage else None,
        },
        exp,
    )


def validate_dict_merge(acc: dict[str, Any], exp: dict[str, Any]) -> None:
    ch = acc["choices"][0]
    _check(
        {
            "content": ch["content"],
            "finish_reason": ch["finish_reason"],
            "tool_calls": ch["tool_calls"],
            "usage_total": (acc["usage"] or {}).get("total_tokens"),
        },
        exp,
        parsed_args=True,
    )


def validate_floor(res: tuple[int, Any], exp: dict[str, Any]) -> None:
    count, last = res
    if count != exp["frames"]:
        raise Invalid(f"decoded {count} payloads, expected {exp['frames']}")
    if not isinstance(last, dict) or last.get("usage") != exp["usage"]:
        raise Invalid("last payload is not the usage chunk")


# --------------------------------------------------------------------------
# Methods
# --------------------------------------------------------------------------

def _exc_line(exc: BaseException) -> str:
    msg = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {msg}"[:120] if msg else type(exc).__name__


try:
    import streamfold

    _SF_ERROR = None
    if not callable(getattr(streamfold, "fold", None)) or not callable(getattr(streamfold, "Folder", None)):
        _SF_ERROR = "not importable (no fold/Folder)"
except Exception as exc:
    streamfold = None  # type: ignore[assignment]
    _SF_ERROR = f"not importable ({_exc_line(exc)})"


def sf_fold(ds: Dataset) -> Any:
    return streamfold.fold(ds.data)


def sf_incremental(ds: Dataset) -> Any:
    f = streamfold.Folder()
    feed = f.feed
    for chunk in ds.chunks:
        feed(chunk)
    return f.close(), f


# openai SDK: the exact pipeline `client.chat.completions.stream(...)` runs, minus HTTP:
#   Stream._iter_events: SSEDecoder().iter_bytes(response.iter_bytes())
#   Stream.__stream__:   stop at "[DONE]"; sse.json(); raise on {"error": ...};
#                        client._process_response_data(cast_to=ChatCompletionChunk)
#                        (= construct_type -> ChatCompletionChunk.construct, no validation,
#                        because _strict_response_validation is False by default)
#   ChatCompletionStream.__stream__: skip chunks whose object != "chat.completion.chunk";
#                        ChatCompletionStreamState.handle_chunk(chunk)
#   get_final_completion()
try:
    import openai
    from openai._streaming import SSEDecoder as OpenAISSEDecoder
    from openai.lib.streaming.chat import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    _OPENAI_CLIENT = openai.OpenAI(api_key="sk-benchmark-no-network", base_url="http://127.0.0.1:9/v1")
    _OPENAI_ERROR = None
except Exception as exc:
    _OPENAI_ERROR = f"not importable ({type(exc).__name__}: {exc})"


def openai_sdk(ds: Dataset) -> Any:
    process = _OPENAI_CLIENT._process_response_data
    state = ChatCompletionStreamState()  # input_tools / response_format: omitted (neutral)
    for sse in OpenAISSEDecoder().iter_bytes(iter(ds.chunks)):
        if sse.data.startswith("[DONE]"):
            break
        data = sse.json()
        if isinstance(data, dict) and data.get("error"):
            raise RuntimeError(f"in-stream error: {data['error']!r}")
        chunk = process(data=data, cast_to=ChatCompletionChunk, response=None)  # type: ignore[arg-type]
        if chunk.object != "chat.completion.chunk":
            continue
        state.handle_chunk(chunk)
    return state.get_final_completion()


try:
    from httpx_sse._decoders import SSEDecoder as HxSSEDecoder
    from httpx_sse._decoders import SSELineDecoder as HxSSELineDecoder

    _HTTPX_SSE_ERROR = None
except Exception as exc:
    _HTTPX_SSE_ERROR = f"not importable ({type(exc).__name__})"


def _merge(acc: dict[str, Any], obj: dict[str, Any]) -> None:
    """The ~20-line dict merge a user would write for chat.completion.chunk objects."""
    if acc["id"] is None:
        acc["id"], acc["model"] = obj.get("id"), obj.get("model")
    for ch in obj.get("choices") or ():
        st = acc["choices"].get(ch["index"])
        if st is None:
            st = acc["choices"][ch["index"]] = {"role": None, "content": [], "tools": {}, "finish_reason": None}
        delta = ch.get("delta") or {}
        if delta.get("role"):
            st["role"] = delta["role"]
        if delta.get("content"):
            st["content"].append(delta["content"])
        for tc in delta.get("tool_calls") or ():
            t = st["tools"].get(tc["index"])
            if t is None:
                t = st["tools"][tc["index"]] = {"index": tc["index"], "id": None, "name": None, "arguments": []}
            if tc.get("id"):
                t["id"] = tc["id"]
            fn = tc.get("function") or {}
            if fn.get("name"):
                t["name"] = fn["name"]
            if fn.get("arguments"):
                t["arguments"].append(fn["arguments"])
        if ch.get("finish_reason"):
            st["finish_reason"] = ch["finish_reason"]
    if obj.get("usage") is not None:
        acc["usage"] = obj["usage"]


def _merge_finish(acc: dict[str, Any]) -> dict[str, Any]:
    """Join pieces once; parse tool arguments once (like streamfold's PARSE-AT-END)."""
    out = []
    for i in sorted(acc["choices"]):
        st = acc["choices"][i]
        calls = []
        for k in sorted(st["tools"]):
            t = st["tools"][k]
            args = "".join(t["arguments"])
            calls.append({"index": k, "id": t["id"], "name": t["name"], "arguments": args, "parsed": json.loads(args)})
        out.append(
            {"index": i, "role": st["role"], "content": "".join(st["content"]), "tool_calls": calls,
             "finish_reason": st["finish_reason"]}
        )
    acc["choices"] = out
    return acc


def httpx_sse_merge(ds: Dataset) -> dict[str, Any]:
    # What httpx_sse.EventSource.iter_sse() does over response.iter_text(): an incremental
    # UTF-8 decoder (httpx's TextDecoder), SSELineDecoder, SSEDecoder; then json.loads per event.
    text = codecs.getincrementaldecoder("utf-8")(errors="replace")
    lines = HxSSELineDecoder()
    sse_dec = HxSSEDecoder()
    acc: dict[str, Any] = {"id": None, "model": None, "choices": {}, "usage": None}
    loads = json.loads

    def events(line_list: list[str]) -> None:
        for line in line_list:
            sse = sse_dec.decode(line)
            if sse is not None and sse.data != "[DONE]":
                _merge(acc, loads(sse.data))

    for chunk in ds.chunks:
        s = text.decode(chunk)
        if s:
            events(lines.decode(s))
    s = text.decode(b"", final=True)
    if s:
        events(lines.decode(s))
    events(lines.flush())
    return _merge_finish(acc)


def _floor(loads: Callable[[bytes], Any]) -> Callable[[Dataset], tuple[int, Any]]:
    def floor(ds: Dataset) -> tuple[int, Any]:
        n = 0
        obj = None
        for frame in ds.data.split(b"\n\n"):
            if frame.startswith(b"data: ") and frame != b"data: [DONE]":
                obj = loads(frame[6:])
                n += 1
        return n, obj

    return floor


try:
    import msgspec

    _MSGSPEC_ERROR = None
    _msgspec_loads = msgspec.json.Decoder().decode
except Exception as exc:
    _MSGSPEC_ERROR = f"not importable ({type(exc).__name__})"
    _msgspec_loads = None


@dataclass
class Method:
    key: str
    label: str
    fn: Callable[[Dataset], Any]
    validate: Callable[[Any, dict[str, Any]], None]
    error: str | None = None  # set when the method can't run at all


def _validate_incremental(res: Any, exp: dict[str, Any]) -> None:
    result, folder = res
    validate_streamfold(result, exp, folder)


METHODS = [
    Method("sf_fold", "streamfold fold(data)", sf_fold, validate_streamfold, _SF_ERROR),
    Method("sf_incr", "streamfold Folder 64 KiB", sf_incremental, _validate_incremental, _SF_ERROR),
    Method("openai", "openai SDK (state)", openai_sdk, validate_openai, _OPENAI_ERROR),
    Method("httpx_sse", "httpx-sse + dict merge", httpx_sse_merge, validate_dict_merge, _HTTPX_SSE_ERROR),
    Method("floor_orjson", "floor (orjson)", _floor(orjson.loads), validate_floor),
    Method("floor_msgspec", "floor (msgspec)", _floor(_msgspec_loads or orjson.loads), validate_floor, _MSGSPEC_ERROR),
    Method("floor_json", "floor (json)", _floor(json.loads), validate_floor),
]


# --------------------------------------------------------------------------
# Measurement
# --------------------------------------------------------------------------


@dataclass
class Cell:
    seconds: float | None = None
    runs: int = 0
    note: str | None = None  # error / skipped / invalid text
    peak_bytes: int | None = None
    mem_note: str | None = None


def _short(exc: BaseException) -> str:
    msg = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {msg}"[:160]


def _run_once(m: Method, ds: Dataset, validate: bool, warm: bool = False) -> tuple[float | None, str | None]:
    """One timed call (gc.collect() first); the result is validated outside the timed region.

    `warm`: one untimed call between the collection and the timed one. A full collection
    walks the whole heap (the openai SDK and pydantic make it ~80k objects) and leaves the
    CPU caches cold; at 1k frames that one-off cost is 5-20% of a run, and it falls on the
    method with the most code and types to touch. The per-frame cost is what is measured.
    """
    gc.collect()
    try:
        if warm:
            m.fn(ds)
        t0 = time.perf_counter()
        res = m.fn(ds)
        dt = time.perf_counter() - t0
    except Exception as exc:
        return None, f"error: {_short(exc)}"
    if validate:
        try:
            m.validate(res, ds.expected)
        except Invalid as exc:
            return None, f"INVALID: {exc}"
        except Exception as exc:
            return None, f"INVALID: {_short(exc)}"
    del res
    return dt, None


def measure_size(methods: list[Method], ds: Dataset, runs: int, label: str) -> dict[str, Cell]:
    """Best of `runs`, methods interleaved run by run (round-robin) so that a burst of
    background load hurts every method alike. The first run of each method is validated."""
    cells = {m.key: Cell() for m in methods}
    spent = dict.fromkeys(cells, 0.0)
    for r in range(runs):
        for m in methods:
            c = cells[m.key]
            if c.note is not None or (r > 0 and spent[m.key] > REPEAT_BUDGET_S):
                continue
            dt, note = _run_once(m, ds, validate=(r == 0), warm=ds.frames <= 10_000)
            if dt is None:
                c.note, c.seconds = note, None
                continue
            c.seconds = dt if c.seconds is None else min(c.seconds, dt)
            c.runs += 1
            spent[m.key] += dt
            print(f"  {label}  run {r + 1}/{runs}  {m.label:26} {dt:8.3f}s", file=sys.stderr, flush=True)
    return cells


def peak_memory(m: Method, ds: Dataset) -> int | None:
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        res = m.fn(ds)
        peak = tracemalloc.get_traced_memory()[1]
        del res
    except Exception:
        peak = None
    finally:
        tracemalloc.stop()
    return peak


def one_bytes(data: bytes) -> list[bytes]:
    """The stream as 1-byte chunks, made before timing (as the 64 KiB chunks are): slicing
    them inside the timed loop costs about 0.1 us a byte, which is the reader's cost, not the folder's."""
    return [data[i : i + 1] for i in range(len(data))]


def one_byte_feed(chunks: list[bytes], close: bool) -> Any:
    f = streamfold.Folder()
    feed = f.feed
    for chunk in chunks:
        feed(chunk)
    return (f.close(), f) if close else None


def httpx_sse_one_byte(chunks: list[bytes]) -> None:
    text = codecs.getincrementaldecoder("utf-8")(errors="replace")
    lines, sse_dec = HxSSELineDecoder(), HxSSEDecoder()
    acc: dict[str, Any] = {"id": None, "model": None, "choices": {}, "usage": None}
    for chunk in chunks:
        s = text.decode(chunk)
        if s:
            for line in lines.decode(s):
                sse = sse_dec.decode(line)
                if sse is not None and sse.data != "[DONE]":
                    _merge(acc, json.loads(sse.data))


def best_of(fn: Callable[[], Any], runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


# --------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------


def _version(mod: str) -> str:
    try:
        from importlib.metadata import version

        return version(mod)
    except Exception:
        return "not installed"


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def print_header() -> None:
    if _SF_ERROR is None:
        where = os.path.dirname(getattr(streamfold, "__file__", None) or "?")
        ver = getattr(streamfold, "__version__", None) or _version("streamfold")
        dec = getattr(streamfold, "FAST_DECODER", None)
        sf = f"streamfold {ver} ({where}{', JSON decoder: ' + str(dec) if dec is not None else ''})"
    else:
        sf = f"streamfold: {_SF_ERROR}"
    print("streamfold benchmark: folding OpenAI chat.completion.chunk SSE streams")
    print(f"Python {platform.python_version()} ({platform.python_implementation()}), {platform.platform()}")
    print(f"CPU: {_cpu()}, {os.cpu_count()} logical cores")
    libs = ["openai", "httpx-sse", "httpx", "pydantic", "orjson", "msgspec"]
    print(sf)
    print(", ".join(f"{n} {_version(n)}" for n in libs))
    try:
        load = os.getloadavg()
        print(f"load average before start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (other processes skew timings)")
    except OSError:
        pass
    print(
        "MB/s = input MB (10^6 bytes) / best time; us/frame = best time / JSON frames (excl. [DONE]);\n"
        f"best of {RUNS['1k']} (1k) / {RUNS['100k']} (100k) / {RUNS['1m']} (1m) runs, gc.collect() before each, tracemalloc off while timing."
    )
    print()


def _fmt_rate(v: float) -> str:
    return f"{v:,.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def _fmt_us(v: float) -> str:
    return f"{v:,.0f}" if v >= 1000 else f"{v:.1f}" if v >= 10 else f"{v:.2f}"


NAME_W = 26
GROUP_W = 19  # per size: MB/s (8) + us/frame (9) + 2 spaces


def print_table(
    shape: str,
    sizes: list[str],
    datasets: dict[str, Dataset],
    cells: dict[tuple[str, str], Cell],
    mem_size: str | None,
) -> list[str]:
    notes: list[str] = []
    note_ids: dict[str, int] = {}
    remarks: list[str] = []

    def note_ref(text: str) -> str:
        if text not in note_ids:
            note_ids[text] = len(note_ids) + 1
            notes.append(text)
        return f"[{note_ids[text]}]"

    desc = {
        "text": "content deltas of 1-3 tokens",
        "tools": "short preamble + 4 parallel tool calls, fragments interleaved in blocks",
    }[shape]
    print(f"== shape: {shape} ({desc}) ==")
    h1 = " " * NAME_W
    h2 = "method".ljust(NAME_W)
    for s in sizes:
        ds = datasets[s]
        h1 += f"{s}: {ds.mb:.3g} MB".rjust(GROUP_W)
        h2 += "MB/s".rjust(9) + "us/frame".rjust(10)
    flat_label = f"{sizes[-1]}/{sizes[0]}" if len(sizes) > 1 else None
    if flat_label:
        h1 += "flat".rjust(8)
        h2 += flat_label.rjust(8)
    if mem_size:
        h1 += "peak MB".rjust(9)
        h2 += f"@{mem_size}".rjust(9)
    print(h1)
    print(h2)
    print("-" * len(h2))
    for m in METHODS:
        row = m.label.ljust(NAME_W)
        per_frame: dict[str, float] = {}
        for s in sizes:
            c = cells.get((m.key, s))
            if c is None or c.seconds is None:
                text = (c.note if c else None) or "n/a"
                if text.startswith("skipped"):
                    cell = "skipped (--full)"
                else:
                    ref = note_ref(text)
                    head = text.split(":")[0] if not text.startswith("not importable") else "not importable"
                    cell = f"{head} {ref}"
                row += cell[: GROUP_W - 1].rjust(GROUP_W)
                continue
            ds = datasets[s]
            if c.runs < RUNS[s]:
                remarks.append(
                    f"{m.label} @{s}: best of {c.runs} run(s), not {RUNS[s]} (repeat budget {REPEAT_BUDGET_S:g}s)"
                )
            us = c.seconds / ds.frames * 1e6
            per_frame[s] = us
            row += _fmt_rate(ds.mb / c.seconds).rjust(9) + _fmt_us(us).rjust(10)
        if flat_label:
            if sizes[0] in per_frame and sizes[-1] in per_frame:
                row += f"{per_frame[sizes[-1]] / per_frame[sizes[0]]:.2f}".rjust(8)
            else:
                row += "-".rjust(8)
        if mem_size:
            c = cells.get((m.key, mem_size))
            pk = c.peak_bytes if c else None
            row += (f"{pk / 1e6:.1f}" if pk is not None else (c.mem_note if c and c.mem_note else "-")).rjust(9)
        print(row)
    print()

    # full fold / floor(orjson), per size
    parts = []
    for s in sizes:
        a, b = cells.get(("sf_fold", s)), cells.get(("floor_orjson", s))
        if a and b and a.seconds and b.seconds:
            r = a.seconds / b.seconds
            parts.append(f"{s} {r:.2f}x{'' if r <= TARGET_FOLD_VS_FLOOR else ' (!)'}")
        else:
            parts.append(f"{s} -")
    print(f"fold(data) time / floor(orjson) time: {'   '.join(parts)}   [target <= {TARGET_FOLD_VS_FLOOR}x]")
    if flat_label:

        def growth(key: str) -> float | None:
            a, b = cells.get((key, sizes[0])), cells.get((key, sizes[-1]))
            if a and b and a.seconds and b.seconds:
                return (b.seconds / datasets[sizes[-1]].frames) / (a.seconds / datasets[sizes[0]].frames)
            return None

        # Splitting and decoding alone grow too (1k frames fit in the CPU caches, 1M do not):
        # "flat" is growing no more than that, or no more than TARGET_FLATNESS.
        floor = growth("floor_orjson")
        allowed = max(TARGET_FLATNESS, floor or 0.0)
        parts = []
        for key, lab in (("sf_fold", "fold"), ("sf_incr", "Folder")):
            f = growth(key)
            parts.append(f"{lab} -" if f is None else f"{lab} {f:.2f}{'' if f <= allowed else ' (!)'}")
        floor_text = "" if floor is None else f"   floor (orjson) {floor:.2f}"
        print(
            f"us/frame growth ({sizes[-1]} / {sizes[0]}): {'   '.join(parts)}{floor_text}"
            f"   [target: flat, <= {TARGET_FLATNESS} or <= the floor's own growth]"
        )
    for r in remarks:
        print(f"note: {r}")
    print()
    return notes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1k,100k,1m", help="comma list of 1k,100k,1m (default: all)")
    ap.add_argument("--shapes", default="text,tools", help="comma list of text,tools (default: both)")
    ap.add_argument("--skip-1m", action="store_true", help="drop the 1M-frame streams")
    ap.add_argument(
        "--full", action="store_true", help="also run the (slow) openai SDK at 1M frames and in the 100k memory pass"
    )
    ap.add_argument("--no-memory", action="store_true", help="skip the tracemalloc peak-memory pass")
    ap.add_argument("--no-one-byte", action="store_true", help="skip the 1-byte feeding section")
    ap.add_argument("--regen", action="store_true", help="regenerate cached streams under benchmarks/.data/")
    args = ap.parse_args(argv)

    sizes = [s.strip().lower() for s in args.sizes.split(",") if s.strip()]
    shapes = [s.strip().lower() for s in args.shapes.split(",") if s.strip()]
    for s in sizes:
        if s not in SIZES:
            ap.error(f"unknown size {s!r} (choose from {', '.join(SIZES)})")
    for s in shapes:
        if s not in SHAPES:
            ap.error(f"unknown shape {s!r} (choose from {', '.join(SHAPES)})")
    if args.skip_1m:
        sizes = [s for s in sizes if s != "1m"]
    sizes.sort(key=SIZES.__getitem__)
    if not sizes:
        ap.error("no sizes left to run")

    print_header()
    t_start = time.perf_counter()
    all_notes: list[tuple[str, list[str]]] = []
    for shape in shapes:
        print(f"[{shape}] preparing streams ...", flush=True)
        datasets = {s: load_dataset(shape, s, args.regen) for s in sizes}
        cells: dict[tuple[str, str], Cell] = {}
        for s in sizes:
            runnable = []
            for m in METHODS:
                if m.error:
                    cells[(m.key, s)] = Cell(note=m.error)
                elif m.key == "openai" and s == "1m" and not args.full:
                    cells[(m.key, s)] = Cell(note="skipped (use --full)")
                else:
                    runnable.append(m)
            for key, cell in measure_size(runnable, datasets[s], RUNS[s], f"{shape:5} {s:>4}").items():
                cells[(key, s)] = cell
        mem_size = MEMORY_SIZE if (MEMORY_SIZE in sizes and not args.no_memory) else None
        if mem_size:
            ds = datasets[mem_size]
            for m in METHODS:
                c = cells[(m.key, mem_size)]
                if c.seconds is None:
                    continue
                if m.key == "openai" and not args.full:
                    c.mem_note = "(--full)"  # ~5x slower under tracemalloc: minutes
                    continue
                t0 = time.perf_counter()
                c.peak_bytes = peak_memory(m, ds)
                print(f"  {shape:5} {mem_size:>4}  {m.label:26} {time.perf_counter() - t0:6.1f}s (tracemalloc)",
                      file=sys.stderr, flush=True)
        print()
        all_notes.append((shape, print_table(shape, sizes, datasets, cells, mem_size)))
        del datasets, cells
        gc.collect()

    if not args.no_one_byte:
        print("== 1-byte feeding (Folder().feed() called once per byte) ==")
        print(f"{'stream':34}{'bytes':>12}{'MB/s':>10}{'us/frame':>10}   target >= {TARGET_ONE_BYTE_MBPS:g} MB/s")
        print("-" * 86)
        for shape in shapes:
            small = load_dataset(shape, "1k")
            big = load_dataset(shape, "100k")
            cut = big.data.rfind(b"\n\n", 0, ONE_BYTE_PREFIX) + 2
            prefix = big.data[:cut]
            prefix_frames = prefix.count(b"\n\ndata: ") + 1
            for label, data, frames, close, runs in (
                (f"{shape} 1k (whole stream, close())", small.data, small.frames, True, 5),
                (f"{shape} 100k, first {cut / 1e3:.0f} KB", prefix, prefix_frames, False, 5),
            ):
                row = label.ljust(34) + f"{len(data):,}".rjust(12)
                if _SF_ERROR:
                    row += "  not importable"
                else:
                    try:
                        chunks = one_bytes(data)
                        if close:
                            res = one_byte_feed(chunks, True)
                            _validate_incremental(res, small.expected)
                            del res
                        t = best_of(lambda d=chunks, c=close: one_byte_feed(d, c), runs)
                        del chunks
                        rate = len(data) / 1e6 / t
                        flag = "" if rate >= TARGET_ONE_BYTE_MBPS else "  (!)"
                        row += _fmt_rate(rate).rjust(10) + _fmt_us(t / frames * 1e6).rjust(10) + flag
                    except Invalid as exc:
                        row += f"  INVALID: {exc}"
                    except Exception as exc:
                        row += f"  error: {_short(exc)}"
                print(row)
            if _HTTPX_SSE_ERROR is None:
                t = best_of(lambda d=one_bytes(small.data): httpx_sse_one_byte(d), 3)  # noqa: B008 - bound per loop on purpose
                print(
                    f"{'  (ref) httpx-sse+merge, ' + shape + ' 1k':34}{len(small.data):>12,}"
                    f"{_fmt_rate(small.mb / t):>10}{_fmt_us(t / small.frames * 1e6):>10}"
                )
        print()

    for shape, notes in all_notes:
        if notes:
            print(f"notes ({shape}):")
            for i, n in enumerate(notes, 1):
                print(f"  [{i}] {n}")
    print(f"total time {time.perf_counter() - t_start:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
