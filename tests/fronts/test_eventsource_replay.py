"""The browser's own `EventSource` (Chromium, the WHATWG reference implementation of server-sent events)
against the replay server under every framing fault: the events the page receives (type, data, last
event id) must be the frames streamfold reads from the bytes served (`server.expected.frames`), or one of
the two is wrong about the spec (html.spec.whatwg.org/multipage/server-sent-events.html, "Interpreting an
event stream").

The page is opened on the replay server's own origin, at `/_streamfold/captures` (a JSON document it
already serves), so the `EventSource` request is same-origin: no page, no CORS header and no endpoint
were added to the server for this test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import streamfold
from streamfold.testing import StreamfoldServer, start_server

if TYPE_CHECKING:
    from playwright.sync_api import Browser

CAPTURES = Path(__file__).resolve().parents[1] / "captures"
STREAMS = {
    "chat": CAPTURES / "openai" / "u1-moonshot-usage-in-choice.sse",  # no event names; Chinese (split-utf8)
    "anthropic": CAPTURES / "anthropic" / "a3-a6-thinking-then-tool-use.sse",  # event names; a ping
}
# `cut:3` comes after a stall before frame 3, so that frames 0 to 2 reach the page before the connection
# breaks: at full speed under load Chromium once got none of them (the break and the last bytes arrive
# together; which the page sees first is the network's question, not the framing's).
FRAMING = ["", "chunk:1", "split-utf8", "crlf", "cr", "nospace", "keepalive:1", "bom", "fields", "glue:2",
           "stall:3:0.3 cut:3"]

# Collects every event of the stream until the first `error` (the end of the stream, or the cut: the
# browser would reconnect; closing keeps it to one request).
COLLECT = """
async ({url, types}) => await new Promise((resolve) => {
    const got = [];
    const source = new EventSource(url);
    for (const type of types) {
        source.addEventListener(type, (event) => got.push([event.type, event.data, event.lastEventId]));
    }
    const done = (why) => { source.close(); resolve({got, why}); };
    source.onerror = () => done("error");
    setTimeout(() => done("timeout"), 10000);
})
"""


def event_names(path: Path) -> set[str]:
    return {frame.event for frame in streamfold.fold(path.read_bytes()).frames if frame.event}


@pytest.fixture(scope="module")
def server_for() -> Iterator[Callable[[str], StreamfoldServer]]:
    servers: dict[str, StreamfoldServer] = {}

    def server(fault: str) -> StreamfoldServer:
        if fault not in servers:
            servers[fault] = start_server(*STREAMS.values(), faults=fault.split())
        return servers[fault]

    yield server
    for running in servers.values():
        running.stop()


def streamfold_events(frames: Any) -> list[list[str]]:
    """The events a spec-exact client dispatches from streamfold's frames: each finished frame with data
    (an empty `data:` line too), its `event` name or "message", and the last event id so far."""
    events, last_id = [], ""
    for frame in frames:
        if frame.id is not None and frame.terminated:
            last_id = frame.id
        if frame.data is not None and frame.terminated:
            events.append([frame.event or "message", frame.data, last_id])
    return events


@pytest.mark.parametrize("stream", list(STREAMS))
@pytest.mark.parametrize("fault", FRAMING, ids=[fault or "clean" for fault in FRAMING])
def test_the_browser_s_eventsource_reads_the_frames_streamfold_reads(browser: Browser, server_for: Any,
                                                                     fault: str, stream: str) -> None:
    server = server_for(fault)
    # Every event name of the capture gets a listener (an EventSource has no catch-all).
    types = sorted({"message"} | event_names(STREAMS[stream]))
    page = browser.new_page()
    try:
        page.goto(f"{server.url}/_streamfold/captures")
        seen = page.evaluate(COLLECT, {"url": f"/@{STREAMS[stream].stem}/v1/stream", "types": types})
    finally:
        page.close()
    assert seen["why"] == "error"
    expected = streamfold_events(server.expected.frames)
    assert seen["got"] == expected
    # The stream's events, not a few: all of them (glue makes two one) but where the cut left frames 0 to 2.
    assert len(expected) == 3 if "cut:3" in fault else len(expected) >= 12


# The corners of "Interpreting an event stream" no fault reaches, each line with the rule it tests.
CORNERS = (
    b"\xef\xbb\xbfdata: first\n\n"            # one leading BOM is stripped (the UTF-8 decode)
    b"data\n\n"                                # a line without a colon: the whole line is the field name
    b"event:\ndata: empty event name\n\n"       # an empty event type buffer dispatches "message"
    b"event: named\ndata:  two spaces\n\n"      # only one space after the colon is removed
    b"event: no-data\n\n"                      # an empty data buffer: nothing dispatched, type reset
    b"data: after no-data\n\n"
    b"id: 7\ndata: with id\n\n"
    b"id: a\x00b\ndata: null id ignored\n\n"   # an id containing U+0000 is ignored
    b"id\ndata: id reset\n\n"                   # an empty id sets the last event id to ""
    b"data: a\r\ndata: b\rdata: c\n\n"          # CRLF, CR and LF in one event
    b": comment\nretry: x\nfoo: bar\ndata: after fields\n\n"  # comment, bad retry, unknown field
    b"\xef\xbb\xbfdata: second bom\n\n"         # a second BOM is no BOM: field "\ufeffdata", ignored
    b"data: line one\ndata:\ndata: line three\n\n"
    b"data: caf\xc3\xa9 \xff invalid\n\n"       # invalid UTF-8 decodes to U+FFFD
    b"data: last, unterminated\n"              # the stream ends mid-event: not dispatched
)


def test_the_browser_and_streamfold_agree_on_the_spec_s_corners(browser: Browser) -> None:
    with start_server(CORNERS) as server:
        page = browser.new_page()
        try:
            page.goto(f"{server.url}/_streamfold/captures")
            seen = page.evaluate(COLLECT, {"url": "/stream", "types": ["message", "named"]})
        finally:
            page.close()
        expected = streamfold_events(server.expected.frames)
    assert seen["got"] == expected
    assert [data for _, data, _ in expected] == [
        "first", "", "empty event name", " two spaces", "after no-data", "with id", "null id ignored", "id reset",
        "a\nb\nc", "after fields", "line one\n\nline three", "caf\u00e9 \ufffd invalid"]
    assert [last_id for _, _, last_id in expected][5:8] == ["7", "7", ""]
