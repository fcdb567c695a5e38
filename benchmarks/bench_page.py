#!/usr/bin/env python3
"""Benchmark: the static page (`streamfold page build`) in headless Chromium, served from 127.0.0.1 as a
static host serves it (gzip where the host would compress, `Cache-Control: max-age=600` as GitHub Pages
sends, Last-Modified and 304s), in one run:

- transferred bytes of a first visit (an empty cache) and of a later one (the same browser profile): every
  byte the server wrote, headers included, counted at the server, the worker's fetches too;
- cold and warm start: from navigation to the first folded result of a capture pasted at once (the
  runtime loads meanwhile), in a new browser profile on disk and then again in it, best of --runs;
- the fold of a 100,000-frame capture in the page's worker (backend.fold, wall time as the page waits
  on it) against PageApi.fold and fold() in CPython in this process, on the same bytes;
- the identity count: captures under tests/captures and examples/ whose fold in the page equals CPython's.

Targets (issue 24): warm <= 4 s, cold <= 8 s, first visit <= 6 MB. A benchmark, not a test: it prints a
table and never fails. Progress goes to stderr.

Run:  .venv/bin/python benchmarks/bench_page.py [--runs 3] [--runtime DIR]
"""

from __future__ import annotations

import argparse
import base64
import functools
import gzip
import json
import sys
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from streamfold import fold
from streamfold.web.api import PageApi, fold_options
from streamfold.web.fold_view import encode
from streamfold.web.page.adapter import MAX_SIZE
from streamfold.web.page.bundle import build_files, write_build
from streamfold.web.page.runtime import load_runtime

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
#: What a static host leaves as it is: already compressed.
STORED = (".zip", ".whl", ".png", ".svg")
PASTED = 'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n'


