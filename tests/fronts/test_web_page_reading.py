"""What a person reads and presses on the page, in a real browser (Playwright driving Debian's
/usr/bin/chromium against a real server): the keys work as soon as a file is open, a focused or
selected link or row is readable (WCAG AA, 4.5:1) in the light and the dark theme, an Anthropic
capture's event names and summaries can be read whole, the raw pane wraps between tokens, and a
file over `--max-size` is refused before it is sent.

The browser tests are skipped, with the reason, when playwright or the browser is missing.
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest
from test_web_page_details import new_page

from proxy_rig import read_line
from streamfold.web.limits import too_large_response
from streamfold.web.server import RunningServer

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

ROOT = Path(__file__).resolve().parents[2]
ANTHROPIC = ROOT / "tests" / "captures" / "anthropic" / "a3-a6-thinking-then-tool-use.sse"
BROKEN = ROOT / "examples" / "openai-broken.sse"
WAIT = 30.0


#: The page in a fresh context (light or dark `scheme`), as a `with` block.
opened_page = contextmanager(new_page)


@pytest.fixture()
def page(browser: Browser, server: RunningServer) -> Iterator[Page]:
    with opened_page(browser, server.url) as opened:
        yield opened


def fold_count(page: Page) -> int:
    return int(page.get_attribute("body", "data-fold-count") or "0")


def ready(page: Page, before: int) -> None:
    page.wait_for_selector(f'body[data-state="ready"][data-fold-count="{before + 1}"]', timeout=WAIT * 1000)


def choose_file(page: Page, path: Path) -> None:
    """Open a file as a person does: the "Open file…" button, then the browser's file chooser."""
    before = fold_count(page)
    with page.expect_file_chooser() as chooser:
        page.click("label[for='file-input']")
    chooser.value.set_files(str(path))
    ready(page, before)


def selected(page: Page) -> int:
    return int(page.get_attribute("body", "data-selected-frame") or "-1")


def active(page: Page) -> str:
    return str(page.evaluate("document.activeElement.id || document.activeElement.tagName"))


# -- the keys work once a file is open ---------------------------------------------------------

def test_keys_work_at_once_after_a_file_is_chosen_or_dropped(page: Page) -> None:
    choose_file(page, ANTHROPIC)
    first = selected(page)
    page.keyboard.press("j")
    assert selected(page) == first + 1, f"j did nothing; the focus is on {active(page)}"
    page.keyboard.press("ArrowDown")
    assert selected(page) == first + 2
    page.keyboard.press("k")
    assert selected(page) == first + 1
    page.keyboard.press("/")
    assert active(page) == "frame-search"
    page.keyboard.press("Escape")
    # A second capture dropped on the page, while the focus is wherever the first left it.
    page.focus("#file-input")  # as a person who tabbed to "Open file…", then dropped a file instead
    before = fold_count(page)
    dropped = page.evaluate_handle(
        "(text) => { const data = new DataTransfer(); data.items.add(new File([text], 'dropped.sse')); return data; }",
        BROKEN.read_text())
    page.dispatch_event("body", "drop", {"dataTransfer": dropped})
    ready(page, before)
    assert "dropped.sse" in page.text_content("#summary-bar")
    first = selected(page)
    page.keyboard.press("j")
    assert selected(page) == first + 1, f"j did nothing after a drop; the focus is on {active(page)}"


def test_a_screen_reader_follows_the_selected_frame_in_the_frames_listbox(page: Page) -> None:
    choose_file(page, ANTHROPIC)
    frames = page.get_by_role("listbox", name="Frames")
    assert frames.evaluate("(list) => list === document.activeElement")
    for _ in range(2):
        chosen = frames.get_by_role("option", selected=True)
        assert chosen.count() == 1 and chosen.get_attribute("data-frame") == str(selected(page))
        assert frames.get_attribute("aria-activedescendant") == chosen.get_attribute("id")
        assert "content_block" in (chosen.text_content() or "")
        page.keyboard.press("j")
    # Scrolled out of the rows drawn, the selected frame is no active option (it is not there to read).
    page.keyboard.press("End")
    assert frames.get_attribute("aria-activedescendant") == "event-row-12"
    frames.evaluate("(list) => { list.style.flex = '0 0 60px'; list.scrollTop = 0; }")
    page.wait_for_function("() => !document.getElementById('event-list').hasAttribute('aria-activedescendant')")
    ids = page.locator("[id^='event-row-']").evaluate_all("(rows) => rows.map((row) => row.id)")
    assert len(ids) == len(set(ids)) and "event-row-0" in ids


