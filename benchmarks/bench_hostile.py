#!/usr/bin/env python3
"""Benchmark: the cost of folding hostile input (time and peak memory).

Each case is a stream built to make a folder do much work per input byte:

  gemini-index     one Vertex `partialArgs` fragment whose jsonPath is `$.a[N]`
  tools-<dialect>  N distinct tool calls (openai-chat, anthropic, gemini, openai-responses, ollama, cohere)
  unknown-field    N lines `Data: x` + blank line: an unknown SSE field, a finding per frame
  new-choices      N frames each opening a new choice (`{"choices":[{"index":i,...}]}`)
  invalid-json     N frames `data: {` (an error per frame)

Every case runs `streamfold.fold(data)` in its own subprocess, so the peak
resident memory is that case's alone; the input is read from a
file first, and the peak resident size (Linux /proc/self/status VmHWM; not
ru_maxrss, which a child inherits from the parent across exec) is counted
from the resident size then, so "peak/input" is what the fold itself added
per input byte (below a few MB it is noisy: the allocator's free arenas
absorb some of it). Linear cost shows as a flat "µs/unit" and
a flat "peak/input" down the sizes of a case.

This is a benchmark, not a test: it prints a table and never fails. It runs
against whatever `streamfold` is importable, so point PYTHONPATH at a tree:

  PYTHONPATH=src .venv/bin/python benchmarks/bench_hostile.py
  PYTHONPATH=/path/to/other/src .venv/bin/python benchmarks/bench_hostile.py --timeout 60

Options: --cases a,b (prefixes), --scale small|default|large, --timeout SECONDS
(per case; a case past it shows "timeout" and its larger sizes are skipped),
--tracemalloc (also the Python-level peak, slower), --before SRC (every case also run
against another tree, side by side in the same run: before and after a change).

More cases live in benchmarks/hostile/, a module per group, each a `CASES` dict
shaped as the one below, with an optional fourth item: the code that runs the case.

  git worktree add /tmp/before OLD && python benchmarks/bench_hostile.py --before /tmp/before/src
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

Generator = Callable[[int], bytes]


def _sse(payloads: list[str], events: list[str] | None = None) -> bytes:
    if events is None:
        return "".join(f"data: {p}\n\n" for p in payloads).encode()
    return "".join(f"event: {e}\ndata: {p}\n\n" for e, p in zip(events, payloads)).encode()


def gemini_index(n: int) -> bytes:
    head = ('{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","willContinue":true}}],'
            '"role":"model"}}]}')
    frag = ('{"candidates":[{"content":{"parts":[{"functionCall":{"partialArgs":[{"jsonPath":"$.a[%d]",'
            '"stringValue":"x"}],"willContinue":false}}],"role":"model"},"finishReason":"STOP"}]}') % n
    return _sse([head, frag])


def tools_openai_chat(n: int) -> bytes:
    out = [f'{{"object":"chat.completion.chunk","choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":{i},'
           f'"id":"c{i}","type":"function","function":{{"name":"f","arguments":"{{}}"}}}}]}}}}]}}' for i in range(n)]
    out.append('{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}')
    return _sse(out) + b"data: [DONE]\n\n"


def tools_anthropic(n: int) -> bytes:
    events = ["message_start"]
    payloads = ['{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"c",'
                '"content":[],"stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}}']
    for i in range(n):
        events += ["content_block_start", "content_block_delta", "content_block_stop"]
        payloads += [
            f'{{"type":"content_block_start","index":{i},"content_block":{{"type":"tool_use","id":"t{i}",'
            f'"name":"f","input":{{}}}}}}',
            f'{{"type":"content_block_delta","index":{i},"delta":{{"type":"input_json_delta",'
            f'"partial_json":"{{}}"}}}}',
            f'{{"type":"content_block_stop","index":{i}}}']
    events += ["message_delta", "message_stop"]
    payloads += ['{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":1}}',
                 '{"type":"message_stop"}']
    return _sse(payloads, events)


def tools_gemini(n: int) -> bytes:
    # No ids: each call is checked against the calls before it (a repeated call is kept once).
    out = [f'{{"candidates":[{{"content":{{"parts":[{{"functionCall":{{"name":"f","args":{{"i":{i}}}}}}}],'
           f'"role":"model"}}}}]}}' for i in range(n)]
    out.append('{"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP"}]}')
    return _sse(out)


def tools_openai_responses(n: int) -> bytes:
    events, payloads = ["response.created"], [
        '{"type":"response.created","sequence_number":0,"response":{"id":"r","object":"response",'
        '"status":"in_progress","model":"m","output":[]}}']
    seq = 1
    for i in range(n):
        item = f'"id":"fc{i}","type":"function_call","call_id":"c{i}","name":"f"'
        for event, body in (
                ("response.output_item.added", f'"output_index":{i},"item":{{{item},"arguments":"",'
                                               f'"status":"in_progress"}}'),
                ("response.function_call_arguments.delta", f'"item_id":"fc{i}","output_index":{i},"delta":"{{}}"'),
                ("response.function_call_arguments.done", f'"item_id":"fc{i}","output_index":{i},"arguments":"{{}}"'),
                ("response.output_item.done", f'"output_index":{i},"item":{{{item},"arguments":"{{}}",'
                                              f'"status":"completed"}}')):
            events.append(event)
            payloads.append(f'{{"type":"{event}","sequence_number":{seq},{body}}}')
            seq += 1
    events.append("response.completed")
    payloads.append(f'{{"type":"response.completed","sequence_number":{seq},"response":{{"id":"r",'
                    '"object":"response","status":"completed","model":"m","output":[]}}')
    return _sse(payloads, events)


def tools_ollama(n: int) -> bytes:
    lines = [f'{{"model":"q","message":{{"role":"assistant","content":"","tool_calls":[{{"function":'
             f'{{"name":"f","arguments":{{"i":{i}}}}}}}]}},"done":false}}' for i in range(n)]
    lines.append('{"model":"q","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}')
    return ("\n".join(lines) + "\n").encode()


def tools_cohere(n: int) -> bytes:
    events, payloads = ["message-start"], ['{"type":"message-start","id":"m","delta":{"message":{"role":"assistant"}}}']
    for i in range(n):
        events += ["tool-call-start", "tool-call-delta", "tool-call-end"]
        payloads += [
            f'{{"type":"tool-call-start","index":{i},"delta":{{"message":{{"tool_calls":{{"id":"t{i}",'
            '"type":"function","function":{"name":"f","arguments":""}}}}}',
            f'{{"type":"tool-call-delta","index":{i},"delta":{{"message":{{"tool_calls":{{"function":'
            '{"arguments":"{}"}}}}}',
            f'{{"type":"tool-call-end","index":{i}}}']
    events.append("message-end")
    payloads.append('{"type":"message-end","delta":{"finish_reason":"TOOL_CALL"}}')
    return _sse(payloads, events)


def unknown_field(n: int) -> bytes:
    return b"Data: x\n\n" * n


def new_choices(n: int) -> bytes:
    return "".join(f'data: {{"choices":[{{"index":{i},"delta":{{"content":"a"}}}}]}}\n\n'
                   for i in range(n)).encode()


def invalid_json(n: int) -> bytes:
    return b"data: {\n\n" * n


#: name -> (generator, what a unit is, sizes per scale)
CASES: dict[str, tuple[Generator, str, dict[str, list[int]]]] = {
    "gemini-index": (gemini_index, "index", {
        "small": [10**5, 10**6], "default": [10**6, 10**7, 10**8], "large": [10**7, 10**8, 10**9]}),
    "tools-openai-chat": (tools_openai_chat, "call", {
        "small": [2_000, 4_000], "default": [10_000, 20_000, 40_000], "large": [40_000, 100_000, 200_000]}),
    "tools-anthropic": (tools_anthropic, "call", {
        "small": [2_000, 4_000], "default": [10_000, 20_000, 40_000], "large": [40_000, 100_000, 200_000]}),
    "tools-gemini": (tools_gemini, "call", {
        "small": [2_000, 4_000], "default": [10_000, 20_000, 40_000], "large": [40_000, 100_000, 200_000]}),
    "tools-openai-responses": (tools_openai_responses, "call", {
        "small": [2_000, 4_000], "default": [10_000, 20_000, 40_000], "large": [40_000, 100_000, 200_000]}),
    "tools-ollama": (tools_ollama, "call", {
        "small": [2_000, 4_000], "default": [10_000, 20_000, 40_000], "large": [40_000, 100_000, 200_000]}),
    "tools-cohere": (tools_cohere, "call", {
        "small": [2_000, 4_000], "default": [10_000, 20_000, 40_000], "large": [40_000, 100_000, 200_000]}),
    "unknown-field": (unknown_field, "frame", {
        "small": [10**4, 10**5], "default": [10**5, 4 * 10**5, 10**6], "large": [10**6, 3_500_000]}),
    "new-choices": (new_choices, "frame", {
        "small": [10**4, 5 * 10**4], "default": [2 * 10**4, 10**5, 3 * 10**5], "large": [3 * 10**5, 10**6]}),
    "invalid-json": (invalid_json, "frame", {
        "small": [10**4, 10**5], "default": [10**5, 4 * 10**5, 10**6], "large": [10**6, 3 * 10**6]}),
}

#: The default way a case is run: fold the input. A case may give its own code (the fourth item of its
#: tuple), run with `data` (the input bytes), `path` (a file holding them) and `streamfold` bound; it may
#: set `result` to a Result, whose findings the table then counts.
FOLD = "result = streamfold.fold(data)"

# Run in the subprocess: read the input, note the peak so far, run the case, report.
_CHILD = r"""
import json, resource, sys, time, tracemalloc
path, use_tracemalloc, how = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
import streamfold
with open(path, "rb") as handle:
    data = handle.read()
