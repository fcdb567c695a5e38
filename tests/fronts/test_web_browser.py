"""The web page in a real browser: Playwright driving Debian's Chromium
(/usr/bin/chromium) against a real uvicorn server on 127.0.0.1, and against the static
page (`streamfold page build`) on a static file server, where Python runs in the tab: every
test runs on both (`server` is either), but what checks the server itself.

Skipped, with the reason, when playwright or the browser is missing:
    apt-get install -y chromium && pip install playwright     (never `playwright install`)

Every test's page records each request it makes and each uncaught script
error; the fixture fails the test if any request left 127.0.0.1 or a script
threw. Screenshots land in tests/artifacts/ (gitignored).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

import streamfold
from static_site import StaticSite, only_served
from streamfold.services.rows import frame_rows
from streamfold.web.app import create_app
from streamfold.web.server import RunningServer, start_in_thread

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


# -- fixtures (the server and the browser are conftest.py's) ------------------- -------------------------------------------------------------------

class Recorder:
    def __init__(self) -> None:
        self.requests: list[str] = []
        self.errors: list[str] = []

    def off_loopback(self) -> list[str]:
        def host(url: str) -> str | None:
            return urlsplit(url[5:] if url.startswith("blob:") else url).hostname
        return [url for url in self.requests if not url.startswith("data:") and host(url) != "127.0.0.1"]


@pytest.fixture()
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture()
def page(browser: Browser, recorder: Recorder, server: RunningServer | StaticSite) -> Iterator[Page]:
    static = isinstance(server, StaticSite)
    context = server.profile if static else browser.new_context(viewport={"width": 1400, "height": 900},
                                                                 accept_downloads=True)
    opened = context.new_page()
    opened.on("request", lambda request: recorder.requests.append(request.url))
    opened.on("pageerror", lambda error: recorder.errors.append(str(error)))
    yield opened
    if static:
        opened.close()  # the profile, and the Python it keeps, stay for the module's next test
    else:
        context.close()
    assert recorder.off_loopback() == [], "the page asked for something off this machine"
    assert recorder.errors == [], "the page's script threw"


def open_page(page: Page, server: RunningServer) -> None:
    page.goto(server.url)
    page.wait_for_selector("#capture-text", state="visible")


def fold_text(page: Page, text: str) -> None:
    """Paste a capture and wait until the page is interactive with it."""
    if not page.is_visible("#capture-text"):
        page.click("#paste-button")
    before = page.get_attribute("body", "data-fold-count") or "0"
    page.fill("#capture-text", text)
    page.click("#fold-button")
    wait_ready(page, int(before) + 1)


def wait_ready(page: Page, count: int = 1, timeout: float = 30_000) -> None:
    page.wait_for_selector(f'body[data-state="ready"][data-fold-count="{count}"]', timeout=timeout)


def selected_frame(page: Page) -> int:
    return int(page.get_attribute("body", "data-selected-frame") or "-1")


def character_point(page: Page, selector: str, offset: int) -> tuple[float, float]:
    """The centre of character `offset` (UTF-16 units) of an element's text, on screen."""
    point = page.evaluate("""([selector, offset]) => {
        const element = document.querySelector(selector);
        const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
        let seen = 0;
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            if (offset < seen + node.data.length) {
                const range = document.createRange();
                range.setStart(node, offset - seen);
                range.setEnd(node, offset - seen + 1);
                range.startContainer.parentElement.scrollIntoView({block: 'center'});
                const rect = range.getClientRects()[0];
                return [rect.left + rect.width / 2, rect.top + rect.height / 2];
            }
            seen += node.data.length;
        }
        return null;
    }""", [selector, offset])
    assert point is not None
    return point[0], point[1]


def highlighted(page: Page, name: str = "sf-selected") -> list[str]:
    return page.evaluate(f"[...(CSS.highlights.get('{name}') || [])].map((range) => range.toString())")  # type: ignore[no-any-return]