# -- WCAG AA contrast of what is focused or selected ----------------------------------------------

# The contrast ratio of an element's text (or its ::after's) on the background it is drawn on: the
# element's and its ancestors' fills, composed (WCAG 2.x relative luminance).
CONTRAST = """([element, pseudo]) => {
  const parse = (text) => {
    const found = text.match(/rgba?\\(([^)]+)\\)/);
    if (!found) throw new Error(`a colour this test cannot read: ${text}`);
    const parts = found[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    return [parts[0], parts[1], parts[2], parts.length > 3 ? parts[3] : 1];
  };
  const over = (top, bottom) => [0, 1, 2].map((i) => top[i] * top[3] + bottom[i] * (1 - top[3])).concat([1]);
  const fills = [];
  for (let node = element; node; node = node.parentElement) {
    const fill = parse(getComputedStyle(node).backgroundColor);
    if (fill[3] > 0) fills.push(fill);
    if (fill[3] === 1) break;
  }
  let background = [255, 255, 255, 1];
  for (const fill of fills.reverse()) background = over(fill, background);
  const text = over(parse(getComputedStyle(element, pseudo).color), background);
  const luminance = (rgb) => {
    const linear = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * linear(rgb[0]) + 0.7152 * linear(rgb[1]) + 0.0722 * linear(rgb[2]);
  };
  const [light, dark] = [luminance(text), luminance(background)].sort((a, b) => b - a);
  return (light + 0.05) / (dark + 0.05);
}"""

# Every element under `root` that draws text of its own (and the ::after labels), as [what, ratio].
TEXT_CONTRASTS = "(root) => {\n  const contrast = " + CONTRAST + """;
  const found = [];
  for (const element of [root, ...root.querySelectorAll('*')]) {
    if (!element.getClientRects().length) continue;
    const own = [...element.childNodes].some((node) => node.nodeType === 3 && node.textContent.trim());
    if (own) found.push([`${element.className || element.tagName}: ${element.textContent.slice(0, 30)}`, contrast([element, null])]);
    const after = getComputedStyle(element, '::after').content;
    if (after && after !== 'none' && after !== 'normal') found.push([`${element.className}::after ${after}`, contrast([element, '::after'])]);
  }
  return found;
}"""


def low_contrast(page: Page, selector: str) -> list[tuple[str, float]]:
    found: list[tuple[str, float]] = []
    for handle in page.query_selector_all(selector):
        found += [(what, round(ratio, 2)) for what, ratio in handle.evaluate(TEXT_CONTRASTS) if ratio < 4.5]
    return found


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_focused_and_selected_links_and_rows_meet_wcag_aa(browser: Browser, server: RunningServer,
                                                          scheme: str) -> None:
    with opened_page(browser, server.url, scheme=scheme) as page:
        choose_file(page, BROKEN)
        link = page.locator("#result-view .frame-link").first
        link.click()  # selected, focused, and the pointer still on it
        assert "selected" in (link.get_attribute("class") or "")
        assert page.evaluate("document.activeElement.classList.contains('frame-link')")
        ratio = link.evaluate(f"(element) => ({CONTRAST})([element, null])")
        assert ratio >= 4.5, f"the focused, selected finding link is {ratio:.2f}:1 ({scheme})"
        assert low_contrast(page, "#result-view .frame-link") == []
        page.mouse.move(5, 890)
        page.focus("#result-view .frame-link")  # by keyboard: focused, not hovered
        page.keyboard.press("Shift+Tab")
        page.keyboard.press("Tab")
        assert low_contrast(page, "#result-view .frame-link") == []
        # The selected frame's rows in the raw and events panes, the pressed buttons, the chosen mode.
        selectors = ["#raw-list .raw-row.selected", "#event-list .event-row.selected", ".modes [aria-selected='true']",
                     ".filters [aria-pressed='true']"]
        for selector in selectors:
            assert page.locator(selector).count(), selector
        assert {selector: low_contrast(page, selector) for selector in selectors} == {selector: [] for selector in selectors}
        # An Anthropic capture's selected event row: the event name's colour on the selection's fill.
        choose_file(page, ANTHROPIC)
        page.keyboard.press("j")
        assert page.locator("#event-list .event-row.selected .ev-name").count() == 1
        assert low_contrast(page, "#event-list .event-row.selected") == []
        assert low_contrast(page, "#raw-list .raw-row.selected") == []