def status(field):  # kB in /proc/self/status: VmRSS now, VmHWM the peak of this process image
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # not Linux: the peak so far
namespace = {"data": data, "path": path, "streamfold": streamfold}
before = status("VmRSS")
if use_tracemalloc:
    tracemalloc.start()
start = time.perf_counter()
exec(how, namespace)
elapsed = time.perf_counter() - start
traced = tracemalloc.get_traced_memory()[1] if use_tracemalloc else None
after = status("VmHWM")
result = namespace.get("result")
kept = ("%d / %d / %d / %d" % (len(result.diagnostics), len(result.errors), len(result.choices),
                               sum(len(choice.tool_calls) for choice in result.choices))
        if isinstance(result, streamfold.Result) else str(namespace.get("kept", "")))
print(json.dumps({"seconds": elapsed, "peak": max(after - before, 0), "traced": traced, "kept": kept}))
"""


def run_case(data: bytes, how: str, timeout: float, use_tracemalloc: bool,
             source: str | None) -> dict[str, object] | str:
    with tempfile.NamedTemporaryFile(suffix=".bin", delete=False) as handle:
        handle.write(data)
        path = handle.name
    env = os.environ.copy()
    if source is not None:
        env["PYTHONPATH"] = source + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD, path, "1" if use_tracemalloc else "0", how],
                              capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return "timeout"
    finally:
        os.unlink(path)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        return f"failed: {last[:80]}"
    report: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def all_cases() -> dict[str, tuple[Generator, str, dict[str, list[int]], str]]:
    """The cases above and those of every module in benchmarks/hostile/ (each a `CASES` dict)."""
    out = {name: (*case, FOLD) for name, case in CASES.items()}
    folder = Path(__file__).resolve().parent / "hostile"
    for module_path in sorted(folder.glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"hostile_{module_path.stem}", module_path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for name, case in module.CASES.items():
            out[name] = (*case, FOLD) if len(case) == 3 else case
    return out


def _cells(report: dict[str, object] | str, n: int, size: int, use_tracemalloc: bool) -> list[str]:
    if isinstance(report, str):
        return [report, "", "", ""] + ([""] if use_tracemalloc else [])
    seconds, peak = float(report["seconds"]), float(report["peak"])  # type: ignore[arg-type]
    cells = [f"{seconds:.2f} s", f"{seconds / n * 1e6:.2f}", _size(peak), f"{peak / size:.1f}x"]
    if use_tracemalloc:
        cells.append(f"{_size(float(report['traced']))} ({float(report['traced']) / size:.1f}x)")  # type: ignore[arg-type]
    return cells


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", default="", help="comma-separated case names or prefixes (default: all)")
    parser.add_argument("--scale", choices=("small", "default", "large"), default="default")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per case and size")
    parser.add_argument("--tracemalloc", action="store_true", help="also measure the tracemalloc peak")
    parser.add_argument("--before", metavar="SRC", help="also run every case against this source tree (e.g. a "
                        "worktree of an older commit's src/), side by side in the same run")
    args = parser.parse_args()
    wanted = [name for name in args.cases.split(",") if name]
    try:
        import streamfold
        where = str(Path(streamfold.__file__).resolve().parent)
    except ImportError:
        where = "not importable"
    print(f"streamfold from {where}{f'; before: {args.before}' if args.before else ''}; "
          f"python {sys.version.split()[0]}; load {os.getloadavg()[0]:.1f}; scale {args.scale}; "
          f"timeout {args.timeout:.0f} s per run")
    one = ["time", "µs/unit", "peak RSS added", "peak/input"] + (["traced peak"] if args.tracemalloc else [])
    columns = ([f"before: {c}" for c in one] + [f"after: {c}" for c in one]) if args.before else one
    header = "| case | size | input | " + " | ".join(columns) + " | kept: diagnostics / errors / choices / tool calls |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    stopped: set[str] = set()
    for name, (generate, _unit, scales, how) in all_cases().items():
        if wanted and not any(name.startswith(prefix) for prefix in wanted):
            continue
        for n in scales[args.scale]:
            data = generate(n)
            print(f"{name} {n}...", file=sys.stderr, flush=True)
            cells: list[str] = []
            kept = ""
            for source in ([args.before, None] if args.before else [None]):
                if source in stopped:  # past its timeout at a smaller size
                    cells += ["skipped"] + [""] * (len(one) - 1)
                    continue
                report = run_case(data, how, args.timeout, args.tracemalloc, source)
                if report == "timeout":
                    stopped.add(source)  # type: ignore[arg-type]
                cells += _cells(report, n, len(data), args.tracemalloc)
                if isinstance(report, dict):
                    kept = str(report["kept"])
            print(f"| {name} | {n:,} | {_size(len(data))} | " + " | ".join(cells) + f" | {kept} |", flush=True)
        stopped.clear()

if __name__ == "__main__":
    main()
