"""The page marks a frame that did not decode in the reply, where its text would have gone, as
`streamfold show` does; in a real browser (the fixtures of conftest.py and test_web_browser)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from test_web_browser import (  # noqa: F401  (fixtures)
    EXAMPLES,
    character_point,
    fold_text,
    open_page,
    page,
    recorder,
    screenshot,
    selected_frame,
)

import streamfold
from streamfold.services.lost import lost_text
from streamfold.web.fold_view import build_fold_view

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from streamfold.web.server import RunningServer

BROKEN = EXAMPLES / "openai-broken.sse"


def test_the_fold_view_places_the_lost_frame_in_utf16_units() -> None:
    text = "data: " + '{"choices":[{"index":0,"delta":{"content":"😀 a"}}]}' + "\n\n" \
           + 'data: {"choices":[{"index":0,"delta":{"content":"b\\u00e9\n\n' \
           + "data: " + '{"choices":[{"index":0,"delta":{"content":" c"}}]}' + "\n\n"
    view = build_fold_view(text.encode())
    assert view["lost_text"] == [{"choice": 0, "offset": 4, "frame": 1, "reason": "invalid JSON", "partial": "bé"}]
    assert [found.offset for found in lost_text(streamfold.fold(text))] == [3]  # code points in Python
    assert view["result"] == streamfold.fold(text).to_dict()  # the contract is untouched


def test_the_reply_marks_the_lost_frame_and_its_partial_text(page: Page, server: RunningServer) -> None:  # noqa: F811
    text = BROKEN.read_text(encoding="utf-8")
    content = streamfold.fold(text).choices[0].content
    open_page(page, server)
    fold_text(page, text)
    marker = page.locator(".reply-text .lost-text")
    assert marker.count() == 1
    label = '⟦frame 17 lost: invalid JSON; partial text " wor"⟧'
    assert marker.get_attribute("data-label") == label
    assert marker.get_attribute("aria-label") == label
    shown = page.evaluate("getComputedStyle(document.querySelector('.lost-text'), '::before').content")
    assert shown == '"' + label.replace('"', '\\"') + '"'  # the words are shown (CSS content), not text
    screenshot(page, "web-lost-text.png")
    # In its place: after "… in the", before " that"; and the reply's text is the text alone.
    before = page.evaluate("""() => { const m = document.querySelector('.lost-text'); const r = document.createRange();
        r.selectNodeContents(m.parentElement); r.setEndBefore(m); return r.toString(); }""")
    assert before == content[: content.index(" that")] and before.endswith("capitals in the")
    assert page.text_content(".reply-text") == content
    # Characters after the marker still name their own frames.
    page.mouse.click(*character_point(page, ".reply-text", content.index(" that") + 2))
    page.wait_for_selector('body[data-selected-frame="18"]')
    assert selected_frame(page) == 18