def screenshot(page: Page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    page.screenshot(path=str(path))
    return path


def chunk(delta: dict[str, Any], finish: str | None = None, model: str = "m") -> str:
    body = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return "data: " + json.dumps(body, ensure_ascii=False) + "\n\n"


# -- the pipeline ---------------------------------------------------------------

def test_pasted_capture_shows_every_stage(page: Page, server: RunningServer) -> None:
    text = (EXAMPLES / "openai-tool-calls.sse").read_text(encoding="utf-8")
    result = streamfold.fold(text)
    choice = result.choices[0]
    open_page(page, server)
    fold_text(page, text)
    # 4. the merged result
    assert page.text_content(".reply-text") == choice.content
    assert page.locator(".tool-name").all_text_contents() == [call.name for call in choice.tool_calls]
    assert page.locator(".args-text").all_text_contents() == [call.arguments for call in choice.tool_calls]
    assert "Lisbon, Portugal" in page.text_content(".tool-call .json-tree")
    assert page.text_content(".finish .badge") == "tool_calls"
    assert "200" in page.text_content(".usage")
    # the summary
    summary = page.text_content("#summary-bar")
    assert "complete" in summary and "openai-chat" in summary and f"{len(result.frames)} frames" in summary
    # 2. events: numbered, virtualised
    assert page.text_content("#events-count") == f"{len(result.frames)} frames"
    first_row = page.locator('#event-list .vl-row[data-frame="0"]')
    assert first_row.locator(".ev-index").text_content() == "0"
    assert first_row.locator(".badge").text_content() == "json"
    # 3. JSON of the selected frame (the first that produced text), as a tree
    start = selected_frame(page)
    assert start == result.frame_producing_char(0).index
    assert page.text_content(".frame-title") == f"Frame {start}"
    assert '"chat.completion.chunk"' in page.text_content("#json-view .json-tree")
    # 1. raw bytes: data: prefixes and line ends visible; [DONE] found by searching for it
    assert page.locator("#raw-list .raw-row .field.data").first.text_content() == "data"
    assert page.locator("#raw-list .raw-row .eol").first.text_content() == "↵"
    page.fill("#frame-search", "[DONE]")
    page.press("#frame-search", "Enter")
    last = len(result.frames) - 1
    page.wait_for_selector(f'body[data-selected-frame="{last}"]')
    assert page.text_content("#raw-list .raw-row.selected .done") == "[DONE]"
    assert "the stream says it is over" in page.text_content("#json-view")
    page.fill("#frame-search", "")
    page.press("#frame-search", "Escape")
    page.keyboard.press("Home")
    assert selected_frame(page) == 0
    page.keyboard.press("j")
    assert selected_frame(page) == 1
    path = screenshot(page, "web-tool-calls.png")
    assert path.stat().st_size > 10_000


def test_what_is_no_stream_claims_no_dialect_or_transport_in_the_summary(page: Page, server: RunningServer) -> None:
    open_page(page, server)
    fold_text(page, '{"error":{"message":"Incorrect API key provided","type":"invalid_request_error",'
                    '"code":"invalid_api_key"}}')
    summary = page.text_content("#summary-bar")
    assert "not a stream (error-response)" in summary, summary
    assert "sse" not in summary.split("·") and " sse " not in f" {summary} " and "unknown" not in summary, summary
    fold_text(page, (EXAMPLES / "openai-plain-text.sse").read_text(encoding="utf-8"))
    summary = page.text_content("#summary-bar")
    assert "not a stream" not in summary and "openai-chat" in summary and "sse" in summary, summary


def test_broken_frame_is_highlighted_and_the_rest_folds(page: Page, server: RunningServer) -> None:
    text = (EXAMPLES / "openai-broken.sse").read_text(encoding="utf-8")
    result = streamfold.fold(text)
    open_page(page, server)
    fold_text(page, text)
    # The page opens on the first broken frame.
    assert selected_frame(page) == 17
    row = page.locator('#event-list .vl-row[data-frame="17"]')
    assert "p-error" in row.get_attribute("class")
    assert row.locator(".badge").text_content() == "invalid"
    assert page.locator("#raw-list .raw-row.p-error").count() >= 2
    invalid = page.locator(".invalid-payload")
    assert "Unterminated string" in invalid.text_content()
    assert invalid.locator("mark.error-mark").text_content() == '"'
    # Everything after the broken frame still folded (the reply goes on to Sydney and Melbourne).
    assert page.text_content(".reply-text") == result.choices[0].content
    assert "Sydney and Melbourne" in result.choices[0].content
    assert page.locator(".findings .finding-code").all_text_contents() == [
        "invalid-json", "glued-frames", "missing-terminal"]
    summary = page.text_content("#summary-bar")
    assert "incomplete" in summary and "1 invalid" in summary
    assert page.text_content(".finish .badge") == "none"
    path = screenshot(page, "web-broken.png")
    assert path.stat().st_size > 10_000
    # A diagnostic links to its frame.
    page.click('.findings .frame-link[data-frame="32"]')
    assert selected_frame(page) == 32
    assert "2 JSON documents in one frame" in page.text_content("#json-view")
    assert page.locator("#json-view .glued-document").count() == 2


def test_clicking_a_character_selects_the_frame_that_produced_it(page: Page, server: RunningServer) -> None:
    text = (EXAMPLES / "openai-tool-calls.sse").read_text(encoding="utf-8")
    result = streamfold.fold(text)
    content = result.choices[0].content
    open_page(page, server)
    fold_text(page, text)
    offset = content.index("weather") + 2
    expected = result.frame_producing_char(offset)
    assert expected is not None
    page.mouse.click(*character_point(page, ".reply-text", offset))
    page.wait_for_selector(f'body[data-selected-frame="{expected.index}"]')
    assert page.get_attribute("#event-list .vl-row.selected", "data-frame") == str(expected.index)
    assert page.text_content(".frame-title") == f"Frame {expected.index}"
    assert page.locator("#raw-list .raw-row.selected").count() >= 1
    # ... and the frame's text is highlighted in the result, and named in the JSON stage.
    piece = "".join(t for t, f in _pieces(result, "content") if f == expected.index)
    assert highlighted(page) == [piece]
    assert page.text_content(".produced-text") == piece
    # A character of a tool call's arguments: its own frame.
    arguments = result.choices[0].tool_calls[1].arguments
    offset = arguments.index("Porto")
    expected = result.frame_producing_char(offset, field="tool:1")
    assert expected is not None
    page.mouse.click(*character_point(page, ".tool-call:nth-of-type(2) .args-text", offset))
    page.wait_for_selector(f'body[data-selected-frame="{expected.index}"]')


def test_hovering_a_character_names_its_frame_and_selecting_a_frame_highlights_its_text(
        page: Page, server: RunningServer) -> None:
    text = (EXAMPLES / "openai-reasoning.sse").read_text(encoding="utf-8")
    result = streamfold.fold(text)
    open_page(page, server)
    fold_text(page, text)
    content = result.choices[0].content
    offset = content.index("blue")
    expected = result.frame_producing_char(offset)
    assert expected is not None
    page.mouse.move(*character_point(page, ".reply-text", offset))
    page.wait_for_selector("#hover-label:not([hidden])")
    assert page.text_content("#hover-label") == f"frame {expected.index} · line {expected.line}"
    assert highlighted(page, "sf-hover") == ["".join(t for t, f in _pieces(result, "content") if f == expected.index)]
    # Reasoning is folded apart; selecting a frame that produced reasoning opens it and highlights the text.
    assert page.locator("details.reasoning").get_attribute("open") is None
    reasoning_frame = result.frame_producing_char(0, field="reasoning")
    assert reasoning_frame is not None
    page.fill("#frame-search", f"#{reasoning_frame.index}")
    page.press("#frame-search", "Enter")
    assert selected_frame(page) == reasoning_frame.index
    assert page.locator("details.reasoning").get_attribute("open") is not None
    assert highlighted(page) == [result.choices[0].reasoning[: len(highlighted(page)[0])]]
    # j moves to the next frame, k back.
    page.fill("#frame-search", "")
    page.press("#frame-search", "Escape")
    page.keyboard.press("j")
    assert selected_frame(page) == reasoning_frame.index + 1
    page.keyboard.press("k")
    assert selected_frame(page) == reasoning_frame.index
    # Keep-alive comments are marked as such.
    assert page.locator('#event-list .vl-row[data-frame="0"] .badge').text_content() == "keep-alive"


def _pieces(result: streamfold.Result, field: str) -> list[tuple[str, int]]:
    """(text, frame) per character of a field, from the core's provenance."""
    choice = result.choices[0]
    text = getattr(choice, field)
    return [(character, result.frame_producing_char(i, field=field).index)  # type: ignore[union-attr]
            for i, character in enumerate(text)]


def test_search_and_filters(page: Page, server: RunningServer) -> None:
    text = (EXAMPLES / "openai-broken.sse").read_text(encoding="utf-8")
    result = streamfold.fold(text)
    open_page(page, server)
    fold_text(page, text)
    total = len(result.frames)
    matching = [row["index"] for row, frame in zip(frame_rows(result), result.frames)
                if "sydney" in f"{row['summary']}\n{row['event'] or ''}\n{frame.raw.decode()}".lower()]
    assert matching
    page.fill("#frame-search", "sydney")
    page.wait_for_selector(f'#events-count:text-is("{len(matching)} of {total} frames")')
    rows = page.locator("#event-list .vl-row:not([hidden])")
    assert [int(r.get_attribute("data-frame") or "-1") for r in rows.all()] == matching
    page.fill("#frame-search", "#40")
    page.wait_for_selector(f'#events-count:text-is("1 of {total} frames")')
    page.fill("#frame-search", "")
    page.click('.filters button[data-filter="problems"]')
    page.wait_for_selector(f'#events-count:text-is("3 of {total} frames")')
    assert [int(r.get_attribute("data-frame") or "-1") for r in rows.all()] == [17, 32, 46]
    page.click('.filters button[data-filter="comments"]')
    page.wait_for_selector(f'#events-count:text-is("0 of {total} frames")')
    page.click('.filters button[data-filter="all"]')
    page.wait_for_selector(f'#events-count:text-is("{total} frames")')


def test_timeline_click_selects_the_frame_at_that_byte(page: Page, server: RunningServer) -> None:
    text = (EXAMPLES / "openai-plain-text.sse").read_text(encoding="utf-8")
    result = streamfold.fold(text)
    open_page(page, server)
    fold_text(page, text)
    box = page.locator("#timeline").bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 8 + (box["width"] - 16) / 2, box["y"] + box["height"] / 2)
    frame = result.frames[selected_frame(page)]
    size = len(text.encode())
    assert frame.offset <= size / 2 + size / 100 and frame.end >= size / 2 - size / 100
    assert page.is_visible("#timeline-tip")


