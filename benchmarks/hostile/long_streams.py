"""Not hostile, only long: bench_fold.py's OpenAI chat streams of N frames (~330 bytes each), for
bench_hostile.py's peak-memory column (issue 22: a fold of a million frames peaked at 2.59x its input,
input included, when the Result kept a copy of it).

  long-text   content deltas of 1-3 tokens (bench_fold's `text` shape)
  long-tools  a preamble, then 4 parallel tool calls (bench_fold's `tools` shape)

"peak/input" is what the fold added; add 1 for the peak with the input itself. The generators need
bench_fold.py's dependencies (the `[bench]` extra: orjson).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from types import ModuleType


@cache
def _bench_fold() -> ModuleType:
    path = Path(__file__).resolve().parents[1] / "bench_fold.py"
    spec = importlib.util.spec_from_file_location("bench_fold", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


def long_stream(shape: str) -> Callable[[int], bytes]:
    def generate(n: int) -> bytes:
        bench = _bench_fold()
        data: bytes = bench.GENERATORS[shape](n, bench.SEED)[0]
        return data
    return generate


_SIZES = {"small": [100_000, 1_000_000], "default": [100_000, 1_000_000], "large": [1_000_000, 3_000_000]}

CASES = {
    "long-text": (long_stream("text"), "frame", _SIZES),
    "long-tools": (long_stream("tools"), "frame", _SIZES),
}
