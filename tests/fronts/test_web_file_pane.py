"""In a real browser (as tests/fronts/test_web_page_details.py): a HAR of several entries gets a
picker that folds the entry picked, and the raw pane shows a log's or curl output's own lines
("file", the default for them) or the stream body read out of them ("stream body").

The browser tests are skipped, with the reason, when playwright or the browser is missing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from test_web_page_details import INPUTS, new_page, open_file, ready, shot

from static_site import only_served
from streamfold.web import file_view

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

    from streamfold.web.server import RunningServer

@pytest.fixture()
def page(browser: Browser, server: RunningServer) -> Iterator[Page]:
    yield from new_page(browser, server)


def reply(page: Page) -> str:
    return page.text_content("#result-view") or ""


def pick_entry(page: Page, value: str) -> None:
    before = page.get_attribute("body", "data-fold-count") or "0"
    page.select_option("#entry-select", value)
    ready(page, before)


def test_a_har_of_several_entries_gets_a_picker_that_folds_the_entry_picked(page: Page) -> None:
    open_file(page, "two.har", (INPUTS / "base64-two-streams.har").read_bytes())
    assert page.is_visible("#entry-bar")
    options = page.eval_on_selector_all("#entry-select option", "os => os.map(o => [o.value, o.textContent])")
    # Streamed responses first, then the other requests; the one the server picked is selected.
    assert [value for value, _ in options] == ["1", "2", "0"]
    assert options[0][1] == "▶ #1 POST https://chat.example.test/v1/chat/completions · 200 · text/event-stream · streamed"
    assert "429" in options[1][1] and "· streamed" not in options[2][1]
    assert page.input_value("#entry-select") == "2"
    assert page.text_content("#entry-note") == "2 of 3 entries streamed"
    before = reply(page)
    assert "The kettle is on" not in before
    pick_entry(page, "1")
    assert "The kettle is on; tea in five minutes." in reply(page)
    assert page.input_value("#entry-select") == "1"
    assert "read HAR entry 1" in page.text_content("#result-view")
    shot(page, "page-har-entry-picker.png")
    # The picked entry stays when the dialect changes; another file goes back to the server's pick.
    before = page.get_attribute("body", "data-fold-count") or "0"
    page.select_option("#dialect-select", "openai-chat")
    ready(page, before)
    assert page.input_value("#entry-select") == "1" and "The kettle is on" in reply(page)
    open_file(page, "two.har", (INPUTS / "base64-two-streams.har").read_bytes())
    assert page.input_value("#entry-select") == "2"
    open_file(page, "reply.log", (INPUTS / "timestamped.log").read_bytes())
    assert not page.is_visible("#entry-bar")


def test_a_har_s_urls_are_text_and_cannot_reorder_the_picker(page: Page) -> None:
    stream = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n"
    entries = [{"request": {"method": "POST", "url": f"https://x.test/<img src=x onerror=alert(1)>/\u202eevil{i}"},
                "response": {"status": 200, "content": {"mimeType": "text/event-stream", "text": stream}}}
               for i in range(2)]
    open_file(page, "hostile.har", json.dumps({"log": {"entries": entries}}).encode())
    labels = page.eval_on_selector_all("#entry-select option", "os => os.map(o => o.textContent)")
    assert labels[0] == ("▶ #0 POST https://x.test/<img src=x onerror=alert(1)>/<U+202E>evil0 · 200 · "
                         "text/event-stream · streamed")
    assert page.evaluate("document.querySelectorAll('img').length") == 0


def raw_selected(page: Page) -> list[str]:
    return page.eval_on_selector_all("#raw-list .raw-row.selected:not([hidden]) .content",
                                     "rows => rows.map(r => r.textContent)")


def test_the_raw_pane_shows_the_log_s_own_line_for_the_selected_frame(page: Page) -> None:
    data = (INPUTS / "timestamped.log").read_bytes()
    lines = data.decode().splitlines()
    open_file(page, "timestamped.log", data)
    assert page.is_visible("#raw-source")
    assert page.get_attribute('#raw-source [data-source="file"]', "aria-pressed") == "true"
    assert page.text_content("#raw-sub") == "the log's own lines"
    assert "the selected frame's lines marked" in (page.get_attribute("#raw-sub", "title") or "")
    page.locator('#event-list .vl-row[data-frame="2"]').click()
    selected = "".join(raw_selected(page))
    assert selected.startswith("16:58:35.884 > chunk {") and selected.rstrip("↵") == lines[2]
    # Its file line number, in the gutter.
    number = page.eval_on_selector("#raw-list .raw-row.selected .g-line", "e => e.textContent")
    assert number == "3"
    shot(page, "page-raw-file-log.png")
    page.click('#raw-source [data-source="body"]')
    assert page.get_attribute('#raw-source [data-source="body"]', "aria-pressed") == "true"
    assert "".join(raw_selected(page)).startswith("data: {")
    assert "extracted from the log" in page.text_content("#raw-sub")
    page.click('#raw-source [data-source="file"]')
    assert "".join(raw_selected(page)).startswith("16:58:35.884")


def test_curl_output_in_file_mode_shows_its_headers_around_the_frames(page: Page) -> None:
    data = (INPUTS / "curl-v.txt").read_bytes()
    open_file(page, "curl-v.txt", data)
    assert page.text_content("#raw-sub").startswith("curl's output as it is")
    page.eval_on_selector("#raw-list", "e => { e.scrollTop = 0; }")
    for _ in range(100):  # the rows are drawn on the next animation frame (the CSP allows no wait_for_function)
        shown = page.evaluate("document.getElementById('raw-list').textContent")
        if "< HTTP/" in shown:
            break
        page.wait_for_timeout(20)
    shot(page, "page-raw-file-curl.png")
    assert "< HTTP/" in shown and "data: {" in shown
    # Still the stream body's subtitle for a HAR (its body is JSON-escaped or base64 inside the file).
    open_file(page, "session.har", (INPUTS / "chrome-export.har").read_bytes())
    assert not page.is_visible("#raw-source")
    assert "not the file's own bytes" in page.text_content("#raw-sub")


def test_a_log_too_big_to_carry_says_so_and_shows_the_stream_body(page: Page, server: RunningServer,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    only_served(server, "it lowers the server's limit in this process")
    monkeypatch.setattr(file_view, "MAX_FILE_BYTES", 1000)  # the server runs in this process
    open_file(page, "big.log", (INPUTS / "timestamped.log").read_bytes())
    assert page.is_visible("#raw-source")
    assert page.is_disabled('#raw-source [data-source="file"]')
    assert "more than the 1,000 the page shows" in (page.get_attribute('#raw-source [data-source="file"]', "title") or "")
    assert "extracted from the log" in page.text_content("#raw-sub")
