"""`streamfold web --db PATH` in a real browser (Playwright driving Debian's
/usr/bin/chromium against a real uvicorn server on 127.0.0.1) over a real
SQLite store that a `CaptureStore` writes while the page is open: the list
fills in live, a capture opens in the four-stage view with its recorded
arrival times on the timeline, the URL keeps it, the keyboard works the list,
an exchange in flight is folded again once it ends, and markup recorded in a
URL or a reply is only ever text.

Skipped, with the reason, when playwright or the browser is missing. Every
page fails its test if it asked for anything off 127.0.0.1 or its script threw.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import httpx
import pytest
import uvicorn

import streamfold
from proxy_upstream import OPENAI, Upstream
from streamfold.fronts.serving import bind
from streamfold.proxy.app import RecordingProxy
from streamfold.proxy.server import start_in_thread as start_proxy
from streamfold.store import CaptureStore
from streamfold.web.app import create_app
from streamfold.web.server import RunningServer, start_in_thread
from watched_page import Watched

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

SHOTS = Path("/tmp") if Path("/tmp").is_dir() else Path(__file__).resolve().parents[1] / "artifacts"


def sse(*pieces: str, model: str = "gpt-4o-mini") -> list[bytes]:
    """An OpenAI chat stream, one event per piece of text, then the finish and [DONE]."""
    def event(delta: dict[str, str], finish: str | None = None) -> bytes:
        chunk = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": model,
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return b"data: " + json.dumps(chunk).encode() + b"\n\n"
    return [event({"role": "assistant", "content": ""}), *(event({"content": piece}) for piece in pieces),
            event({}, "stop"), b"data: [DONE]\n\n"]


def write(store: CaptureStore, events: list[bytes], *, url: str = "https://api.openai.com/v1/chat/completions",
          started: float, end: bool = True, spacing: float = 0.4) -> int:
    """One exchange: each event its own read, `spacing` seconds apart (the timeline then spreads)."""
    exchange = store.begin("POST", url, [("content-type", "application/json")], b'{"stream":true}', started=started)
    exchange.response(200, [("content-type", "text/event-stream")], at=0.05)
    for number, event in enumerate(events):
        exchange.read(event, at=0.1 + number * spacing)
    if end:
        exchange.end("complete", at=0.2 + len(events) * spacing)
    store.flush()
    return exchange.id


@pytest.fixture()
def store_path(tmp_path: Path) -> str:
    return str(tmp_path / "live.sqlite")


@pytest.fixture()
def store(store_path: str) -> Iterator[CaptureStore]:
    with CaptureStore(store_path) as opened:
        yield opened


@pytest.fixture()
def watched(browser: Browser) -> Iterator[Watched]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = Watched(context.new_page())
    yield page
    context.close()
    page.check()


def serve(store_path: str, **options: object) -> RunningServer:
    return start_in_thread(create_app(db_path=store_path, **options))  # type: ignore[arg-type]


def rows(page: Page) -> list[int]:
    return [int(value) for value in page.eval_on_selector_all(".capture-row[data-id]", "rs => rs.map(r => r.dataset.id)")]


def wait_rows(page: Page, count: int) -> None:
    # The page counts the rows it lists (a string to evaluate would be refused by the page's CSP).
    page.wait_for_selector(f'body[data-captures-count="{count}"]', state="attached", timeout=10_000)


def ready(page: Page, count: int) -> None:
    page.wait_for_selector(f'body[data-state="ready"][data-fold-count="{count}"]', timeout=30_000)


def reply(page: Page) -> str:
    return page.text_content("#result-view") or ""


def test_the_list_fills_in_live_and_a_capture_opens_with_its_arrival_times(
        watched: Watched, store: CaptureStore, store_path: str) -> None:
    page = watched.page
    now = time.time()
    write(store, sse("Hello", " there"), started=now - 60)
    write(store, sse("Second", " reply"), started=now - 30)
    with serve(store_path) as server:
        page.goto(server.url)
        wait_rows(page, 2)
        assert rows(page) == [2, 1]
        assert page.text_content("#captures-store") == "live.sqlite"
        first = page.inner_text('.capture-row[data-id="2"]')
        assert "POST" in first and "/v1/chat/completions" in first and "openai-chat" in first and "complete" in first
        # The model the reply reports, kept by the store since its schema 2.
        assert page.get_attribute('.capture-row[data-id="2"] .c-dialect', "title") == "model gpt-4o-mini"
        assert "model gpt-4o-mini" in (page.get_attribute('.capture-row[data-id="2"]', "aria-label") or "")
        # A recorder writes one more while the page is open: it appears on top, unasked.
        third = write(store, sse("The", " kettle", " is", " on."), started=now)
        wait_rows(page, 3)
        assert rows(page) == [third, 2, 1]
        page.click(f'.capture-row[data-id="{third}"]')
        ready(page, 1)
        assert urlsplit(page.url).fragment == f"capture={third}"
        assert "The kettle is on." in reply(page)
        assert page.get_attribute(f'.capture-row[data-id="{third}"]', "aria-selected") == "true"
        # The recorded read times are the timeline's x axis, and each frame's arrival.
        assert page.get_attribute("#timeline", "data-axis") == "time"
        assert "recorder" in page.inner_text(".timeline-note")
        times = page.eval_on_selector_all("#event-list .ev-time", "es => es.map(e => e.textContent)")
        assert times[:3] == ["100 ms", "500 ms", "900 ms"]
        assert page.inner_text("#summary-bar").startswith(f"#{third} POST /v1/chat/completions")
        page.screenshot(path=str(SHOTS / "page-store-open.png"))
        # A reload reopens what the URL says.
        page.reload()
        ready(page, 1)
        assert "The kettle is on." in reply(page)
        assert page.get_attribute(f'.capture-row[data-id="{third}"]', "aria-selected") == "true"


def test_the_keyboard_works_the_list_and_back_reopens_the_last_capture(
        watched: Watched, store: CaptureStore, store_path: str) -> None:
    page = watched.page
    now = time.time()
    for number, words in enumerate((("one",), ("two",), ("three",))):
        write(store, sse(*words), started=now - 10 + number)
    with serve(store_path) as server:
        page.goto(server.url)
        wait_rows(page, 3)
        assert page.evaluate("document.activeElement.id") == "captures-list"
        page.keyboard.press("Enter")  # the newest is where the keyboard starts
        ready(page, 1)
        assert "three" in reply(page) and urlsplit(page.url).fragment == "capture=3"
        # While the list has the focus its arrows are the list's, not the frames' (j/k, arrows elsewhere).
        frame = page.get_attribute("body", "data-selected-frame")
        page.focus("#captures-list")
        page.keyboard.press("ArrowDown")
        page.keyboard.press("ArrowDown")
        assert page.get_attribute("body", "data-selected-frame") == frame
        assert page.get_attribute("#captures-list", "aria-activedescendant") == "capture-option-1"
        page.keyboard.press("Enter")
        ready(page, 2)
        assert "one" in reply(page) and urlsplit(page.url).fragment == "capture=1"
        assert page.get_attribute('.capture-row[data-id="1"]', "aria-selected") == "true"
        page.go_back()
        ready(page, 3)
        assert "three" in reply(page) and urlsplit(page.url).fragment == "capture=3"


def test_an_exchange_in_flight_is_shown_as_such_and_folded_again_when_it_ends(
        watched: Watched, store: CaptureStore, store_path: str) -> None:
    page = watched.page
    events = sse("Still", " arriving", " and", " now", " done.")
    exchange = store.begin("POST", "https://api.openai.com/v1/chat/completions", (), b"{}", started=time.time())
    exchange.response(200, [("content-type", "text/event-stream")], at=0.05)
    for number, event in enumerate(events[:3]):
        exchange.read(event, at=0.1 + number * 0.3)
    store.flush()
    with serve(store_path, open_stored="latest") as server:
        page.goto(server.url)
        ready(page, 1)  # FILE was the store itself: the newest opens
        assert "in flight" in page.inner_text(f'.capture-row[data-id="{exchange.id}"]')
        assert "in flight" in page.inner_text("#summary-bar")
        assert "Still arriving" in reply(page) and "done." not in reply(page)
        for number, event in enumerate(events[3:], start=3):
            exchange.read(event, at=0.1 + number * 0.3)
        exchange.end("complete", at=3.0)
        store.flush()
        ready(page, 2)
        assert "Still arriving and now done." in reply(page)
        assert "in flight" not in page.inner_text("#summary-bar")
        assert "complete" in page.inner_text(f'.capture-row[data-id="{exchange.id}"]')


def test_markup_recorded_in_a_url_or_a_reply_is_text(watched: Watched, store: CaptureStore, store_path: str) -> None:
    page = watched.page
    markup = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'
    write(store, sse(markup, model="<b>model</b>"),
          url=f"https://api.openai.com/v1/chat/completions?q={markup}", started=time.time())
    with serve(store_path) as server:
        page.goto(server.url)
        wait_rows(page, 1)
        assert markup in page.inner_text('.capture-row[data-id="1"] .c-path')
        assert page.get_attribute('.capture-row[data-id="1"] .c-dialect', "title") == "model <b>model</b>"
        page.click('.capture-row[data-id="1"]')
        ready(page, 1)
        assert markup in reply(page)
        assert markup in page.inner_text("#summary-bar") and "<b>model</b>" in page.inner_text("#summary-bar")
        assert page.evaluate("window.pwned") is None
        assert page.evaluate("document.querySelectorAll('script').length") == 1
        assert page.evaluate("document.querySelectorAll('img, b').length") == 0


def test_a_missing_store_is_said_and_its_captures_appear_once_written(watched: Watched, tmp_path: Path) -> None:
    page = watched.page
    path = str(tmp_path / "not-yet.sqlite")
    with serve(path) as server:
        page.goto(server.url)
        page.wait_for_selector("#captures-note:not([hidden])")
        assert "no capture store at" in page.inner_text("#captures-note")
        assert "streamfold record --db not-yet.sqlite" in page.inner_text("#captures-note")
        with CaptureStore(path) as store:
            write(store, sse("Finally"), started=time.time())
        wait_rows(page, 1)
        assert page.is_hidden("#captures-note")


def test_a_stored_capture_can_be_the_diff_s_left_side(watched: Watched, store: CaptureStore, store_path: str) -> None:
    page = watched.page
    write(store, sse("Left", " side"), started=time.time())
    with serve(store_path) as server:
        page.goto(server.url)
        wait_rows(page, 1)
        page.click('.capture-row[data-id="1"]')
        ready(page, 1)
        page.click("#mode-diff")
        page.fill('.diff-side[data-side="right"] textarea', b"".join(sse("Right", " side")).decode())
        page.click("#compare-button")
        page.wait_for_selector(".diff-summary", timeout=15_000)
        assert "Left side" in page.inner_text("#diff-output") and "Right side" in page.inner_text("#diff-output")


def test_a_file_that_is_not_a_store_is_said_on_the_page(watched: Watched, tmp_path: Path) -> None:
    page = watched.page
    path = tmp_path / "notes.sqlite"
    path.write_text("data: {}\n\n")  # replaced after the command checked it, say
    with serve(str(path)) as server:
        page.goto(server.url)
        page.wait_for_selector("#captures-note.error:not([hidden])")
        assert "is not a capture store" in page.inner_text("#captures-note")
        assert rows(page) == []


def test_what_the_recording_proxy_records_is_listed_live_and_opens(watched: Watched, tmp_path: Path) -> None:
    """The whole way: a client streams through `streamfold record`'s proxy from a real upstream that
    holds the reply after its first frame; the page lists the exchange in flight, opens it, and folds it
    again with every frame once the upstream lets the rest go."""
    page = watched.page
    upstream = Upstream()
    sock = bind("127.0.0.1", 0)
    upserver = uvicorn.Server(uvicorn.Config(upstream, log_level="critical", lifespan="off", ws="none", http="h11"))
    upthread = threading.Thread(target=upserver.run, kwargs={"sockets": [sock]}, daemon=True)
    upthread.start()
    while not upserver.started:
        time.sleep(0.02)
    path = str(tmp_path / "recorded.sqlite")
    received: list[bytes] = []
    try:
        with CaptureStore.open(path) as store, start_proxy(RecordingProxy(
                f"http://127.0.0.1:{sock.getsockname()[1]}", store, echo=lambda line: None)) as proxy, \
                serve(path) as server:
            page.goto(server.url)
            page.wait_for_selector("#captures-note:not([hidden])")
            assert "No captures in this store yet" in page.inner_text("#captures-note")

            def client() -> None:
                url = f"{proxy.url.rstrip('/')}/hold"
                with httpx.stream("POST", url, content=b'{"stream": true}', timeout=30) as response:
                    received.append(response.read())
            streaming = threading.Thread(target=client)
            streaming.start()
            page.wait_for_selector('.capture-row[data-id="1"] .badge.live', timeout=10_000)
            assert "/hold" in page.inner_text('.capture-row[data-id="1"] .c-path')
            page.click('.capture-row[data-id="1"]')
            ready(page, 1)
            assert "in flight" in page.inner_text("#summary-bar")
            upstream.release.set()
            streaming.join(30)
            ready(page, 2)
            assert received == [OPENAI]
            assert streamfold.fold(OPENAI).choices[0].content in reply(page)
            assert "in flight" not in page.inner_text("#summary-bar")
            assert page.get_attribute("#timeline", "data-axis") == "time"
    finally:
        upstream.release.set()
        upserver.should_exit = True
        upthread.join(10)
        sock.close()
