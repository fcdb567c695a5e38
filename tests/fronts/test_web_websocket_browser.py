"""In a real browser (as tests/fronts/test_web_file_pane.py): a browser's HAR of a Realtime
WebSocket session opens on the page like any capture: the socket entry is the one used, the reply
is the Realtime response's text, and the frames table lists the client's sent messages as `send`
rows next to the server events. A session of two responses gets a lane picker that folds either. Skipped, with the reason, when playwright or the browser is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from test_web_file_pane import ready, reply
from test_web_page_details import new_page, open_file, shot

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

    from streamfold.web.server import RunningServer

HAR = Path(__file__).resolve().parents[1] / "captures" / "websocket" / "realtime-session.har"
TWO_RESPONSES = Path(__file__).resolve().parents[1] / "captures" / "openai-realtime" / "two-responses.jsonl"


@pytest.fixture()
def page(browser: Browser, server: RunningServer) -> Iterator[Page]:
    yield from new_page(browser, server)


def test_a_websocket_har_opens_with_its_reply_and_its_sent_messages(page: Page) -> None:
    open_file(page, "realtime.har", HAR.read_bytes())
    result = page.text_content("#result-view") or ""
    assert "The capital of France is Paris." in result
    assert "openai-realtime" in (page.text_content("body") or "") and "websocket" in (page.text_content("body") or "")
    assert page.input_value("#entry-select") == "1"
    options = page.eval_on_selector_all("#entry-select option", "os => os.map(o => o.textContent)")
    assert any("wss://api.openai.com/v1/realtime" in option and "websocket" in option for option in options)
    body = page.text_content("body") or ""
    assert "response.output_text.delta" in body and "response.create" in body
    shot(page, "page-websocket-har.png")


def test_a_session_of_two_responses_gets_a_lane_picker_that_folds_the_one_picked(page: Page) -> None:
    open_file(page, "session.jsonl", TWO_RESPONSES.read_bytes())
    assert page.is_visible("#lane-bar") and page.text_content("#lane-label") == "Lane (response)"
    options = page.eval_on_selector_all("#lane-select option", "os => os.map(o => [o.value, o.textContent])")
    assert options == [["resp_C9xY4bOne007", "resp_C9xY4bOne007 · from frame 7"],
                       ["resp_C9xY4dTwo008", "resp_C9xY4dTwo008 · from frame 20"]]
    assert page.input_value("#lane-select") == "resp_C9xY4bOne007" and "Hi!" in reply(page)
    before = page.get_attribute("body", "data-fold-count") or "0"
    page.select_option("#lane-select", "resp_C9xY4dTwo008")
    ready(page, before)
    assert "Bye!" in reply(page) and "Hi!" not in reply(page)
    assert page.input_value("#lane-select") == "resp_C9xY4dTwo008"
