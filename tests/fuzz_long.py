"""The long mutation fuzz, at the speed of the fold: the fuzz tests' own cases (tests/fuzz_runs.py
`CASES`: the same strategies, the same mutations), drawn from fresh seeds by a plain random draw instead
of Hypothesis's engine (which costs more per input than the fold it feeds, and whose shrinking a run of a
million inputs does not need), over every core. Not a test module: the suite's fuzz tests draw the same
inputs every run; this is how new ones come in.

    python tests/fuzz_long.py 1000000 --report finds.jsonl      # inputs, spread over the runs by weight
    python tests/fuzz_runs.py keep finds.jsonl                   # keep each failing input as a test

Every failure is one JSON line in the report (the run, its options, the exception, the innermost
streamfold frame, the input); the summary at the end counts inputs per run and failures per site. A site
keeps at most `--per-site` inputs, so one bug does not fill the report.
"""

from __future__ import annotations

import argparse
import base64
import json
import multiprocessing
import os
import random
import sys
import time
import traceback
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.pop("STREAMFOLD_FUZZ_REPORT", None)  # failures are recorded here, not by `guarded`

from hypothesis.strategies import SearchStrategy
from hypothesis.strategies._internal.lazy import unwrap_strategies

from fuzz_runs import CASES, RUNS
from mutations import _innermost_streamfold_frame

#: How the inputs are shared among the runs: the cheap, broad ones get most.
WEIGHTS = {"fold": 25, "json values": 25, "chunks": 20, "forced": 20, "readers": 6, "cli": 4}


#: Characters for drawn text: ASCII, the separators and marks streams trip on, and wide ones.
_CHARS = [*list('abcxyz019 _-:{}[]",\\/'), "\n", "\r", "\t", "\x00", "\u2028", "\ufeff", "é", "中", "🚀", "\U0010ffff"]


class _RandomDraw:
    """Hypothesis's `draw` for the strategies tests/mutations.py and fuzz_runs.py use, from a plain
    `random.Random`: each strategy's own bounds and elements, ends of ranges drawn more often (as
    Hypothesis does), composites run with this draw."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def _integer(self, low: int | None, high: int | None) -> int:
        rng = self.rng
        low = low if low is not None else -(2 ** rng.choice([8, 32, 70]))
        high = high if high is not None else low + 2 ** rng.choice([4, 16, 32, 70])
        return rng.choice([low, high]) if rng.random() < 0.1 else rng.randint(low, high)

    def _size(self, low: int, high: int | None) -> int:
        return self._integer(low, high if high is not None else low + 16)

    def __call__(self, strategy: SearchStrategy[Any]) -> Any:
        s: Any = unwrap_strategies(strategy)
        rng, kind = self.rng, type(s).__name__
        if kind == "CompositeStrategy":
            return s.definition(self, *s.args, **s.kwargs)
        if kind == "IntegersStrategy":
            return self._integer(s.start, s.end)
        if kind == "SampledFromStrategy" and not s._transformations:
            return rng.choice(s.elements)
        if kind == "FloatStrategy":  # finite, as mutations.py asks: any magnitude, both signs, the zeros
            return rng.choice([0.0, -0.0, 5e-324, 1.7976931348623157e308, rng.uniform(-1e6, 1e6),
                               rng.random() * 10.0 ** rng.randint(-300, 300) * rng.choice([1, -1])])
        if kind == "BooleansStrategy":
            return rng.random() < 0.5
        if kind == "BytesStrategy":
            return rng.randbytes(self._size(s.min_size, s.max_size))
        if kind == "TextStrategy":
            return "".join(rng.choice(_CHARS) for _ in range(self._size(s.min_size, s.max_size)))
        if kind == "OneOfStrategy":
            return self(rng.choice(s.original_strategies))
        if kind == "ListStrategy":
            return [self(s.element_strategy) for _ in range(self._size(s.min_size, s.max_size))]
        if kind == "FixedDictStrategy":
            return {key: self(value) for key, value in s.mapping.items()}
        raise TypeError(f"the long fuzz cannot draw a {kind}: teach _RandomDraw, or use Hypothesis")


def _draw(name: str, seed: int) -> dict[str, Any]:
    return _RandomDraw(random.Random(seed))(CASES[name])  # type: ignore[no-any-return]


def _work(job: tuple[int, int, int]) -> tuple[Counter[str], list[dict[str, Any]]]:
    first_seed, count, per_site = job
    warnings.simplefilter("ignore")  # a fold's warnings are not failures; its exceptions are
    names = list(WEIGHTS)
    weights = [WEIGHTS[name] for name in names]
    rng = random.Random(first_seed)
    done: Counter[str] = Counter()
    sites: Counter[str] = Counter()
    failures: list[dict[str, Any]] = []
    for seed in range(first_seed, first_seed + count):
        name = rng.choices(names, weights)[0]
        case = _draw(name, seed)
        done[name] += 1
        try:
            RUNS[name](**case)
        except Exception as exc:
            where = _innermost_streamfold_frame(exc)
            site = f"{type(exc).__name__} {where}"
            sites[site] += 1
            done[f"failed: {site}"] += 1
            if sites[site] <= per_site:
                data: bytes = case["data"]
                failures.append({"test": name, "type": type(exc).__name__, "where": where,
                                 "message": str(exc)[:300], "options": {k: v for k, v in case.items() if k != "data"},
                                 "size": len(data), "seed": seed, "traceback": traceback.format_exc(limit=-4)[-1500:],
                                 "input": base64.b64encode(data).decode() if len(data) < 200_000 else None})
    return done, failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("inputs", type=int, help="how many inputs in all")
    parser.add_argument("--report", type=Path, required=True, help="JSON lines, one per kept failure")
    parser.add_argument("--seed", type=int, default=None, help="the first seed (default: from the clock)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--batch", type=int, default=2000, help="inputs per job")
    parser.add_argument("--per-site", type=int, default=5, help="inputs kept per failing site")
    args = parser.parse_args()
    first = args.seed if args.seed is not None else int(time.time()) * 10_000_000
    jobs = [(first + start, min(args.batch, args.inputs - start), args.per_site)
            for start in range(0, args.inputs, args.batch)]
    totals: Counter[str] = Counter()
    kept: Counter[str] = Counter()
    began = time.perf_counter()
    print(f"{args.inputs:,} inputs from seed {first} on {args.workers} workers", flush=True)
    with multiprocessing.Pool(args.workers, maxtasksperchild=20) as pool, args.report.open("a") as report:
        for n, (done, failures) in enumerate(pool.imap_unordered(_work, jobs), 1):
            totals.update(done)
            for failure in failures:
                site = f"{failure['type']} {failure['where']}"
                if kept[site] < args.per_site:
                    kept[site] += 1
                    report.write(json.dumps(failure) + "\n")
            report.flush()
            if n % 10 == 0 or n == len(jobs):
                ran = sum(v for k, v in totals.items() if not k.startswith("failed"))
                print(f"{ran:,} inputs, {sum(v for k, v in totals.items() if k.startswith('failed')):,} failed, "
                      f"{ran / (time.perf_counter() - began):.0f}/s", flush=True)
    print("inputs per run: " + ", ".join(f"{name} {totals[name]:,}" for name in WEIGHTS))
    for site, count in sorted(((k, v) for k, v in totals.items() if k.startswith("failed")), key=lambda kv: -kv[1]):
        print(f"{count:>8,}  {site[len('failed: '):]}")


if __name__ == "__main__":
    main()
