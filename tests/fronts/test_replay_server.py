"""`streamfold serve` as a client under test meets it: a real uvicorn server on 127.0.0.1, a plain
httpx client that reads exactly the planned bytes in the planned writes, the openai SDK that builds
the clean reply through chunk:1 and split-utf8, the reference at /_streamfold/expect, the recorded
pace, the choice among several captures, and the command that prints its URL first."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from replay_helpers import CAPTURES, recording
from store_helpers import record
from streamfold.fronts.serving import RunningServer
from streamfold.replay import ReplayServer, parse_fault, plan_response, reference, reply_part
from streamfold.replay.server import start_in_thread
from streamfold.store import CaptureStore

PLAIN = CAPTURES / "examples" / "openai-plain-text.sse"
CHINESE = CAPTURES / "openai" / "u1-moonshot-usage-in-choice.sse"
TOOLS = CAPTURES / "anthropic" / "a3-a6-thinking-then-tool-use.sse"


def started(sources: list[Path | str], *specs: str, **options: object) -> RunningServer:
    lines: list[str] = []
    app = ReplayServer([recording(source) for source in sources], [parse_fault(spec) for spec in specs],
                       echo=lines.append, **options)  # type: ignore[arg-type]
    running = start_in_thread(app)
    running.lines = lines  # type: ignore[attr-defined]
    return running


@pytest.fixture
def plain() -> Iterator[RunningServer]:
    with started([PLAIN], speed="max") as running:
        yield running


def clean_reply(path: Path) -> dict[str, object]:
    plan = plan_response(recording(path))
    return reply_part(reference(plan.body, plan.status, plan.headers))


def test_a_plain_client_reads_the_planned_bytes_in_the_planned_writes() -> None:
    app = ReplayServer([recording(TOOLS)], [parse_fault("chunk:random"), parse_fault("slow:15")], seed=3)
    planned = app.plan(app.recordings[0], 1)  # the first request's plan
    with start_in_thread(app) as running, httpx.stream("POST", f"{running.url}/v1/messages",
                                                       content=b'{"stream":true}') as response:
        arrivals, chunks = [], []
        for chunk in response.iter_raw():
            arrivals.append(time.monotonic())
            chunks.append(chunk)
        assert response.status_code == 200 and response.headers["content-type"] == "text/event-stream"
        assert response.headers["x-streamfold-request"] == "1"
        assert response.headers["x-streamfold-expect"] == "/_streamfold/expect?request=1"
    assert b"".join(chunks) == planned.body == recording(TOOLS).body
    assert chunks == [write.data for write in planned.writes]
    gaps = [later - earlier for earlier, later in itertools.pairwise(arrivals)]
    assert len(chunks) > 20 and sorted(gaps)[len(gaps) // 2] > 0.01  # each write came on its own, 15 ms apart


@pytest.mark.parametrize("spec", ["chunk:1", "split-utf8"])
def test_the_openai_sdk_builds_the_clean_reply_through_the_fault(spec: str) -> None:
    openai = pytest.importorskip("openai")
    clean = clean_reply(CHINESE)
    with started([CHINESE], spec, speed="max") as running:
        with openai.OpenAI(base_url=f"{running.url}/v1", api_key="sk-test", max_retries=0) as client:
            stream = client.chat.completions.create(model="kimi", messages=[{"role": "user", "content": "你好"}],
                                                    stream=True)
            text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
        expect = httpx.get(f"{running.url}/_streamfold/expect").json()
    assert text == clean["choices"][0]["content"] and "你好" in text  # type: ignore[index]
    assert reply_part(expect) == clean


def test_the_openai_sdk_raises_the_vendor_error_of_http_error() -> None:
    openai = pytest.importorskip("openai")
    with started([PLAIN], "http-error:429", speed="max") as running:
        with openai.OpenAI(base_url=f"{running.url}/v1", api_key="sk-test", max_retries=0) as client, \
                pytest.raises(openai.RateLimitError) as caught:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], stream=True)
        assert caught.value.code == "rate_limit_exceeded"
        expect = httpx.get(f"{running.url}/_streamfold/expect").json()
    assert "http-status" in {d["code"] for d in expect["diagnostics"]}


def test_expect_is_the_reference_of_each_request_by_id(plain: RunningServer) -> None:
    assert httpx.get(f"{plain.url}/_streamfold/expect").status_code == 404  # nothing served yet
    for _ in range(2):
        assert httpx.post(f"{plain.url}/v1/chat/completions").status_code == 200
    last = httpx.get(f"{plain.url}/_streamfold/expect")
    assert last.headers["x-streamfold-request"] == "2"
    assert reply_part(last.json()) == clean_reply(PLAIN)
    assert httpx.get(f"{plain.url}/_streamfold/expect?request=1").json() == last.json()
    missing = httpx.get(f"{plain.url}/_streamfold/expect?request=99")
    assert missing.status_code == 404 and "no request 99" in missing.json()["error"]["message"]
    listed = httpx.get(f"{plain.url}/_streamfold/requests").json()
    assert [entry["request"] for entry in listed] == [1, 2] and all(entry["finished"] for entry in listed)
    assert listed[0]["sent_bytes"] == PLAIN.stat().st_size


def test_a_cut_breaks_the_connection_and_expect_says_incomplete() -> None:
    with started([PLAIN], "cut:5", speed="max") as running:
        got = bytearray()
        with pytest.raises(httpx.RemoteProtocolError), httpx.stream("POST", f"{running.url}/v1/chat/completions") \
                as response:
            for chunk in response.iter_raw():
                got += chunk
        planned = plan_response(recording(PLAIN), [parse_fault("cut:5")])
        assert bytes(got) == planned.body
        expect = httpx.get(f"{running.url}/_streamfold/expect").json()
        assert expect["complete"] is False and "missing-terminal" in {d["code"] for d in expect["diagnostics"]}


def test_a_client_that_goes_away_is_noted_and_expect_folds_what_it_was_sent() -> None:
    with started([PLAIN], "slow:40", speed="max") as running:
        with httpx.stream("POST", f"{running.url}/v1/chat/completions") as response:
            next(response.iter_raw())
        deadline = time.monotonic() + 5
        while not (entry := httpx.get(f"{running.url}/_streamfold/requests").json()[0])["client_gone"]:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert entry["sent_bytes"] < entry["planned_bytes"]
        assert httpx.get(f"{running.url}/_streamfold/expect").json()["complete"] is False


@pytest.fixture
def stored(tmp_path: Path) -> str:
    store = CaptureStore.open(str(tmp_path / "paced.sqlite"))
    number = record(store, TOOLS.read_bytes(), seed=1, url="https://api.anthropic.com/v1/messages")
    store.close()
    return f"{tmp_path / 'paced.sqlite'}#{number}"


@pytest.mark.parametrize("speed, low, high", [("original", 1.6, 3.0), (4.0, 0.4, 1.2)])
def test_the_original_pace_follows_the_recorded_times_scaled_by_the_factor(stored: str, speed: object, low: float,
                                                                          high: float) -> None:
    source = recording(stored)
    assert source.reads is not None and source.reads[-1][1] == pytest.approx(1.693, abs=0.01)
    with started([stored], speed=speed) as running:
        began = time.monotonic()
        with httpx.stream("POST", f"{running.url}/v1/messages") as response:
            body = response.read()
        elapsed = time.monotonic() - began
    assert body == TOOLS.read_bytes()
    assert low < elapsed < high, elapsed


def test_several_captures_are_chosen_by_header_path_prefix_recorded_path_or_dialect(stored: str) -> None:
    ollama = CAPTURES / "ollama" / "generate-stream.ndjson"
    with started([PLAIN, stored, ollama], speed="max") as running:
        def served(path: str, **headers: str) -> httpx.Response:
            return httpx.post(f"{running.url}{path}", headers=headers)

        assert served("/anything", **{"x-streamfold-capture": "generate-stream"}).headers[
            "x-streamfold-capture"] == "generate-stream"
        assert served("/anything", **{"x-streamfold-capture": "0"}).headers["x-streamfold-capture"] == \
            "openai-plain-text"
        assert served("/@generate-stream/api/generate").headers["x-streamfold-capture"] == "generate-stream"
        assert served("/v1/messages").headers["x-streamfold-capture"] == "paced#1"  # its recorded path
        assert served("/v1/chat/completions").headers["x-streamfold-capture"] == "openai-plain-text"
        assert served("/api/chat").headers["content-type"] == "application/x-ndjson"
        miss = served("/v1/embeddings")
        assert miss.status_code == 404
        assert miss.json()["error"]["captures"] == ["openai-plain-text", "paced#1", "generate-stream"]
        assert served("/", **{"x-streamfold-capture": "nope"}).status_code == 404
        listed = httpx.get(f"{running.url}/_streamfold/captures").json()["captures"]
        assert [(c["name"], c["dialect"]) for c in listed] == [("openai-plain-text", "openai-chat"),
                                                               ("paced#1", "anthropic"), ("generate-stream", "ollama")]


def test_only_requests_addressed_to_the_server_are_answered(plain: RunningServer) -> None:
    refused = httpx.post(f"{plain.url}/v1/chat/completions", headers={"host": "api.openai.com"})
    assert refused.status_code == 400 and "Host header" in refused.json()["error"]["message"]
    port = plain.url.rsplit(":", 1)[1]
    assert httpx.post(f"{plain.url}/v1/chat/completions", headers={"host": f"localhost:{port}"}).status_code == 200
    assert httpx.post(f"{plain.url}/_streamfold/expect").status_code == 405


def test_expect_out_is_written_before_the_body_ends(tmp_path: Path) -> None:
    out = tmp_path / "expect-{request}.json"
    with started([PLAIN], "keepalive:2", speed="max", expect_out=str(out)) as running:
        for _ in range(2):
            httpx.post(f"{running.url}/v1/chat/completions").raise_for_status()
            # the body has ended: the file is there at once
    written = sorted(path.name for path in tmp_path.glob("expect-*.json"))
    assert written == ["expect-1.json", "expect-2.json"]
    assert reply_part(json.loads((tmp_path / "expect-2.json").read_text())) == clean_reply(PLAIN)


def _serve(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "streamfold", "serve", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_the_command_prints_its_url_first_and_serves(tmp_path: Path) -> None:
    process = _serve(str(PLAIN), "--fault", "chunk:random", "--seed", "5", "--speed", "max",
                     "--expect-out", str(tmp_path / "last.json"))
    try:
        assert process.stdout is not None
        first = process.stdout.readline().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", first), first
        assert process.stdout.readline().startswith("seed 5, speed max, faults: chunk:random")
        body = httpx.post(f"{first}/v1/chat/completions").content
        assert body == PLAIN.read_bytes()
        assert reply_part(json.loads((tmp_path / "last.json").read_text())) == clean_reply(PLAIN)
    finally:
        process.terminate()
        process.communicate(timeout=10)  # and its pipes closed


@pytest.mark.parametrize("args, said", [
    (["--fault", "chunk:0"], "N|random must be a whole number of at least 1"),
    (["--fault", "cumulative-args", str(CAPTURES / "ollama" / "generate-stream.ndjson")], "Ollama sends each tool"),
    (["--fault", "strip-events", str(CAPTURES / "ollama" / "generate-stream.ndjson")], "defined for sse streams only"),
    (["--speed", "fast"], "is not original, max or a positive number"),
    (["no/such/file.sse"], "cannot read"),
])
def test_the_command_refuses_what_it_cannot_serve_with_a_sentence(args: list[str], said: str) -> None:
    sources = [] if any(arg.endswith((".ndjson", ".sse")) for arg in args) else [str(PLAIN)]
    done = subprocess.run([sys.executable, "-m", "streamfold", "serve", *sources, *args], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""


def test_the_anthropic_sdk_builds_the_tool_call_through_split_utf8_and_crlf() -> None:
    anthropic = pytest.importorskip("anthropic")
    clean = clean_reply(TOOLS)
    with started([TOOLS], "split-utf8", "crlf", "chunk:random", speed="max", seed=9) as running:
        with anthropic.Anthropic(base_url=running.url, api_key="sk-ant-test", max_retries=0) as client, \
                client.messages.stream(model="claude", max_tokens=64,
                                       messages=[{"role": "user", "content": "hi"}]) as stream:
            message = stream.get_final_message()
        expect = httpx.get(f"{running.url}/_streamfold/expect").json()
    calls = [block for block in message.content if block.type == "tool_use"]
    expected = clean["choices"][0]["tool_calls"]  # type: ignore[index]
    assert [(call.name, call.input) for call in calls] == [(tool["name"], tool["parsed"]) for tool in expected]
    assert message.stop_reason == "tool_use" and reply_part(expect) == clean