def test_timeline_runs_over_arrival_time_when_the_capture_has_it(page: Page, server: RunningServer) -> None:
    log = (Path(__file__).resolve().parents[1] / "inputs" / "timestamped.log").read_text()
    open_page(page, server)
    fold_text(page, log)
    assert page.get_attribute("#timeline", "data-axis") == "time"
    assert "arrival times" in page.inner_text(".timeline-note")
    box = page.locator("#timeline").bounding_box()
    assert box is not None
    # The log's 1.85 s pause comes before frame 7: the middle of the time axis lands inside it.
    page.mouse.click(box["x"] + 8 + (box["width"] - 16) * 0.5, box["y"] + box["height"] / 2)
    assert selected_frame(page) == 6
    assert " s · " in page.inner_text("#timeline-tip") or " ms · " in page.inner_text("#timeline-tip")
    fold_text(page, (EXAMPLES / "openai-plain-text.sse").read_text(encoding="utf-8"))
    assert page.get_attribute("#timeline", "data-axis") == "bytes"


# -- downloads and diff ---------------------------------------------------------

def test_downloads_are_the_result_and_the_export(page: Page, server: RunningServer) -> None:
    text = (EXAMPLES / "openai-tool-calls.sse").read_text(encoding="utf-8")
    result = streamfold.fold(text)
    open_page(page, server)
    fold_text(page, text)
    with page.expect_download() as download:
        page.click("#download-result")
    assert download.value.suggested_filename == "capture.result.json"
    assert json.loads(Path(download.value.path()).read_text()) == json.loads(json.dumps(result.to_dict()))
    with page.expect_download() as download:
        page.click("#download-export")
    assert json.loads(Path(download.value.path()).read_text()) == json.loads(json.dumps(result.export()))
    fold_text(page, 'data: {"foo": 1}\n\n')
    assert page.is_disabled("#download-export")
    assert "unknown" in (page.get_attribute("#download-export", "title") or "")


