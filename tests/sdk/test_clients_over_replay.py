"""Real clients over the replay server, every transparent fault: the openai SDK (chat and Responses), the
anthropic SDK, google-genai and a plain httpx2 SSE reader written here to the WHATWG line rules, each
talking HTTP to `streamfold serve` on 127.0.0.1. Each client's final object must pass `assert_reply`
against the reference of what it was served (`server.expected`): a correct client builds the clean reply
whatever the framing. Where a vendor's SDK does not, that is the SDK's bug, asserted as such.

One server per fault serves the five captures (each client asks for its own by `/@NAME`), so the module
starts eleven servers, not fifty-five.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable, Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from replay_helpers import recording, served
from streamfold.replay.reference import reference_result
from streamfold.testing import (
    ReplyMismatchError,
    StreamfoldServer,
    assert_reply,
    every_transparent_fault,
    start_server,
)

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
httpx2 = pytest.importorskip("httpx2")
pytest.importorskip("google.genai")
from google import genai  # noqa: E402
from google.genai import errors as genai_errors  # noqa: E402
from google.genai import types as genai_types  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = {
    "chat-tools": ROOT / "examples" / "openai-tool-calls.sse",
    "chat-chinese": ROOT / "tests" / "captures" / "openai" / "u1-moonshot-usage-in-choice.sse",
    "chat-first-text": ROOT / "tests" / "captures" / "openai" / "u1-o16-xai-usage-before-empty-final.sse",  # text in frame 0
    "responses": ROOT / "tests" / "captures" / "openai-responses" / "r-example-reasoning-text-function-call.sse",
    "anthropic": ROOT / "tests" / "captures" / "anthropic" / "a3-a6-thinking-then-tool-use.sse",
    "gemini": ROOT / "tests" / "captures" / "gemini" / "g4-o9-weather-thought-call.sse",
}
ASK = [{"role": "user", "content": "hi"}]


def openai_chat(base_url: str) -> Any:
    with openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=0) as client, \
            client.chat.completions.stream(model="m", messages=ASK) as stream:
        return stream.get_final_completion()


def openai_responses(base_url: str) -> Any:
    with openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=0) as client, \
            client.responses.stream(model="m", input="hi") as stream:
        return stream.get_final_response()


def anthropic_message(base_url: str) -> Any:
    with anthropic.Anthropic(base_url=base_url, api_key="sk-ant-test", max_retries=0) as client, \
            client.messages.stream(model="m", max_tokens=64, messages=ASK) as stream:
        return stream.get_final_message()


def gemini_response(base_url: str) -> Any:
    """google-genai has no accumulator: what its user builds, every chunk's parts in one candidate's content,
    the last finish reason and usage (as tests/sdk/test_sdk_gemini.py adds them up)."""
    client = genai.Client(api_key="test-key", http_options=genai_types.HttpOptions(base_url=base_url))
    parts: list[Any] = []
    finish, usage = None, None
    for chunk in client.models.generate_content_stream(model="gemini-2.5-flash", contents="hi"):
        for candidate in chunk.candidates or []:
            parts.extend(candidate.content.parts or [] if candidate.content else [])
            finish = candidate.finish_reason or finish
        usage = chunk.usage_metadata or usage
    return genai_types.GenerateContentResponse(candidates=[genai_types.Candidate(
        content=genai_types.Content(role="model", parts=parts), finish_reason=finish)], usage_metadata=usage)


def sse_events(lines: Iterator[str]) -> Iterator[tuple[str, str]]:
    """(event type, data) per dispatched event, by the WHATWG rules: a line is a field `name:value` (one
    leading space of the value dropped) or a comment (`:`); a blank line dispatches the buffered data;
    unknown fields, `id` and `retry` carry no data; an event without data is not dispatched."""
    event, data = "", []
    for line in lines:
        if not line:
            if data:
                yield event or "message", "\n".join(data)
            event, data = "", []
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value


class InStreamError(Exception):
    """The plain reader met OpenAI's in-stream error, `data: {"error": {...}}`."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error.get('type')}: {error.get('message')}")
        self.error = error