# -- the events pane: names and summaries whole -------------------------------------------------------

def test_an_anthropic_captures_event_names_and_summaries_can_be_read_whole(page: Page) -> None:
    choose_file(page, ANTHROPIC)
    rows = page.locator("#event-list .event-row")
    assert rows.count() == 13
    names = page.locator("#event-list .ev-name")
    # Every name whole in its column: content_block_delta is not cut to content_block_d….
    cut = names.evaluate_all("(nodes) => nodes.filter((n) => n.scrollWidth > n.clientWidth + 1).map((n) => n.textContent)")
    assert cut == []
    assert "content_block_delta" in names.all_text_contents()
    # The summaries are cut to fit the row; each row's tooltip has the name and the summary whole.
    thinking = page.locator('#event-list .event-row[data-frame="3"]')
    summary = thinking.locator(".ev-summary")
    assert summary.evaluate("(n) => n.scrollWidth > n.clientWidth"), "the summary fits: this test shows nothing"
    full = summary.text_content() or ""
    assert "Need current conditions, so call the tool." in full
    title = thinking.get_attribute("title") or ""
    assert title.split("\n") == ["frame 3 · line 10 · byte 494", "content_block_delta", full]
    tool = page.locator('#event-list .event-row[data-frame="8"]')
    assert (tool.get_attribute("title") or "").split("\n")[1:] == ["content_block_delta", '[1] input "{\\"city\\": \\"Os"']
    # By keyboard: the selected frame's summary is whole, wrapped, in the JSON pane's facts.
    page.keyboard.press("Home")
    for _ in range(3):
        page.keyboard.press("j")
    assert selected(page) == 3
    facts = page.locator("#json-view .facts")
    shown = dict(zip(facts.locator("dt").all_text_contents(), facts.locator("dd").all_text_contents(), strict=True))
    assert shown["event"] == "content_block_delta" and shown["summary"] == full
    summary_fact = facts.locator("dd").nth(list(shown).index("summary"))
    assert summary_fact.evaluate("(n) => n.scrollWidth <= n.clientWidth")


def test_a_tooltip_names_the_invisible_characters_it_cannot_show(page: Page) -> None:
    capture = ('event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
               '"delta":{"type":"text_delta","text":"safe\u202eevil"}}\n\n')
    before = fold_count(page)
    page.set_input_files("#file-input", files=[{"name": "bidi.sse", "mimeType": "text/plain",
                                                "buffer": capture.encode()}])
    ready(page, before)
    title = page.get_attribute('#event-list .event-row[data-frame="0"]', "title") or ""
    assert "safe[RLO]evil" in title and "\u202e" not in title


# -- the raw pane wraps between tokens --------------------------------------------------------------