def test_diff_of_two_captures(page: Page, server: RunningServer) -> None:
    left = (EXAMPLES / "openai-tool-calls.sse").read_text(encoding="utf-8")
    right = left.replace('"content":" weather"', '"content":" forecast"', 1)
    assert right != left
    open_page(page, server)
    fold_text(page, left)
    page.click("#mode-diff")
    assert page.text_content('.diff-side[data-side="left"] [data-role="source"]').startswith("pasted text")
    page.fill('.diff-side[data-side="right"] textarea', right)
    page.click("#compare-button")
    page.wait_for_selector(".diff-table")
    changed = page.locator(".diff-table tr.changed")
    assert [label.split("differs")[0] for label in changed.locator(".diff-label").all_text_contents()] == ["content"]
    marks = changed.locator("mark.diff-mark").all_text_contents()
    assert marks == ["weather", "forecast"]
    assert "1 field differ" in page.text_content(".diff-summary")
    hunks = page.locator(".hunk")
    assert hunks.count() == 1 and "changed" in hunks.first.text_content()
    screenshot(page, "web-diff.png")
    page.click("#mode-inspect")
    assert page.is_visible("#stage-result")


# -- safety -----------------------------------------------------------------------

PROBES = [
    '<img src=x onerror="window.__xss=1">',
    "</script><script>window.__xss=2</script>",
    '<a href="javascript:window.__xss=3">click me</a>',
    '<svg onload="window.__xss=4"></svg>',
    '<iframe srcdoc="<script>parent.__xss=5</script>"></iframe>',
]
PROBE = " ".join(PROBES)