def plain_reader(base_url: str) -> str:
    """The chat text a hand-written client builds: httpx2's `iter_lines` splits on CR, LF and CRLF, one BOM
    is dropped, then the events above, `[DONE]` ending the stream, an `error` object raising."""
    text = []
    with httpx2.stream("POST", f"{base_url}/chat/completions", json={"stream": True}) as response:
        response.raise_for_status()
        lines = (line.removeprefix("\ufeff") if number == 0 else line
                 for number, line in enumerate(response.iter_lines()))
        for _, data in sse_events(lines):
            if data == "[DONE]":
                break
            chunk = json.loads(data)
            if "error" in chunk:
                raise InStreamError(chunk["error"])
            text.extend(choice["delta"].get("content") or "" for choice in chunk["choices"])
    return "".join(text)


CLIENTS: dict[str, tuple[str, str, Callable[[str], Any]]] = {
    # name: (capture, the SDK for base_url_for, the client)
    "openai-chat-tools": ("chat-tools", "openai", openai_chat),
    "openai-chat-chinese": ("chat-chinese", "openai", openai_chat),
    "openai-chat-first-text": ("chat-first-text", "openai", openai_chat),
    "openai-responses": ("responses", "openai", openai_responses),
    "anthropic": ("anthropic", "anthropic", anthropic_message),
    "google-genai": ("gemini", "google-genai", gemini_response),
    "httpx2-sse": ("chat-chinese", "httpx", plain_reader),
}

# (client, fault kind) -> what the SDK does wrong (against the WHATWG event stream rules), and what it raises
# where a correct client builds the clean reply. google-genai's `HttpResponse.segments()` is no SSE parser:
# it strips a `data: ` prefix from each non-blank line and parses the rest as JSON (google-genai 3.6.1).
# Each SDK bug below holds for the versions requirements/test.txt locks (google-genai 3.6.1, anthropic
# 2.15.0 to 2.17.0, openai 3.57.0 to 3.63.0). The newest-SDK run (README) tells when a release fixes one:
# that entry then fails there, saying the SDK now builds the reply, and moves behind a version check.
SDK_BUGS: dict[tuple[str, str], tuple[str, type[BaseException], str]] = {
    ("google-genai", "nospace"): ("`data:{...}` is a data field (one leading space is optional): the SDK parses "
                                  "`data:{` as JSON", genai_errors.UnknownApiResponseError, "google"),
    ("google-genai", "keepalive"): ("a line beginning with a colon is a comment, to be ignored: the SDK parses "
                                    "`: keep-alive` as JSON", genai_errors.UnknownApiResponseError, "google"),
    ("google-genai", "bom"): ("one leading BOM is stripped before the lines are read: the SDK parses it as JSON",
                              genai_errors.UnknownApiResponseError, "google"),
    ("google-genai", "fields"): ("an `id:` line sets the last event id, it is no data: the SDK parses it as JSON",
                                 genai_errors.UnknownApiResponseError, "google"),
    # anthropic 2.15.0 (to 2.17.0 at least) decodes the bytes without stripping the BOM, so the first field is named
    # `\ufeffevent`, not `event`: `message_start` arrives without its event name and is skipped, and
    # `get_final_message()` fails its own `assert` on the snapshot it never made.
    ("anthropic", "bom"): ("one leading BOM is stripped before the lines are read: the SDK keeps it in the "
                           "first field's name and loses `message_start`", AssertionError, "anthropic"),
    # openai 3.57.0's (to 3.63.0 at least) SSEDecoder does the same: the first event's field is `\ufeffdata`, so the first chunk
    # is lost without a word (openai/openai-python#3819, open, fixes it). Seen only where the first chunk
    # carries text: `assert_reply` fails on the SDK's reply, naming frame 0.
    ("openai-chat-first-text", "bom"): ("one leading BOM is stripped before the lines are read: the SDK loses "
                                        "the first event", ReplyMismatchError, "frame 0"),
}


@pytest.fixture(scope="module")
def server_for() -> Iterator[Callable[[str], StreamfoldServer]]:
    """One replay server per fault, serving every capture above by name, started when first asked for."""
    servers: dict[tuple[str, tuple[str, ...]], StreamfoldServer] = {}

    def server(fault: str, *captures: str) -> StreamfoldServer:
        """The server for `fault` ("": none), serving `captures` (names in CAPTURES; all by default)."""
        key = (fault, captures or tuple(CAPTURES))
        if key not in servers:
            servers[key] = start_server(*(CAPTURES[name] for name in key[1]), faults=[fault] if fault else [],
                                        seed=7)
        return servers[key]

    yield server
    for running in servers.values():
        running.stop()


def run(client: str, server: StreamfoldServer) -> Any:
    capture, sdk, build = CLIENTS[client]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the SDKs' own, not ours
        return build(server.base_url_for(sdk, capture=CAPTURES[capture].stem))


