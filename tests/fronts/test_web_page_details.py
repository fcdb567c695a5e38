"""The page's details a person sees, in a real browser (Playwright driving Debian's
/usr/bin/chromium against a real uvicorn server, as tests/fronts/test_web_browser.py):
glyphs the default fonts have, wording that fits the input, the timeline's tip and
empty axis, the "cut" badge, arrival times, the summary bar's wrapping, the diff's
whole-word marks and its agreement with `streamfold diff`, the raw pane's subtitle,
and bidi/invisible characters made visible.

The browser tests are skipped, with the reason, when playwright or the browser is missing.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from click.testing import CliRunner

from static_site import StaticSite
from streamfold.cli import cli
from streamfold.services.inputs import read_capture
from streamfold.web.diff import _field, diff_captures
from streamfold.web.fold_view import build_fold_view
from streamfold.web.server import RunningServer

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
INPUTS = ROOT / "tests" / "inputs"
SHOTS = Path("/tmp") if Path("/tmp").is_dir() else ROOT / "tests" / "artifacts"



def new_page(browser: Browser, server: RunningServer | StaticSite | str, width: int = 1400, height: int = 900,
             scheme: str = "light") -> Iterator[Page]:
    """The page of `server` (or at a URL) in a fresh context, the static page's in its kept profile; fails
    the test if its script threw."""
    if isinstance(server, StaticSite):
        opened = server.profile.new_page()
        opened.set_viewport_size({"width": width, "height": height})
        opened.emulate_media(color_scheme=scheme)  # type: ignore[arg-type]
    else:
        context = browser.new_context(viewport={"width": width, "height": height},
                                      color_scheme=scheme)  # type: ignore[arg-type]
        opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.goto(server if isinstance(server, str) else server.url)
    opened.wait_for_selector("#capture-text", state="visible")
    yield opened
    if isinstance(server, StaticSite):
        opened.close()  # the profile, and the Python it keeps, stay for the module's next test
    else:
        context.close()
    assert errors == [], "the page's script threw"


@pytest.fixture()
def page(browser: Browser, server: RunningServer) -> Iterator[Page]:
    yield from new_page(browser, server)


def ready(page: Page, before: str) -> None:
    # A bound on a hang, not a timing: the static page's first fold starts Python in its worker, which took
    # over 30 s on a two-core machine half as fast as usual while the rest of the suite ran.
    page.wait_for_selector(f'body[data-state="ready"][data-fold-count="{int(before) + 1}"]', timeout=120_000)


def fold_text(page: Page, text: str) -> None:
    if not page.is_visible("#capture-text"):
        page.click("#paste-button")
    before = page.get_attribute("body", "data-fold-count") or "0"
    page.fill("#capture-text", text)
    page.click("#fold-button")
    ready(page, before)


def open_file(page: Page, name: str, data: bytes) -> None:
    """Open a file as a person would (a textarea would turn every CR into LF)."""
    before = page.get_attribute("body", "data-fold-count") or "0"
    page.set_input_files("#file-input", files=[{"name": name, "mimeType": "application/octet-stream", "buffer": data}])
    ready(page, before)


def shot(page: Page, name: str) -> None:
    page.screenshot(path=str(SHOTS / name))


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
    return "data: " + json.dumps({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}) + "\n\n"


def text_stream(*pieces: str, finish: str = "stop", model: str = "gpt-4o-mini") -> str:
    return "".join([chunk({"role": "assistant"}, model=model), *(chunk({"content": p}, model=model) for p in pieces),
                    chunk({}, finish, model=model), "data: [DONE]\n\n"])


def has_glyph(character: str) -> bool:
    found = subprocess.run(["fc-list", f":charset={ord(character):x}", "family"], capture_output=True, text=True,
                           check=False)
    return bool(found.stdout.strip())


# -- 1: glyphs the default fonts have ----------------------------------------------------

def test_cr_and_controls_are_drawn_with_glyphs_the_fonts_have(page: Page) -> None:
    capture = (chunk({"content": "one"}).replace("\n\n", "\r\r") + ": ping\x01\x7f\r\n\r\n"
               + chunk({"content": "two"}) + "data: [DONE]\n\n")
    open_file(page, "cr.sse", capture.encode())
    marks = page.locator("#raw-list .cr-mark")
    assert marks.count() >= 2
    assert set(marks.all_text_contents()) == {"CR"}
    box = marks.first.bounding_box()
    assert box is not None and box["width"] > 4 and box["height"] > 4
    assert page.get_attribute("#raw-list .cc[data-label='SOH']", "title").startswith("U+0001")
    assert page.get_attribute("#raw-list .cc[data-label='DEL']", "title").startswith("U+007F")
    shown = page.evaluate("document.getElementById('raw-list').textContent")
    # No Control Picture (U+2400-2426) is used; every other symbol the page draws is in a default font.
    assert not [c for c in shown if 0x2400 <= ord(c) <= 0x2426]
    if shutil.which("fc-list"):
        script = "[...document.querySelectorAll('#raw-list .eol, #raw-list .cc')].map((e) => e.textContent).join('')"
        drawn = {c for c in page.evaluate(script) if ord(c) > 0x7f and c not in "\u000d"}
        assert all(has_glyph(c) for c in drawn), drawn
        assert not has_glyph("\u240d"), "the default fonts now have ␍: it could be drawn as itself"
    shot(page, "page-cr-badge.png")


# -- 12: bidi and invisible characters -------------------------------------------------------

def test_bidi_and_invisible_characters_are_shown_and_cannot_reorder_text(page: Page) -> None:
    reply = "abc\u202edef\u200bghi\u2066jk\ufeff"
    fold_text(page, text_stream("abc\u202edef", "\u200bghi\u2066jk\ufeff"))
    element = "#result-view .reply-text"
    labels = page.locator(f"{element} .cc").evaluate_all("(nodes) => nodes.map((n) => [n.dataset.label, n.title])")
    assert [label for label, _ in labels] == ["RLO", "ZWSP", "LRI", "BOM"]
    assert labels[0][1] == "U+202E RLO RIGHT-TO-LEFT OVERRIDE"
    # The characters stay in the text (a copy keeps them), so every position still maps to its frame.
    assert page.text_content(element) == reply
    # After the override, text still runs left to right: d before e before f on screen.
    xs = page.evaluate("""(selector) => {
        const element = document.querySelector(selector);
        const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
        const out = {};
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            for (let i = 0; i < node.data.length; i++) {
                if ('dfgk'.includes(node.data[i])) {
                    const range = document.createRange(); range.setStart(node, i); range.setEnd(node, i + 1);
                    out[node.data[i]] = range.getBoundingClientRect().left;
                }
            }
        }
        return out;
    }""", element)
    assert xs["d"] < xs["f"] < xs["g"] < xs["k"]
    widths = page.locator(f"{element} .cc").evaluate_all(
        "(nodes) => nodes.map((n) => parseFloat(getComputedStyle(n, '::before').width))")
    assert all(width > 5 for width in widths)
    # The JSON column and the event list mark them too.
    page.click("#event-list .vl-row[data-frame='1']")
    assert page.locator("#json-view .j-string .cc[data-label='RLO']").count() == 1
    assert page.locator("#event-list .ev-summary .cc").count() >= 1
    # A ZWJ inside an emoji sequence joins it: no badge splits the family.
    fold_text(page, text_stream("family: \U0001f468\u200d\U0001f469\u200d\U0001f467, a\u200db"))
    assert page.locator(f"{element} .cc").evaluate_all("(nodes) => nodes.map((n) => n.dataset.label)") == ["ZWJ"]
    # Everything from the stream is text: no element came from it.
    assert page.evaluate("document.querySelectorAll('#result-view .cc *').length") == 0
    shot(page, "page-bidi.png")


# -- 2, 11: wording that fits the input ---------------------------------------------------------

def test_the_axis_note_and_raw_pane_say_what_the_input_holds(page: Page) -> None:
    stream = (EXAMPLES / "openai-plain-text.sse").read_text(encoding="utf-8")
    fold_text(page, stream)
    assert page.text_content(".timeline-note") == "x: byte offset (pasted text has no arrival times)"
    assert page.text_content("#raw-sub") == "as pasted"
    open_file(page, "reply.sse", stream.encode())
    assert "a stream body saved to a file has no arrival times" in page.text_content(".timeline-note")
    assert page.text_content("#raw-sub") == "the file as it is"
    open_file(page, "session.har", (INPUTS / "chrome-export.har").read_bytes())
    assert "a HAR times the response as a whole, not each frame" in page.text_content(".timeline-note")
    sub = page.text_content("#raw-sub")
    assert "extracted from the HAR entry" in sub and "not the file's own bytes" in sub
    assert '"entries"' not in page.evaluate("document.getElementById('raw-list').textContent")
    # What a HAR does know: its entry's own timing.
    assert page.text_content("#summary-bar .entry-timing") == (
        "HAR entry: first byte after 353 ms, body received over 259 ms, 612 ms in all (no per-frame times)")
    open_file(page, "curl-v.txt", (INPUTS / "curl-v.txt").read_bytes())
    assert "curl -v output has no arrival times" in page.text_content(".timeline-note")
    assert page.text_content("#raw-sub") == "curl's output as it is"  # its own lines (tests/fronts/test_web_file_pane.py)
    page.click('#raw-source [data-source="body"]')
    assert "extracted from curl's output" in page.text_content("#raw-sub")
    open_file(page, "timestamped.log", (INPUTS / "timestamped.log").read_bytes())
    assert page.text_content(".timeline-note") == "x: time since the start (arrival times from the log's timestamps)"
    shot(page, "page-har-wording.png")


# -- 3, 5: the timeline's tip and an empty capture ---------------------------------------------

def hover_timeline(page: Page) -> None:
    box = page.locator("#timeline").bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_selector("#timeline-tip", state="visible")


def test_the_timeline_tip_does_not_outlive_the_pointer_or_the_capture(page: Page) -> None:
    fold_text(page, (EXAMPLES / "openai-plain-text.sse").read_text(encoding="utf-8"))
    hover_timeline(page)
    open_file(page, "tools.sse", (EXAMPLES / "openai-tool-calls.sse").read_bytes())
    assert page.is_hidden("#timeline-tip")
    hover_timeline(page)
    page.mouse.move(5, 5)
    assert page.is_hidden("#timeline-tip")
    # The result's hover label, too, names a frame of the capture shown only.
    box = page.locator("#result-view .reply-text").bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + 4, box["y"] + box["height"] / 2)
    page.wait_for_selector("#hover-label", state="visible")
    open_file(page, "plain.sse", (EXAMPLES / "openai-plain-text.sse").read_bytes())  # the pointer stays put
    assert page.is_hidden("#hover-label")


def test_an_empty_capture_gets_a_sentence_instead_of_an_axis(page: Page) -> None:
    fold_text(page, "[]")
    assert page.is_visible(".timeline-empty")
    assert "No frames were found" in page.text_content(".timeline-empty")
    assert page.get_attribute("#timeline", "data-axis") == "none"
    assert page.text_content(".timeline-note") == ""
    # Nothing is drawn on the canvas.
    painted = page.evaluate("""() => {
        const canvas = document.getElementById('timeline');
        const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
        for (let i = 3; i < data.length; i += 4) if (data[i]) return true;
        return false;
    }""")
    assert painted is False
    shot(page, "page-empty-axis.png")
    fold_text(page, (EXAMPLES / "openai-plain-text.sse").read_text(encoding="utf-8"))
    assert page.is_hidden(".timeline-empty")
    # Times that do not spread (every frame in one read) draw over bytes, and say why.
    log = re.sub(r"^16:58:\d\d\.\d+", "16:58:35.441", (INPUTS / "timestamped.log").read_text(), flags=re.M)
    open_file(page, "one-read.log", log.encode())
    assert page.get_attribute("#timeline", "data-axis") == "bytes"
    assert "every frame arrived in the same read" in page.text_content(".timeline-note")


# -- 4: a finding once in the JSON column -----------------------------------------------------

def test_a_framing_issue_is_listed_once_in_the_json_column(page: Page) -> None:
    fold_text(page, chunk({"content": "a"}) + "event: x\nfoo: bar\n" + chunk({"content": "b"}) + "data: [DONE]\n\n")
    page.click("#event-list .vl-row[data-frame='1']")
    findings = page.locator("#json-view > .finding").all_text_contents()
    assert len([text for text in findings if "unknown-field" in text]) == 1
    assert any("line 4" in text for text in findings if "unknown-field" in text)


# -- 6: "cut", not "complete" -------------------------------------------------------------------

def summary_badge(page: Page) -> tuple[str, str, str]:
    badge = page.locator("#summary-bar .badge").first
    return badge.text_content() or "", badge.get_attribute("class") or "", badge.get_attribute("title") or ""


def test_a_reply_cut_at_the_token_limit_or_with_broken_arguments_is_not_complete(page: Page) -> None:
    fold_text(page, text_stream("Hello", finish="length"))
    text, classes, title = summary_badge(page)
    assert (text, "warn" in classes.split()) == ("cut", True)
    assert "token limit" in title and '"length"' in title
    assert page.evaluate("getComputedStyle(document.querySelector('#summary-bar .badge')).color") != (
        page.evaluate("getComputedStyle(document.body).getPropertyValue('--ok')"))
    shot(page, "page-cut-badge.png")
    arguments = chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                                       "function": {"name": "f", "arguments": '{"a": 1'}}]})
    fold_text(page, chunk({"role": "assistant"}) + arguments + chunk({}, "tool_calls") + "data: [DONE]\n\n")
    text, classes, title = summary_badge(page)
    assert text == "cut" and "tool call 0's arguments do not parse" in title
    # Anthropic's max_tokens is the same normalised finish reason: said in the vendor's words.
    open_file(page, "max-tokens.sse", (ROOT / "tests/captures/anthropic/b8-max-tokens-cuts-tool-input.sse").read_bytes())
    text, _, title = summary_badge(page)
    assert text == "cut" and '"max_tokens"' in title
    fold_text(page, text_stream("Hello"))
    assert summary_badge(page)[:2] == ("complete", "badge ok")


# -- 8: arrival times -----------------------------------------------------------------------------

def test_arrival_times_and_the_timing_summary_are_shown(page: Page) -> None:
    open_file(page, "timestamped.log", (INPUTS / "timestamped.log").read_bytes())
    times = page.locator("#event-list .ev-time").all_text_contents()
    assert times[:3] == ["0 ms", "412 ms", "443 ms"]
    summary = page.text_content("#summary-bar .timing-summary")
    assert summary is not None
    assert "first text 412 ms after the first byte" in summary and "longest gap 1.85 s" in summary
    assert "no stall over 2 s" in summary
    assert "TTFB" not in summary and "TTFT" not in summary  # a log does not say when the request was sent
    assert "from the first byte received" in (page.get_attribute("#summary-bar .timing-summary", "title") or "")
    page.click("#event-list .vl-row[data-frame='7']")
    assert "2.42 s from the start" in page.text_content("#json-view .facts")
    open_file(page, "trace.txt", (INPUTS / "trace-ascii-time.txt").read_bytes())
    traced = page.text_content("#summary-bar .timing-summary") or ""
    assert "TTFB 4 ms" in traced and "TTFT 354 ms" in traced, traced  # from the request, as record measures
    shot(page, "page-timing.png")
    fold_text(page, (EXAMPLES / "openai-plain-text.sse").read_text(encoding="utf-8"))
    assert page.locator("#event-list .ev-time").count() == 0
    assert page.locator("#summary-bar .timing-summary").count() == 0


def test_a_stall_is_counted_in_the_timing_summary(page: Page) -> None:
    lines = (INPUTS / "timestamped.log").read_text().replace("16:58:37.", "16:58:39.").replace("16:58:38.", "16:58:40.")
    open_file(page, "stalled.log", lines.encode())
    summary = page.text_content("#summary-bar .timing-summary") or ""
    assert "1 stall over 2 s" in summary, summary


# -- 9: the summary bar wraps ---------------------------------------------------------------------

@pytest.mark.parametrize("width", [1024, 800])
def test_the_summary_bar_wraps_without_overflow_or_overlap(browser: Browser, server: RunningServer, width: int) -> None:
    for page in new_page(browser, server, width=width):
        model = "accounts/fireworks/models/llama-v3p1-405b-instruct-long-deployment-name-2026-12-01"
        open_file(page, "a-capture-with-a-rather-long-file-name.sse",
                  text_stream("Hello", model=model).encode())
        layout = page.evaluate("""() => {
            const bar = document.getElementById('summary-bar');
            const box = bar.getBoundingClientRect();
            return {page: [document.documentElement.scrollWidth, document.documentElement.clientWidth],
                    bar: [bar.scrollWidth, bar.clientWidth], box: [box.left, box.right],
                    items: [...bar.children].map((e) => { const r = e.getBoundingClientRect();
                                                         return [r.left, r.top, r.right, r.bottom]; })};
        }""")
        assert layout["page"][0] <= layout["page"][1]
        assert layout["bar"][0] <= layout["bar"][1]
        items = layout["items"]
        assert len({round(top) for _, top, _, _ in items}) > 1, "the bar should wrap at this width"
        for left, _, right, _ in items:
            assert layout["box"][0] <= left and right <= layout["box"][1] + 0.5
        for i, a in enumerate(items):
            for b in items[i + 1:]:
                overlap = min(a[2], b[2]) - max(a[0], b[0]) > 0.5 and min(a[3], b[3]) - max(a[1], b[1]) > 0.5
                assert not overlap, (a, b)
        shot(page, f"page-summary-{width}.png")


# -- 7, 10: the diff ---------------------------------------------------------------------------------

def test_word_marks_cover_whole_tokens() -> None:
    found = _field("choice 0", "content", "The quick brown fox jumps", "The quick red fox jumped")
    left, right = found["left"], found["right"]
    assert [left[a:b] for a, b in found["marks"]["left"]] == ["brown", "jumps"]
    assert [right[a:b] for a, b in found["marks"]["right"]] == ["red", "jumped"]
    # UTF-16 positions after an emoji; an insertion is a zero-width mark on the side without it.
    found = _field("s", "l", "😀 one", "😀 one two")
    assert found["marks"] == {"left": [[6, 6]], "right": [[6, 10]]}


def test_a_har_entry_s_own_timing_is_kept_and_odd_values_left_out() -> None:
    har = json.loads((INPUTS / "chrome-export.har").read_text())
    assert dict(read_capture(json.dumps(har).encode()).entry_timing) == {
        "total": 0.6124, "first_byte": 0.3531, "receive": 0.2593}
    for entry in har["log"]["entries"]:
        entry["time"] = "soon"
        entry["timings"] = {"wait": -1, "receive": True, "send": float("nan")}
    assert read_capture(json.dumps(har).encode()).entry_timing == ()
    assert "entry_timing" not in build_fold_view((INPUTS / "raw-body.sse").read_bytes())


def cli_diff(first: Path, second: Path) -> tuple[int, str]:
    ran = CliRunner().invoke(cli, ["diff", str(first), str(second)], env={"COLUMNS": "200", "NO_COLOR": "1"})
    return ran.exit_code, ran.stdout


def test_the_page_and_the_cli_read_a_non_streaming_side_alike(tmp_path: Path) -> None:
    stream = EXAMPLES / "openai-tool-calls.sse"
    exported = tmp_path / "export.json"
    ran = CliRunner().invoke(cli, ["export", str(stream)])
    assert ran.exit_code == 0
    exported.write_text(ran.stdout)
    code, said = cli_diff(stream, exported)
    assert code == 0 and "the replies are the same" in said
    view = diff_captures(stream.read_bytes(), exported.read_bytes())
    assert [f["key"] if "key" in f else f["label"] for f in view["fields"] if not f["same"]] == []
    assert view["right"]["response"] is True and view["frames"]["compared"] is False
    # One field changed: both name the same one.
    value = json.loads(exported.read_text())
    value["choices"][0]["message"]["content"] = "something else"
    exported.write_text(json.dumps(value))
    code, said = cli_diff(stream, exported)
    cli_keys = sorted(line.split()[1] for line in said.splitlines() if line.startswith("differs "))
    view = diff_captures(stream.read_bytes(), exported.read_bytes())
    assert code == 1 and cli_keys == ["content"]
    assert [f["label"] for f in view["fields"] if not f["same"]] == ["content"]


@pytest.mark.usefixtures("server")
def test_the_page_diff_of_a_stream_and_its_export_says_same(page: Page, tmp_path: Path) -> None:
    stream = EXAMPLES / "openai-tool-calls.sse"
    ran = CliRunner().invoke(cli, ["export", str(stream)])
    page.click("#mode-diff")
    for side, name, data in (("left", "stream.sse", stream.read_bytes()), ("right", "export.json", ran.stdout.encode())):
        page.set_input_files(f'.diff-side[data-side="{side}"] [data-role="file"]',
                             files=[{"name": name, "mimeType": "application/octet-stream", "buffer": data}])
    page.click("#compare-button")
    page.wait_for_selector(".diff-table")
    assert page.text_content(".diff-summary .badge") == "same result"
    assert "the right side is a non-streaming response" in page.text_content("#diff-output")
    shot(page, "page-diff-export.png")
    # Whole words are marked in a changed text.
    left = text_stream("The quick brown fox ", "jumps over the dog")
    right = text_stream("The quick red fox ", "jumps over the dog")
    page.fill('.diff-side[data-side="left"] textarea', left)
    page.fill('.diff-side[data-side="right"] textarea', right)
    page.click("#compare-button")
    page.wait_for_selector(".diff-table tr.changed")
    assert page.locator(".diff-table tr.changed mark.diff-mark").all_text_contents() == ["brown", "red"]
    shot(page, "page-diff-words.png")