def xss_capture() -> str:
    arguments = json.dumps({"html": PROBES[0], "link": "javascript:window.__xss=9", "close": PROBES[1]})
    return "".join([
        f": {PROBES[0]}\n\n",
        f"event: {PROBES[3]}\n\n",
        chunk({"role": "assistant", "reasoning_content": PROBE}, model=PROBES[0]),
        chunk({"content": PROBE + " and "}),
        chunk({"content": PROBES[2]}),
        chunk({"tool_calls": [{"index": 0, "id": PROBES[3], "type": "function",
                               "function": {"name": PROBES[0], "arguments": arguments}}]}),
        chunk({"tool_calls": [{"index": 1, "id": "call_2", "type": "function",
                               "function": {"name": PROBES[4], "arguments": '{"broken": "' + PROBES[1]}}]}),
        'data: {"x": "' + PROBES[0] + "\n\n",
        chunk({}, finish=PROBES[2]),
        "data: [DONE]\n\n",
    ])


def assert_no_injection(page: Page) -> None:
    assert page.evaluate("window.__xss") is None
    assert page.evaluate("document.querySelectorAll('img, iframe, svg, object, embed').length") == 0
    assert page.evaluate("[...document.scripts].map((s) => s.getAttribute('src'))") in (
        ["/static/app.js"], ["static/page.js"])  # the served page's entry, or the static page's
    assert page.evaluate("document.querySelectorAll('a[href]').length") == 0
    assert page.evaluate("[...document.querySelectorAll('*')].filter((e) => [...e.attributes]"
                         ".some((a) => a.name.startsWith('on'))).length") == 0


def test_stream_markup_is_shown_as_text_and_never_runs(page: Page, server: RunningServer) -> None:
    capture = xss_capture()
    result = streamfold.fold(capture)
    choice = result.choices[0]
    assert PROBE in choice.content and choice.reasoning == PROBE and choice.tool_calls[0].name == PROBES[0]
    open_page(page, server)
    fold_text(page, capture)
    page.wait_for_timeout(300)  # an onerror/onload would fire by now
    assert_no_injection(page)
    # Visible as text, exactly as streamed.
    assert page.text_content(".reply-text") == choice.content
    page.click("details.reasoning summary")
    assert page.text_content(".reasoning-text") == PROBE
    assert page.locator(".tool-name").all_text_contents() == [PROBES[0], PROBES[4]]
    assert page.locator(".args-text").all_text_contents() == [call.arguments for call in choice.tool_calls]
    assert PROBES[0] in page.text_content("#summary-bar")
    events = page.text_content("#event-list")
    assert PROBES[0] in events and PROBES[3] in events
    # Click the would-be javascript: link and walk every frame through the JSON stage.
    offset = choice.content.index("click me")
    page.mouse.click(*character_point(page, ".reply-text", offset))
    page.click('#event-list .vl-row[data-frame="0"]')
    for _ in result.frames:
        page.keyboard.press("j")
    assert selected_frame(page) == len(result.frames) - 1
    page.click(f'#event-list .vl-row[data-frame="{len(result.frames) - 3}"]')
    assert PROBES[0] in page.text_content(".invalid-payload")
    page.click("#mode-diff")
    page.fill('.diff-side[data-side="right"] textarea', capture.replace("click me", "tap me"))
    page.click("#compare-button")
    page.wait_for_selector(".diff-table")
    assert PROBES[0] in page.text_content(".diff-table")
    page.wait_for_timeout(300)
    assert_no_injection(page)