@pytest.mark.parametrize("client", list(CLIENTS))
def test_each_client_builds_the_reference_of_the_clean_stream(client: str, server_for: Any) -> None:
    server = server_for("")
    assert_reply(run(client, server), server.expected)
    assert server.expected.complete


@pytest.mark.parametrize("client", list(CLIENTS))
@every_transparent_fault
def test_each_client_builds_the_clean_reply_over_every_transparent_fault(client: str, fault: str,
                                                                         server_for: Any) -> None:
    server = server_for(fault)
    bug = SDK_BUGS.get((client, fault.split(":")[0]))
    if bug is not None:
        _why, raised, package = bug
        if raised is ReplyMismatchError:  # the SDK returns a wrong reply and says nothing
            with pytest.raises(ReplyMismatchError, match=f"content differs at character 0 \\({package}"):
                assert_reply(run(client, server), server.expected)
            return
        with pytest.raises(raised) as caught:
            run(client, server)
        assert f"/{package}/" in str(caught.traceback[-1].path)  # raised in the SDK, not by assert_reply here
        # (That the stream served had the clean reply to build is tests/replay's to hold, for every capture;
        # `server.expected` here is the fold of what went out before the SDK gave up, so it is partial.)
        return
    built = run(client, server)
    assert_reply(built, server.expected)
    assert_reply(built, CAPTURES[CLIENTS[client][0]])  # the clean capture's reference: the fault changed nothing


# Over a destructive fault each client gets one capture; what it must do is the fault's `client` line in
# `streamfold.replay.FAULTS` (docs/replay.md). An outcome is either `MATCHES` (what the client built passes
# `assert_reply` against the reference of what was served: the reference says what the fault did to the
# reply), `MISSES` with the probable cause `assert_reply` gives (the client built something else than the
# served bytes say), or the exception the SDK documents for it (its type, and a piece of its message).
MATCHES = ("matches",)
DESTRUCTIVE = ["openai-chat-tools", "openai-responses", "anthropic", "google-genai", "httpx2-sse"]
OPENAI_CUT = (openai.APIConnectionError, "Connection error")  # the SDK wraps httpx2's RemoteProtocolError
PEER_CLOSED = (httpx2.RemoteProtocolError, "incomplete chunked read")


def _release(dist: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version(dist))[:3])


# anthropic up to 2.16 let httpx2's RemoteProtocolError through a cut stream; 2.17.0 wraps it in its own
# APIConnectionError, keeping httpx2's message. Both are the SDK saying the stream broke; which one depends
# on the version installed (requirements/test.txt locks 2.17.0; the newest-SDK run may have another).
ANTHROPIC_CUT = ((anthropic.APIConnectionError, "incomplete chunked read") if _release("anthropic") >= (2, 17)
                 else PEER_CLOSED)