def test_the_raw_pane_never_cuts_a_number_across_rows(page: Page) -> None:
    number = "1234567890123"
    # The number at every offset a row could end on, so a cut at a fixed column would split one of them.
    lines = [f'data: {{"pad":"{"x" * pad}","usage":{{"input_tokens":{number}}},"note":"a b c d e f g h"}}\n\n'
             for pad in range(80)]
    before = fold_count(page)
    page.set_input_files("#file-input", files=[{"name": "numbers.sse", "mimeType": "text/plain",
                                                "buffer": "".join(lines).encode()}])
    ready(page, before)
    rows: list[tuple[bool, str]] = []
    scroller = page.locator("#raw-list")
    seen: dict[int, tuple[bool, str]] = {}
    while True:
        found = scroller.evaluate("""(list) => [...list.querySelectorAll('.raw-row:not([hidden])')].map((row) => {
            const content = row.querySelector('.content');
            return [Math.round((row.getBoundingClientRect().top - list.querySelector('.vl-spacer').getBoundingClientRect().top) / 18),
                    row.classList.contains('cont'), content.textContent, content.scrollWidth <= content.clientWidth + 1];
        })""")
        for index, continued, text, fits in found:
            assert fits, f"row {index} overflows its pane: {text!r}"
            seen[index] = (continued, text)
        done = scroller.evaluate("(list) => list.scrollTop + list.clientHeight >= list.scrollHeight - 1")
        if done:
            break
        scroller.evaluate("(list) => { list.scrollTop += list.clientHeight - 40; }")
        page.wait_for_timeout(50)
    rows = [seen[index] for index in sorted(seen)]
    assert sorted(seen) == list(range(len(seen))), "rows were missed while scrolling"
    assert sum(continued for continued, _ in rows) >= 80, "the lines did not wrap: this test shows nothing"
    whole = sum(text.count(number) for _, text in rows)
    assert whole == 80, f"{80 - whole} of the 80 numbers were cut across rows"
    for (_, text), (continued, following) in itertools.pairwise(rows):
        if continued:
            assert not (text[-1:].isdigit() and following[:1].isdigit()), (text, following)


# -- a file over --max-size is refused before it is sent ---------------------------------------------

@pytest.fixture()
def small_server() -> Iterator[str]:
    """`streamfold web --max-size 1KiB`, the real command, on 127.0.0.1."""
    process = subprocess.Popen([sys.executable, "-m", "streamfold", "web", "--port", "0", "--max-size", "1KiB"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert process.stdout is not None
        line = read_line(process.stdout.fileno(), WAIT)
        found = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
        assert found, line
        yield found.group(1)
    finally:
        process.kill()
        process.communicate(timeout=WAIT)


def test_a_file_over_max_size_is_refused_at_once_in_the_servers_words(browser: Browser, small_server: str,
                                                                     tmp_path: Path) -> None:
    big = tmp_path / "big.sse"
    big.write_bytes(b'data: {"choices":[]}\n\n' * 300)  # 6.4 KiB: over 1 KiB
    server_says = httpx.post(small_server + "api/fold", content=big.read_bytes()).json()["error"]
    assert server_says.startswith("The capture is 6.4 KiB; this server accepts at most 1 KiB per request.")
    with opened_page(browser, small_server) as page:
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        with page.expect_file_chooser() as chooser:
            page.click("label[for='file-input']")
        chooser.value.set_files(str(big))
        page.wait_for_selector("#alert:not([hidden])", timeout=WAIT * 1000)
        assert page.text_content("#alert span") == server_says
        assert page.get_attribute("#alert", "role") == "alert"
        assert not [url for url in requests if "/api/fold" in url], requests
        # A file within the limit is still sent and folded.
        small = tmp_path / "small.sse"
        small.write_bytes(BROKEN.read_bytes()[:900])
        choose_file(page, small)
        assert [url for url in requests if "/api/fold" in url]


def test_the_pages_refusal_says_the_sizes_as_the_server_does(browser: Browser, small_server: str) -> None:
    """The page's sentence is the server's, sizes and suggested --max-size included (x.25 KiB rounds to even)."""
    with opened_page(browser, small_server) as page:
        for size in [1025, 1280, 1792, 2304, 1536 * 1024 + 1, 5 * 1024 * 1024, 3 * 1024 ** 3 + 1]:
            expected = json.loads(bytes(too_large_response(size, 1024).body))["error"]
            # A file of `size` bytes without writing gigabytes: the page reads only its size before refusing it.
            page.evaluate("(size) => Object.defineProperty(File.prototype, 'size', { get() { return size; },"
                          " configurable: true })", size)
            page.set_input_files("#file-input", files=[{"name": "sized.sse", "mimeType": "text/plain", "buffer": b"x"}])
            page.wait_for_selector("#alert:not([hidden])", timeout=WAIT * 1000)
            assert page.text_content("#alert span") == expected
            page.click("#alert button[aria-label='Dismiss']")