def test_the_content_security_policy_is_in_force(page: Page, server: RunningServer) -> None:
    open_page(page, server)
    ran = page.evaluate("""() => {
        const script = document.createElement('script');
        script.textContent = 'window.__inline = 1';
        document.body.append(script);
        return window.__inline;
    }""")
    assert ran is None


def test_size_limit_is_explained_on_the_page(browser: Browser, recorder: Recorder) -> None:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.on("request", lambda request: recorder.requests.append(request.url))
    try:
        with start_in_thread(create_app(max_size=4096)) as small:
            open_page(page, small)
            page.fill("#capture-text", "data: " + "x" * 5000 + "\n\n")
            page.click("#fold-button")
            page.wait_for_selector("#alert:not([hidden])")
            message = page.text_content("#alert")
            assert "at most 4 KiB" in message and "--max-size" in message
            assert page.get_attribute("body", "data-state") == "empty"
    finally:
        context.close()
    assert recorder.off_loopback() == []


def test_every_request_stays_on_this_machine(page: Page, server: RunningServer, recorder: Recorder) -> None:
    open_page(page, server)
    fold_text(page, (EXAMPLES / "openai-reasoning.sse").read_text(encoding="utf-8"))
    page.click("#mode-diff")
    page.fill('.diff-side[data-side="right"] textarea', (EXAMPLES / "openai-plain-text.sse").read_text())
    page.click("#compare-button")
    page.wait_for_selector(".diff-table")
    assert len(recorder.requests) >= 6  # page, script, style, icon, meta, fold, diff
    assert all(urlsplit(url).hostname == "127.0.0.1" for url in recorder.requests)


# -- speed ------------------------------------------------------------------------

def test_a_100k_frame_capture_is_usable(page: Page, server: RunningServer, tmp_path: Path) -> None:
    words = ["alpha ", "beta ", "gamma ", "delta ", "épsilon ", "zeta 🙂 "]
    capture = tmp_path / "100k.sse"
    base = {"id": "chatcmpl-X", "object": "chat.completion.chunk", "created": 1768380977, "model": "gpt-4.1-mini",
            "service_tier": "default", "system_fingerprint": "fp_2534831c87"}
    with capture.open("w", encoding="utf-8") as out:
        for i in range(100_000):
            body = dict(base, choices=[{"index": 0, "delta": {"content": words[i % 6]}, "logprobs": None,
                                        "finish_reason": None}], usage=None, obfuscation="abcdefgh")
            out.write("data: " + json.dumps(body, separators=(",", ":")) + "\n\n")
        out.write("data: [DONE]\n\n")
    size = capture.stat().st_size
    open_page(page, server)
    started = time.perf_counter()
    page.set_input_files("#file-input", str(capture))
    wait_ready(page, timeout=120_000)
    wall = time.perf_counter() - started
    timings = page.evaluate("window.streamfold.timings")
    print(f"\n100k frames, {size / 1e6:.1f} MB: ready {wall:.2f} s after the file was chosen; "
          f"server answered in {timings['responseMs'] / 1000:.2f} s; "
          f"interactive {timings['interactiveMs'] / 1000:.2f} s after the result arrived "
          f"(JSON parse {timings['parsedMs'] / 1000:.2f} s, steps {timings['steps']})")
    assert page.text_content("#events-count") == "100,001 frames"
    # Virtualised: only the rows in view exist.
    assert page.locator("#event-list .vl-row").count() < 100
    assert page.locator("#raw-list .vl-row").count() < 100
    # Interactive: jump to the last frames and trace a character near the end.
    clicked = time.perf_counter()
    page.fill("#frame-search", "#99999")
    page.press("#frame-search", "Enter")
    page.wait_for_selector('body[data-selected-frame="99999"]')
    assert page.text_content(".frame-title") == "Frame 99999"
    print(f"search and select the last frame: {time.perf_counter() - clicked:.2f} s")
    assert len(highlighted(page)) == 1
    # The raw view lays out every frame's bytes: it shows them once every range has come.
    page.wait_for_selector('body[data-frames-loaded="all"]', timeout=120_000)
    assert page.locator("#raw-list .raw-row.selected").count() >= 1
    timings = page.evaluate("window.streamfold.timings")
    print(f"first range {timings['firstRangeMs'] / 1000:.2f} s, every range {timings['allFramesMs'] / 1000:.2f} s "
          "after the result arrived")