STRICT_JSON = (json.JSONDecodeError, "")
GENAI_JSON = (genai_errors.UnknownApiResponseError, "Failed to parse response as JSON")
NO_COMPLETED = (RuntimeError, "response.completed")  # openai's ResponseStream.get_final_response()
OUTCOMES: dict[str, dict[str, tuple[Any, ...]]] = {
    # The connection breaks mid-frame: every client raises; none passes the text so far off as whole.
    "cut:3": {"openai-chat-tools": OPENAI_CUT, "openai-responses": OPENAI_CUT, "anthropic": ANTHROPIC_CUT,
              "google-genai": PEER_CLOSED, "httpx2-sse": PEER_CLOSED},
    # Two documents in one event's data: every client here is strict and fails to parse it.
    "glue:2": {"openai-chat-tools": STRICT_JSON, "openai-responses": STRICT_JSON, "anthropic": STRICT_JSON,
               "google-genai": GENAI_JSON, "httpx2-sse": STRICT_JSON},
    # A frame lost, twice, or out of order: each client follows the bytes, as the reference does.
    "drop:2": dict.fromkeys(DESTRUCTIVE, MATCHES),
    "duplicate:2": dict.fromkeys(DESTRUCTIVE, MATCHES),
    "reorder:2,3": dict.fromkeys(DESTRUCTIVE, MATCHES),
    # Broken JSON in one frame: no SDK skips it, each raises (the reference skips it with invalid-json).
    "corrupt:3": {"openai-chat-tools": STRICT_JSON, "openai-responses": STRICT_JSON, "anthropic": STRICT_JSON,
                  "google-genai": GENAI_JSON, "httpx2-sse": STRICT_JSON},
    # No end sign: only openai's Responses helper notices. The others return the reply as if it were whole
    # (it matches the reference's text, and the reference says it is incomplete: see the test).
    "no-terminal": {**dict.fromkeys(DESTRUCTIVE, MATCHES), "openai-responses": NO_COMPLETED},
    # No event lines: anthropic's MessageStream dispatches on them, gets no message_start and fails its own
    # assert; the others read the JSON's own type (or have no event names at all).
    "strip-events": {**dict.fromkeys(DESTRUCTIVE, MATCHES), "anthropic": (AssertionError, "")},
    "http-error:429": {"openai-chat-tools": (openai.RateLimitError, "429"), "openai-responses":
                       (openai.RateLimitError, "429"), "anthropic": (anthropic.RateLimitError, "rate_limit_error"),
                       "google-genai": (genai_errors.ClientError, "RESOURCE_EXHAUSTED"),
                       "httpx2-sse": (httpx2.HTTPStatusError, "429 Too Many Requests")},
    # The vendor's in-stream error: each SDK raises its API error; openai's Responses helper hands the
    # `error` event to its user and then raises for the missing `response.completed`.
    "error-event:3": {"openai-chat-tools": (openai.APIError, "The server had an error"),
                      "openai-responses": NO_COMPLETED,
                      "anthropic": (anthropic.APIStatusError, "overloaded_error"),
                      "google-genai": (genai_errors.ServerError, "INTERNAL"),
                      "httpx2-sse": (InStreamError, "server_error")},
    # Each argument fragment re-sent with all before it: the SDKs append them and build other arguments than
    # the reference recovers (assert_reply names the cause). Only the captures with fragmented arguments:
    # the Responses one sends its call's arguments in one delta, the plain reader's has no call, and Gemini
    # sends arguments whole (the fault is refused for it).
    "cumulative-args": {"openai-chat-tools": ("misses", "joined the fragments as they came"),
                        "anthropic": ("misses", "arguments differ")},
}
REFERENCE_SAYS = {  # what the reference of the served bytes must say, per fault kind: finding codes
    "cut": {"missing-terminal"}, "glue": {"glued-frames"}, "corrupt": {"invalid-json"},
    "no-terminal": {"missing-terminal"}, "http-error": {"http-status"}, "cumulative-args": {"cumulative-resend"},
    "strip-events": set(), "drop": set(), "duplicate": set(), "reorder": set(), "error-event": set(),
}


@pytest.mark.parametrize(("fault", "client"), [(fault, client) for fault, outcomes in OUTCOMES.items()
                                               for client in outcomes])
def test_each_client_over_each_destructive_fault_does_what_the_reference_or_its_sdk_says(
        fault: str, client: str, server_for: Any) -> None:
    outcome = OUTCOMES[fault][client]
    capture = CAPTURES[CLIENTS[client][0]]
    # cumulative-args is refused for Gemini, so its server serves only the client's own capture.
    server = server_for(fault, *([CLIENTS[client][0]] if fault == "cumulative-args" else []))
    plan, _ = served(recording(capture), fault)
    planned = reference_result(plan.body, plan.status, plan.headers)  # what the whole response folds to
    codes = {d.code for d in planned.diagnostics} | {error.code for error in planned.errors}
    assert REFERENCE_SAYS[fault.split(":")[0]] <= codes
    if outcome[0] in ("matches", "misses"):
        built = run(client, server)
        if outcome == MATCHES:
            assert_reply(built, server.expected)
        else:
            with pytest.raises(ReplyMismatchError, match=outcome[1]):
                assert_reply(built, server.expected)
    else:
        raised, message = outcome
        with pytest.raises(raised, match=re.escape(message) if message else None):
            run(client, server)
    if fault in ("no-terminal", "cut:3"):
        assert not planned.complete  # what an SDK that returned anyway did not tell its user


def test_the_plain_reader_raises_the_in_stream_error() -> None:
    # (`InStreamError` is the plain reader's own: OpenAI's `data: {"error": ...}` ends the stream.)
    with start_server(CAPTURES["chat-chinese"], faults=["error-event:3"]) as server, \
            pytest.raises(InStreamError) as caught:
        plain_reader(server.url)
    assert caught.value.error["type"] == "server_error"
    assert server.expected.errors and not server.expected.complete
