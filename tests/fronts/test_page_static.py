"""The static page (`streamfold page build`) in Chromium, served by a plain static file server on
127.0.0.1: the same core in the browser's Web Worker, under Pyodide, with nothing leaving the tab.

One build a session (conftest.py's `static_site`), one browser profile a module (`static_profile`: its
caches kept, as a person's browser keeps them), a page a test. Tests skip with the reason when the runtime cannot be had (registries unreachable).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from mutations import CAPTURES, INPUTS
from store_helpers import record
from streamfold import fold
from streamfold.store import CaptureStore
from streamfold.web.api import PageApi, fold_options
from streamfold.web.fold_view import encode
from streamfold.web.page.adapter import MAX_SIZE
from streamfold.web.page.bundle import CONTENT_SECURITY_POLICY
from watched_page import Watched

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page

FOLD_ALL = """async (captures) => {
    const { backend } = await import('./static/js/backend.js');
    const answers = {};
    for (const [name, text] of captures) {
        const bytes = atob(text), body = new Uint8Array(bytes.length);
        for (let i = 0; i < bytes.length; i++) body[i] = bytes.charCodeAt(i);
        try {
            const view = await backend.fold({ body, size: body.length }, { dialect: null, transport: null, entry: null },
                                            () => {});
            answers[name] = { result: view.result, export: view.export, source: view.capture.source };
        } catch (error) {
            answers[name] = { error: error.message };
        }
    }
    return answers;
}"""


@pytest.fixture()
def watched(static_profile: BrowserContext, static_site: str) -> Iterator[Watched]:
    watched = Watched(static_profile.new_page())
    watched.page.goto(static_site)
    yield watched
    watched.page.close()
    assert watched.elsewhere(static_site) == [], "the static page asked for something off its own origin"
    assert watched.errors == [], "the page's script threw"


def wait_runtime(page: Page) -> None:
    page.wait_for_selector('body[data-runtime="ready"]', timeout=60_000)


def expected_view(body: bytes) -> dict[str, Any]:
    """What CPython answers for `body`: the same PageApi call the worker makes."""
    api, options = PageApi(max_size=MAX_SIZE), fold_options()
    try:
        view = api.fold(body, options, frames="range", capture=api.read(body, options))
    except Exception as exc:  # the page is told the same sentence
        return {"error": getattr(exc, "message", str(exc))}
    plain: dict[str, Any] = json.loads(encode(view))
    return {"result": plain["result"], "export": plain["export"], "source": plain["capture"]["source"]}


def test_every_capture_folds_in_the_worker_as_in_cpython(watched: Watched) -> None:
    page = watched.page
    given = {**CAPTURES, **INPUTS}
    got = page.evaluate(FOLD_ALL, [(name, base64.b64encode(data).decode()) for name, data in given.items()])
    assert sorted(got) == sorted(given), sorted(set(given) - set(got))[:3]
    # YAML cassettes need PyYAML, which has no WebAssembly wheel: the page says so, in one finding.
    yaml = [name for name in INPUTS if name.endswith((".yaml", ".yml"))]
    assert yaml and all("PyYAML" in json.dumps(got[name]) for name in yaml)
    differ = [name for name, data in given.items() if name not in yaml and got[name] != expected_view(data)]
    assert differ == [], f"{len(differ)} of {len(given)} inputs fold differently in the page: {differ[:5]}"
    # A raw stream's result is fold()'s, the Result JSON contract (the page's reading of an input may add
    # that it is one whole reply, no stream, as `streamfold show` does).
    raw = [name for name in CAPTURES if got[name].get("source") == "raw"]
    assert len(raw) > 150
    assert [name for name in raw if _folded_alone(got[name]["result"]) != json.loads(json.dumps(
        fold(given[name]).to_dict()))] == []


def _folded_alone(result: dict[str, Any]) -> dict[str, Any]:
    return {**result, "diagnostics": [found for found in result["diagnostics"] if found["code"] != "not-a-stream"]}


def test_a_capture_pasted_before_python_is_ready_folds_once_it_is(watched: Watched) -> None:
    page = watched.page
    page.fill("#capture-text", 'data: {"choices":[{"index":0,"delta":{"content":"early"}}]}\n\ndata: [DONE]\n\n')
    page.click("#fold-button")
    page.wait_for_selector('body[data-state="ready"][data-fold-count="1"]', timeout=60_000)
    assert "early" in page.text_content("#result-view")
    assert page.get_attribute("body", "data-runtime") == "ready"
    note = page.text_content("#input-panel")
    assert "stays in this browser tab" in note and "need the streamfold program" in note
    policy = page.get_attribute('meta[http-equiv="Content-Security-Policy"]', "content")
    assert policy == CONTENT_SECURITY_POLICY
    assert "connect-src 'self'" in policy and "unsafe-inline" not in policy and "'unsafe-eval'" not in policy


def test_a_file_over_the_limit_is_refused_before_it_is_read(watched: Watched, tmp_path: Path) -> None:
    big = tmp_path / "huge.sse"
    with open(big, "wb") as file:
        file.truncate(MAX_SIZE + 2**20)  # sparse: nothing is written, and the page must not read it
    watched.page.set_input_files("#file-input", str(big))
    alert = watched.page.wait_for_selector("#alert:not([hidden])", timeout=60_000).text_content()
    assert "The capture is 65 MiB; this page folds at most 64 MiB" in alert, alert


def test_a_long_fold_can_be_cancelled_and_python_starts_again(watched: Watched, tmp_path: Path) -> None:
    page = watched.page
    wait_runtime(page)
    frame = b'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n'
    long = tmp_path / "long.sse"
    long.write_bytes(frame * 600_000)
    page.set_input_files("#file-input", str(long))
    page.click("#cancel-fold", timeout=30_000)
    alert = page.wait_for_selector("#alert:not([hidden])").text_content()
    assert "Cancelled" in alert and "fresh worker" in alert
    wait_runtime(page)
    page.fill("#capture-text", 'data: {"choices":[{"index":0,"delta":{"content":"after"}}]}\n\n')
    page.click("#fold-button")
    page.wait_for_selector('body[data-state="ready"]', timeout=60_000)
    assert "after" in page.text_content("#result-view")


def test_a_dropped_capture_store_lists_its_captures_and_opens_one(watched: Watched, tmp_path: Path) -> None:
    path = tmp_path / "dropped.sqlite"
    body = CAPTURES["tests/captures/openai/a2-tool-call-empty-arguments.sse"]
    with CaptureStore(str(path)) as store:
        record(store, body, 3, url="https://api.example.com/v1/<b>chat</b>")
    with sqlite3.connect(path) as db:  # one file: what a person would copy off a machine
        db.execute("PRAGMA journal_mode = DELETE")
    page = watched.page
    page.set_input_files("#file-input", str(path))
    page.wait_for_selector("#captures-list .capture-row", timeout=60_000)
    assert page.text_content("#captures-store") == "dropped.sqlite"
    assert "<b>chat</b>" in page.text_content("#captures-list")
    page.click("#captures-list .capture-row")
    page.wait_for_selector('body[data-state="ready"]', timeout=60_000)
    assert page.text_content("#result-view") and page.query_selector("#captures-list b") is None


def test_the_build_is_reproducible(static_build: Path, tmp_path: Path) -> None:
    from static_site import build, runtime_or_skip

    again = build(tmp_path / "again", runtime_or_skip())
    files = sorted(path.relative_to(static_build) for path in static_build.rglob("*") if path.is_file())
    assert files == sorted(path.relative_to(again) for path in again.rglob("*") if path.is_file())
    assert [name for name in files if (static_build / name).read_bytes() != (again / name).read_bytes()] == []
    assert not any(name.suffix in {".map", ".ts"} or "starlette" in str(name) for name in files)
    assert os.path.getsize(static_build / "runtime" / "python_stdlib.zip") < 2_000_000


def test_stream_markup_in_the_diff_runs_nothing(watched: Watched) -> None:
    """(That inline script is refused on the static page: test_web_browser's CSP test, which runs on it too.)"""
    from test_web_browser import PROBES, xss_capture

    page = watched.page
    capture = xss_capture()
    page.fill("#capture-text", capture)
    page.click("#fold-button")
    page.wait_for_selector('body[data-state="ready"][data-fold-count="1"]', timeout=60_000)
    page.click("#mode-diff")
    page.fill('.diff-side[data-side="left"] textarea', capture)
    page.fill('.diff-side[data-side="right"] textarea', capture.replace("click me", "tap me"))
    page.click("#compare-button")
    page.wait_for_selector(".diff-table", timeout=60_000)
    assert PROBES[0] in page.text_content(".diff-table")
    page.wait_for_timeout(300)  # an onerror/onload would fire by now
    assert page.evaluate("window.__xss") is None
    assert page.evaluate("document.querySelectorAll('img, iframe, svg, object, embed, a[href]').length") == 0
    assert page.evaluate("[...document.scripts].map((s) => s.getAttribute('src'))") == ["static/page.js"]
    assert page.evaluate("[...document.querySelectorAll('*')].filter((e) => [...e.attributes]"
                         ".some((a) => a.name.startsWith('on'))).length") == 0


def test_a_runtime_that_does_not_load_is_said_and_nothing_waits_on_it(static_build: Path, static_profile: BrowserContext,
                                                                     tmp_path: Path) -> None:
    from static_site import serving_directory

    broken = tmp_path / "broken"
    shutil.copytree(static_build, broken)
    (broken / "runtime" / "pyodide.asm.wasm").unlink()  # a host that lost a file
    page = static_profile.new_page()
    try:
        with serving_directory(broken) as url:
            page.goto(url)
            page.fill("#capture-text", 'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n')
            page.click("#fold-button")
            page.wait_for_selector('body[data-runtime="failed"]', timeout=60_000)
            alert = page.wait_for_selector("#alert:not([hidden])", timeout=30_000).text_content()
            assert "Python did not start" in alert
            assert "Python did not start" in page.text_content("#runtime-status")
    finally:
        page.close()