def test_a_big_capture_shows_its_result_first_and_its_frames_by_range(
        page: Page, server: RunningServer, recorder: Recorder, tmp_path: Path) -> None:
    only_served(server, "it checks the server's ranges of frames (GET /api/frames) and the upload's progress")
    capture = tmp_path / "5k.sse"
    capture.write_text("".join(chunk({"content": f"w{i} "}) for i in range(5000)) + chunk({}, "stop")
                       + "data: [DONE]\n\n", encoding="utf-8")
    result = streamfold.fold(capture.read_bytes())
    last = len(result.frames) - 1
    open_page(page, server)
    page.set_input_files("#file-input", str(capture))
    wait_ready(page)
    # The result is there at once; the progress was reported with real numbers.
    assert page.text_content(".reply-text") == result.choices[0].content
    progress = page.evaluate("window.streamfold.timings.progress")
    assert progress["reports"] >= 2 and progress["upload"] == progress["total"] == capture.stat().st_size
    assert progress["fold"] == progress["total"]
    # The frames came by range: the fold's answer had no rows; GET /api/frames brought them.
    ranges = [url for url in recorder.requests if "/api/frames?" in url]
    assert any("start=0&" in url for url in ranges)
    # Scrolling to the end shows the last frame, with its summary (its range was fetched).
    page.eval_on_selector("#event-list", "(list) => { list.scrollTop = list.scrollHeight; }")
    row = page.locator(f'#event-list .vl-row[data-frame="{last}"] .ev-summary')
    row.wait_for()
    page.wait_for_function(f"""() => document.querySelector('#event-list .vl-row[data-frame="{last}"] .ev-summary')
                                     .textContent === '[DONE]'""")
    assert any(f"start={(last // 2000) * 2000}&" in url for url in recorder.requests)
    # Every range comes in the end: the raw view shows the frames, and the last one is selectable.
    page.wait_for_selector('body[data-frames-loaded="all"]', timeout=60_000)
    page.click(f'#event-list .vl-row[data-frame="{last}"]')
    assert page.text_content(".frame-title") == f"Frame {last}"
    assert page.text_content("#raw-list .raw-row.selected .done") == "[DONE]"


def test_a_binary_stream_is_placed_by_message_and_byte(page: Page, server: RunningServer, tmp_path: Path) -> None:
    # AWS event-stream has no lines: the findings, the event rows and the frame facts say message and byte.
    from eventstream_helpers import event

    bad = bytearray(event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": " there"}}))
    bad[-1] ^= 0xFF
    data = (event("messageStart", {"role": "assistant"})
            + event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hi"}}) + bytes(bad)
            + event("messageStop", {"stopReason": "end_turn"}))
    capture = tmp_path / "damaged.bin"
    capture.write_bytes(data)
    (error,) = streamfold.fold(data).errors
    open_page(page, server)
    page.set_input_files("#file-input", str(capture))
    wait_ready(page)
    link = page.locator('.findings .frame-link[data-frame="2"]')
    assert link.text_content() == f"message 2 · byte {error.offset}"
    # The tooltip's first line places the frame (its event name and summary follow, whole).
    title = page.get_attribute('#event-list .vl-row[data-frame="2"]', "title") or ""
    assert title.split("\n")[0] == f"message 2 · byte {error.offset}"
    link.click()
    facts = page.locator("#json-view .facts dt").all_text_contents()
    assert "line" not in facts and "byte" in facts
    assert "line 0" not in page.text_content("#json-view")
