"""The page in a real Chromium: a log whose lines hold no stream data is shown at its own size, not
"0 B"; the diff says tool arguments written with other spacing are one JSON value, as a note."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from streamfold.web.server import RunningServer

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page


@pytest.fixture()
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert errors == [], "the page's script threw"


def paste(page: Page, server: RunningServer, text: str) -> None:
    page.goto(server.url)
    page.wait_for_selector("#capture-text", state="visible")
    page.fill("#capture-text", text)
    page.click("#fold-button")
    page.wait_for_selector('body[data-state="ready"][data-fold-count="1"]', timeout=30_000)


def test_a_log_without_stream_data_is_shown_at_its_size(page: Page, server: RunningServer) -> None:
    text = "".join(f"2025-07-01 10:00:0{second},550 INFO app: request {second} sent, waiting\n" for second in range(8))
    paste(page, server, text)
    bar = page.text_content("#summary-bar") or ""
    assert f"{len(text)} B" in bar and "0 B" not in bar.replace(f"{len(text)} B", "")
    assert "there was nothing to fold: no line of the log" in (page.text_content("body") or "")


def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    return "data: " + json.dumps({"id": "c", "object": "chat.completion.chunk", "model": "m",
                                  "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n"


def tool_stream(arguments: str) -> str:
    return (chunk({"role": "assistant", "content": "Looking."})
            + chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                     "function": {"name": "lookup", "arguments": arguments}}]})
            + chunk({}, "tool_calls") + "data: [DONE]\n\n")


def test_the_diff_notes_tool_arguments_that_are_one_json_value(page: Page, server: RunningServer) -> None:
    paste(page, server, tool_stream('{"city":"Oslo"}'))
    page.click("#mode-diff")
    page.fill('.diff-side[data-side="right"] textarea', tool_stream('{"city": "Oslo"}'))
    page.click("#compare-button")
    page.wait_for_selector(".diff-table")
    assert page.locator(".diff-table tr.changed").count() == 0
    row = page.locator(".diff-table tr.same", has_text="arguments (raw join)")
    assert "equal as JSON values: only the whitespace differs" in (row.locator(".diff-label").text_content() or "")