class Host(SimpleHTTPRequestHandler):
    """A static host: gzip on request, a cache lifetime, and a count of the bytes it wrote."""

    written = 0
    lock = threading.Lock()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "max-age=600")
        super().end_headers()

    def send_head(self) -> Any:
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        compress = "gzip" in self.headers.get("Accept-Encoding", "") and not path.name.endswith(STORED)
        if not compress or not path.is_file() or self.headers.get("If-Modified-Since"):
            return super().send_head()
        body = gzip.compress(path.read_bytes(), compresslevel=6, mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Last-Modified", self.date_time_string(int(path.stat().st_mtime)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        return None


class Counting:
    """The socket's writes counted (every byte of every answer, headers too)."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def write(self, data: bytes) -> int:
        with Host.lock:
            Host.written += len(data)
        return self.raw.write(data)  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


class CountingHost(Host):
    def setup(self) -> None:
        super().setup()
        self.wfile = Counting(self.wfile)  # type: ignore[assignment]


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def first_fold(page: Any, url: str) -> float:
    """Seconds from navigation to the first folded result of a capture pasted as soon as the page shows."""
    started = time.perf_counter()
    page.goto(url)
    page.fill("#capture-text", PASTED)
    page.click("#fold-button")
    page.wait_for_selector('body[data-state="ready"][data-fold-count="1"]', timeout=120_000)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--runtime", default=None, help="an unpacked npm pyodide package and msgspec's wheel")
    options = parser.parse_args()
    site = Path(tempfile.mkdtemp(prefix="streamfold-page-")) / "site"
    say(f"building the page in {site}")
    write_build(site, build_files(load_runtime(options.runtime)))
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(CountingHost, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/"
    rows: list[tuple[str, str, str]] = []
    with sync_playwright() as playwright:
        colds, warms, first_bytes, later_bytes = [], [], 0, 0
        for run in range(options.runs):
            # A browser profile of its own each run, on disk as a person's is: its HTTP cache, the compiled
            # WebAssembly V8 keeps beside it, and Cache Storage (the worker's kept Python) start empty.
            context = playwright.chromium.launch_persistent_context(tempfile.mkdtemp(prefix="streamfold-profile-"),
                                                                    executable_path=CHROMIUM, args=ARGS)
            page = context.new_page()
            Host.written = 0
            colds.append(first_fold(page, url))
            first_bytes = Host.written
            # A person stays on the page a moment: long enough for the worker to keep what a later start uses.
            page.wait_for_selector('body[data-runtime-kept="true"]', state="attached", timeout=120_000)
            page.close()
            page = context.new_page()
            Host.written = 0
            warms.append(first_fold(page, url))
            later_bytes = Host.written
            say(f"run {run + 1}: cold {colds[-1]:.2f} s, warm {warms[-1]:.2f} s ({page.text_content('#runtime-status')})")
            if run < options.runs - 1:
                context.close()
        rows += [("first visit, transferred", f"{first_bytes / 1e6:.2f} MB", "<= 6 MB"),
                 ("later visit, transferred", f"{later_bytes / 1e3:.1f} kB", ""),
                 ("cold start to first fold", f"{min(colds):.2f} s (median {sorted(colds)[len(colds) // 2]:.2f})",
                  "<= 8 s"),
                 ("warm start to first fold", f"{min(warms):.2f} s (median {sorted(warms)[len(warms) // 2]:.2f})",
                  "<= 4 s")]
        rows += big_fold(page)
        rows.append(identity(page))
        context.close()
    server.shutdown()
    width = max(len(name) for name, _, _ in rows)
    print(f"{'measure':<{width}}  {'value':<34}  target")
    for name, value, target in rows:
        print(f"{name:<{width}}  {value:<34}  {target}")


def big_fold(page: Any) -> list[tuple[str, str, str]]:
    frame = 'data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":' \
            '{"content":"word "},"finish_reason":null}]}\n\n'
    body = (frame * 100_000 + "data: [DONE]\n\n").encode()
    say(f"folding a 100,000-frame capture ({len(body) / 1e6:.1f} MB) in the page and in CPython")
    in_page = page.evaluate("""async (frame) => {
        const { backend } = await import('./static/js/backend.js');
        const body = new TextEncoder().encode(frame.repeat(100000) + 'data: [DONE]\\n\\n');
        const started = performance.now();
        const view = await backend.fold({ body, size: body.length }, { dialect: null, transport: null, entry: null },
                                        () => {});
        return [performance.now() - started, view.timing.fold_ms];
    }""", frame)
    api, options = PageApi(max_size=MAX_SIZE), fold_options()
    started = time.perf_counter()
    api.fold(body, options, frames="range", capture=api.read(body, options))
    cpython_view = time.perf_counter() - started
    started = time.perf_counter()
    fold(body)
    cpython_fold = time.perf_counter() - started
    return [("100k frames: page, backend.fold", f"{in_page[0] / 1000:.2f} s (its fold {in_page[1] / 1000:.2f} s)", ""),
            ("100k frames: CPython, PageApi.fold", f"{cpython_view:.2f} s ({in_page[0] / 1000 / cpython_view:.1f}x)", ""),
            ("100k frames: CPython, fold()", f"{cpython_fold:.2f} s", "")]


def identity(page: Any) -> tuple[str, str, str]:
    paths = sorted([*(ROOT / "tests" / "captures").rglob("*"), *(ROOT / "examples").glob("*")])
    captures = {str(path.relative_to(ROOT)): path.read_bytes() for path in paths
                if path.is_file() and not path.name.endswith((".expect.json", ".md"))}
    got = page.evaluate("""async (captures) => {
        const { backend } = await import('./static/js/backend.js');
        const results = {};
        for (const [name, text] of captures) {
            const bytes = atob(text), body = Uint8Array.from(bytes, (c) => c.charCodeAt(0));
            try {
                results[name] = (await backend.fold({ body, size: body.length }, {}, () => {})).result;
            } catch (error) { results[name] = error.message; }
        }
        return results;
    }""", [(name, base64.b64encode(data).decode()) for name, data in captures.items()])
    api, options = PageApi(max_size=MAX_SIZE), fold_options()
    same = 0
    for name, data in captures.items():
        try:
            expected: Any = json.loads(encode(api.fold(data, options, frames="range",
                                                       capture=api.read(data, options))))["result"]
        except Exception as exc:
            expected = getattr(exc, "message", str(exc))
        same += got[name] == expected
    return ("identity over the captures", f"{same} of {len(captures)} the same as CPython", "all")


if __name__ == "__main__":
    main()
