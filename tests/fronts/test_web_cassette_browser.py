"""In a real browser (as tests/fronts/test_web_file_pane.py does for a HAR): a VCR cassette's
interactions and a claude-trace log's records get the HAR entry picker, named for what they are,
and the picked one is folded.

The browser tests are skipped, with the reason, when playwright or the browser is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from test_web_file_pane import pick_entry, reply
from test_web_page_details import INPUTS, new_page, open_file, shot

from static_site import only_served

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

    from streamfold.web.server import RunningServer


@pytest.fixture()
def page(browser: Browser, server: RunningServer) -> Iterator[Page]:
    yield from new_page(browser, server)


def test_a_cassette_s_interactions_are_picked_as_a_har_s_entries(page: Page, server: RunningServer) -> None:
    only_served(server, "a YAML cassette needs PyYAML, which has no WebAssembly wheel (docs/page.md)")
    open_file(page, "test_chat.yml", (INPUTS / "cassette-ruby-vcr.yml").read_bytes())
    assert page.is_visible("#entry-bar") and page.text_content("#entry-label") == "cassette interaction"
    options = page.eval_on_selector_all("#entry-select option", "os => os.map(o => [o.value, o.textContent])")
    assert [value for value, _ in options] == ["0", "2", "1"]  # streamed first, then the 429
    assert options[1][1] == ("▶ #2 POST https://api.openai.com/v1/chat/completions · 200 · "
                             "text/event-stream; charset=utf-8 · streamed")
    assert options[2][1].startswith("✕ #1 POST") and "· 429 ·" in options[2][1]
    assert page.input_value("#entry-select") == "2"
    assert page.text_content("#entry-note") == "2 of 3 interactions streamed"
    assert "The kettle is on; tea in five minutes." in reply(page)
    assert "read cassette interaction 2" in reply(page) and "sk-ruby-secret" not in page.content()
    sub = page.text_content("#raw-sub") or ""
    assert "extracted from the cassette interaction" in sub
    pick_entry(page, "0")
    assert "get_weather" in reply(page) and "read cassette interaction 0" in reply(page)
    assert page.input_value("#entry-select") == "0"
    shot(page, "page-cassette-entry-picker.png")


def test_a_trace_log_s_records_are_picked_too(page: Page) -> None:
    open_file(page, "log-2026-11-30.jsonl", (INPUTS / "claude-trace.jsonl").read_bytes())
    assert page.text_content("#entry-label") == "trace log record"
    assert page.text_content("#entry-note") == "1 of 3 records streamed"
    assert "get_weather" in reply(page)
    pick_entry(page, "0")
    assert "read trace log record 0 (claude-trace)" in reply(page)
    open_file(page, "reply.log", (INPUTS / "timestamped.log").read_bytes())
    assert not page.is_visible("#entry-bar")
