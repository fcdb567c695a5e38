"""VCR cassettes read as HAR files are: cassettes written by the real vcrpy while the openai and
anthropic SDKs (and httpx) streamed from a real server on 127.0.0.1, in YAML and JSON, with gzip
and brotli bodies kept as `!!binary`; the other recorders' formats (tests/inputs/cassette-*,
written in their exact formats, see `streamfold.services._cassettes`); interactions picked with
--entry and listed like HAR entries; recorded secrets never printed; hostile YAML refused in a
sentence, never by an exception; and `streamfold serve` replaying a cassette's stream."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
import vcr

from feeding import tr_fold
from proxy_rig import serving
from proxy_upstream import ANTHROPIC, OPENAI, Upstream
from streamfold.services import InputError, read_capture
from streamfold.services.load import load
from streamfold.web.fold_view import build_fold_view

brotli = pytest.importorskip("brotli")

INPUTS = Path(__file__).resolve().parents[1] / "inputs"
RAW = (INPUTS / "raw-body.sse").read_bytes()
SECRET = "sk-test-cassette-secret-9f8e7d"
COOKIE = "session-cookie-secret-5a4b"


class Brotli:
    """An upstream that streams OPENAI brotli-compressed (Upstream has gzip only) and sets a cookie."""

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        data = brotli.compress(OPENAI)
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", b"text/event-stream"), (b"content-encoding", b"br"),
            (b"set-cookie", f"sid={COOKIE}; HttpOnly".encode())]})
        for at in range(0, len(data), 50):
            await send({"type": "http.response.body", "body": data[at:at + 50], "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def record(path: Path, serializer: str = "yaml", **options: Any) -> None:
    """Four interactions, as a test suite records them: the openai SDK streaming, a 429, a gzip stream
    read with httpx, the anthropic SDK streaming."""
    app = Upstream()
    try:
        with serving(app) as url, vcr.VCR(serializer=serializer, **options).use_cassette(str(path)):
            client = openai.OpenAI(base_url=f"{url}/v1", api_key=SECRET, max_retries=0)
            stream = client.chat.completions.create(model="o3-mini", stream=True,
                                                    messages=[{"role": "user", "content": "hi"}])
            assert "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
            assert httpx.post(f"{url}/ratelimit", headers={"authorization": f"Bearer {SECRET}"}).status_code == 429
            with httpx.stream("POST", f"{url}/gzip", headers={"cookie": f"sid={COOKIE}"}) as response:
                assert b"".join(response.iter_bytes()) == OPENAI  # httpx inflates; the cassette keeps the wire's
            claude = anthropic.Anthropic(base_url=url, api_key=SECRET, max_retries=0)
            with claude.messages.stream(model="claude-sonnet-4-5", max_tokens=64,
                                        messages=[{"role": "user", "content": "hi"}]) as messages:
                messages.get_final_message()
    finally:
        app.release.set()


@pytest.fixture(scope="module")
def cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cassettes") / "test_chat.yaml"
    record(path)
    return path


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "streamfold", *args], capture_output=True, text=True, timeout=120)


def notes(capture: Any) -> dict[str, str]:
    return {note.code: note.message for note in capture.notes}


def test_vcrpy_s_yaml_cassette_gives_back_each_stream_the_server_sent(cassette: Path) -> None:
    data = cassette.read_bytes()
    assert data.startswith(b"interactions:\n") and b"!!binary" in data  # the gzip body, as vcrpy keeps bytes
    last = read_capture(data)
    assert last.source == "cassette" and last.entry == 3 and last.body == ANTHROPIC
    assert [(e.index, e.method, e.status, e.streamed, e.failed) for e in last.entries] == [
        (0, "POST", 200, True, False), (1, "POST", 429, False, True), (2, "POST", 200, True, False),
        (3, "POST", 200, True, False)]
    said = notes(last)
    assert said["input-recording"].startswith("read cassette interaction 3 (vcrpy, YAML): POST http://127.0.0.1:")
    assert said["input-recording"].endswith("/v1/messages (model claude-sonnet-4-5)")
    assert said["recording-entries"].startswith("the cassette has 3 streamed interactions; using interaction 3 "
                                                "(the last). Others: [0] POST http://127.0.0.1:")
    assert read_capture(data, entry="0").body == OPENAI
    gzipped = read_capture(data, entry="2")
    assert gzipped.body == OPENAI and "was gzip-compressed" in notes(gzipped)["gzip-body"]
    assert read_capture(data, entry="/v1/chat").entry == 0
    assert tr_fold(read_capture(data, entry="/gzip").body).choices[0].content == tr_fold(OPENAI).choices[0].content


def test_the_failed_interaction_is_the_finding_when_it_is_the_one_picked(cassette: Path) -> None:
    loaded = load(cassette.read_bytes(), entry="1")
    codes = {diagnostic.code: diagnostic.message for diagnostic in loaded.result.diagnostics}
    # The status says it failed; the error-response finding says what the server said (not repeated twice).
    assert loaded.capture.status == 429 and "status was 429" in codes["http-status"]
    assert "Rate limit reached" in codes["error-response"] and "Rate limit" not in codes["http-status"]


def test_the_cli_reads_a_cassette_where_it_reads_a_har_and_prints_no_recorded_secret(cassette: Path,
                                                                                   tmp_path: Path) -> None:
    client_text = tmp_path / "client.txt"
    client_text.write_text(tr_fold(OPENAI).choices[0].content or "", encoding="utf-8")
    outputs = [run(*args, str(cassette)) for args in (
        ["show"], ["show", "--json"], ["show", "--entry", "2", "--json"], ["frames"], ["frames", "--jsonl"],
        ["export"], ["blame", "--offset", "0"], ["check", "--entry", "0", "--expect", str(client_text)],
        ["show", "--entry", "1"])]
    for done in outputs:
        assert SECRET not in done.stdout + done.stderr and COOKIE not in done.stdout + done.stderr
    show, as_json, second, frames, jsonl, export, _, check, failed = outputs
    assert show.returncode == 0 and "read cassette interaction 3" in show.stdout
    assert json.loads(as_json.stdout)["dialect"] == "anthropic"
    assert json.loads(second.stdout)["choices"][0]["content"] == tr_fold(OPENAI).choices[0].content
    assert frames.returncode == 0 and "message_start" in frames.stdout
    assert len(jsonl.stdout.splitlines()) == len(tr_fold(ANTHROPIC).frames)
    assert json.loads(export.stdout)["type"] == "message"
    assert check.returncode == 0, check.stdout + check.stderr
    assert "429" in failed.stdout and SECRET not in failed.stdout
    view = json.dumps(build_fold_view(cassette.read_bytes()))
    assert SECRET not in view and COOKIE not in view


def test_a_missing_interaction_is_refused_with_the_list_as_a_har_entry_is(cassette: Path) -> None:
    done = run("show", "--entry", "9", str(cassette))
    assert done.returncode == 2
    assert done.stderr.startswith("streamfold: no cassette interaction matches '9'; streamed interactions: [0] POST ")
    assert "[2] POST http://127.0.0.1:" in done.stderr and "Traceback" not in done.stderr


def test_vcrpy_s_json_serializer_and_decode_compressed_response(tmp_path: Path) -> None:
    record(tmp_path / "json.json", serializer="json", decode_compressed_response=True)
    data = (tmp_path / "json.json").read_bytes()
    assert json.loads(data)["version"] == 1
    capture = read_capture(data, entry="2")
    assert capture.body == OPENAI and "(vcrpy, JSON)" in notes(capture)["input-recording"]
    assert capture.header("content-encoding") is None and "gzip-body" not in notes(capture)  # vcrpy inflated it


def test_a_brotli_body_is_inflated_when_brotli_is_installed(tmp_path: Path) -> None:
    path = tmp_path / "brotli.yaml"
    with serving(Brotli()) as url, vcr.use_cassette(str(path)), httpx.stream(
            "POST", f"{url}/v1/chat/completions", json={"model": "o3-mini", "stream": True}) as reply:
        reply.read()
    data = path.read_bytes()
    assert b"!!binary" in data and b"- br" in data
    capture = read_capture(data)
    assert capture.body == OPENAI and "was br-compressed" in notes(capture)["gzip-body"]
    assert "(model o3-mini)" in notes(capture)["input-recording"]
    small = read_capture(data, max_inflated=100)
    assert small.body == OPENAI[:100] and "inflated-too-large" in notes(small)
    # Without a brotli decoder (the package is optional): said in a finding, folded as recorded, no exception.
    done = subprocess.run([sys.executable, "-c", (
        "import sys, json; sys.modules['brotli'] = None\n"
        "from streamfold.services.load import load\n"
        f"loaded = load(open({str(path)!r}, 'rb').read())\n"
        "print(json.dumps([d.message for d in loaded.result.diagnostics if d.code == 'gzip-body']))")],
        capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "needs the `brotli` package" in json.loads(done.stdout)[0]


@pytest.mark.parametrize("name, flavour, reply", [
    ("cassette-ruby-vcr.yml", "VCR 6.3.1, YAML", "The kettle is on; tea in five minutes."),
    ("cassette-go-vcr.yaml", "go-vcr, YAML", "The kettle is on; tea in five minutes."),
    ("cassette-vcrpy-pre-1.0.yaml", "vcrpy before 1.0, YAML", "The kettle is on; tea in five minutes."),
    ("cassette-vcrpy-httpx-old.yaml", "vcrpy, YAML", "The kettle is on; tea in five minutes."),
])
def test_the_other_recorders_formats(name: str, flavour: str, reply: str) -> None:
    capture = read_capture((INPUTS / name).read_bytes())
    assert capture.body == RAW and f"({flavour})" in notes(capture)["input-recording"]
    assert "(model gpt-4.1-mini)" in notes(capture)["input-recording"]
    assert capture.url == "https://api.openai.com/v1/chat/completions" and capture.status == 200
    assert tr_fold(capture.body).choices[0].content == reply
    shown = run("show", "--json", str(INPUTS / name))
    assert shown.returncode == 0 and "secret" not in shown.stdout + shown.stderr


def test_ruby_vcr_s_base64_gzip_body_and_its_other_interactions() -> None:
    data = (INPUTS / "cassette-ruby-vcr.yml").read_bytes()
    last = read_capture(data)
    assert last.entry == 2 and "was gzip-compressed" in notes(last)["gzip-body"]
    first = read_capture(data, entry="0")
    assert first.body == (INPUTS.parent / "captures" / "anthropic" / "a3-a6-thinking-then-tool-use.sse").read_bytes()
    assert [entry.method for entry in last.entries] == ["POST"] * 3  # Ruby writes `post`
    assert last.entries[1].failed and not last.entries[1].streamed


def test_a_body_that_claims_gzip_and_is_not_is_said_and_folded_as_it_is() -> None:
    text = read_capture((INPUTS / "cassette-vcrpy-httpx-old.yaml").read_bytes())
    assert "recorded body is plain text: the recorder kept it decoded" in notes(text)["gzip-body"]
    garbage = _cassette(b"\x00\x01 not gzip at all \xff" * 10, {"Content-Encoding": ["gzip"]})
    loaded = load(garbage)
    said = {d.code: d.message for d in loaded.result.diagnostics}
    assert "is not gzip (no gzip header): read as it is" in said["gzip-body"]
    broken = _cassette(b"\x78\x9c" + bytes(range(256)), {"Content-Encoding": ["deflate"]})
    assert "does not decompress" in notes(read_capture(broken))["gzip-body"]


def _cassette(body: bytes, headers: dict[str, list[str]]) -> bytes:
    """A vcrpy cassette of one streamed interaction, written by vcrpy's own serializer."""
    from vcr.serializers import yamlserializer

    response = {"status": {"code": 200, "message": "OK"}, "body": {"string": body},
                "headers": {"Content-Type": ["text/event-stream"], **headers}}
    request = {"method": "POST", "uri": "https://api.openai.com/v1/chat/completions", "body": None, "headers": {}}
    text: str = yamlserializer.serialize({"version": 1, "interactions": [{"request": request, "response": response}]})
    return text.encode()


@pytest.mark.parametrize("data, said", [
    (b"interactions:\n- request: [unclosed\n  response: {\n", "its YAML does not read"),
    (b"interactions:\n" + bytes(range(256)) * 4, "its YAML does not read"),
    (b"interactions:\n- &a [*a]\n", "contains itself"),
    (b"interactions: 7\nversion: 1\n", "has no list of interactions"),
    (b"interactions: []\nversion: 1\n", "holds no interactions"),
    (b"interactions:\n- request: {}\n  response: {status: {code: 200}}\nversion: 1\n", "none is a streamed response"),
    (b"interactions:\n- !!python/object/apply:os.system ['touch /tmp/streamfold-pwned']\n", "none is a streamed"),
])
def test_hostile_cassettes_are_refused_in_a_sentence(data: bytes, said: str) -> None:
    with pytest.raises(InputError, match=said):
        read_capture(data, input_format="cassette")
    assert not Path("/tmp/streamfold-pwned").exists()  # a tag names no function that is ever called


def test_an_alias_bomb_is_refused_at_once() -> None:
    lines = ["interactions:", "- request: {}", "  response:", "    body: {string: 'data: {}'}", "    status: {code: 200}"]
    bomb = ["bomb:", "  - &l0 [a, a, a, a, a, a, a, a, a, a]"]
    bomb += [f"  - &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, 10)]
    data = "\n".join([*bomb, *lines, "  headers: *l9"]).encode()
    started = time.monotonic()
    with pytest.raises(InputError, match="aliases expand to more than"):
        read_capture(data, input_format="cassette")
    assert time.monotonic() - started < 5


def test_garbage_forced_as_a_cassette_is_an_input_error_not_an_exception() -> None:
    done = run("show", "--input-format", "cassette", str(INPUTS / "raw-body.sse"))
    assert done.returncode == 2 and "Traceback" not in done.stderr and "cassette" in done.stderr


def test_tail_reads_a_cassette_whole(cassette: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "streamfold", "tail"], input=cassette.read_bytes(),
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert b"read cassette interaction 3" in done.stdout and SECRET.encode() not in done.stdout


def test_serve_replays_the_cassette_s_stream(cassette: Path) -> None:
    process = subprocess.Popen([sys.executable, "-m", "streamfold", "serve", str(cassette), "--speed", "max"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), process.stderr.read() if process.stderr else url
        claude = anthropic.Anthropic(base_url=url, api_key="unused", max_retries=0)
        with claude.messages.stream(model="claude-sonnet-4-5", max_tokens=64,
                                    messages=[{"role": "user", "content": "hi"}]) as messages:
            final = messages.get_final_message()
        assert httpx.post(f"{url}/v1/messages").content == ANTHROPIC
        assert "".join(block.text for block in final.content if block.type == "text") == (
            tr_fold(ANTHROPIC).choices[0].content)
    finally:
        process.terminate()
        process.communicate(timeout=10)



def test_a_har_entry_says_its_model_as_an_interaction_does() -> None:
    entry = {"request": {"method": "POST", "url": "https://api.openai.com/v1/chat/completions",
                         "postData": {"mimeType": "application/json", "text": '{"model": "gpt-4.1-mini"}'}},
             "response": {"status": 200, "content": {"mimeType": "text/event-stream", "text": RAW.decode()}}}
    capture = read_capture(json.dumps({"log": {"entries": [entry]}}).encode())
    assert notes(capture)["input-har"] == ("read HAR entry 0: POST https://api.openai.com/v1/chat/completions "
                                           "(model gpt-4.1-mini)")


def test_polly_js_s_recording_of_a_compressed_stream_is_read_as_a_har() -> None:
    # @pollyjs/adapter-node-http keeps a Content-Encoding body as a JSON list of its chunks, each base64.
    import base64
    import gzip

    packed = gzip.compress(RAW)
    chunks = [base64.b64encode(packed[at:at + 100]).decode() for at in range(0, len(packed), 100)]
    entry = {"request": {"method": "POST", "url": "https://api.openai.com/v1/chat/completions"},
             "response": {"status": 200, "headers": [{"name": "content-encoding", "value": "gzip"}],
                          "content": {"mimeType": "text/event-stream", "text": json.dumps(chunks),
                                      "encoding": "base64"}}}
    recording = {"log": {"_recordingName": "chat/streams", "creator": {"name": "Polly.JS", "version": "6.0.6"},
                         "entries": [entry], "pages": [], "version": "1.2"}}
    capture = read_capture(json.dumps(recording, indent=2).encode())
    assert capture.source == "har" and capture.body == RAW and "gzip-body" in notes(capture)


def test_the_core_and_the_other_inputs_need_no_yaml() -> None:
    done = subprocess.run([sys.executable, "-c", (
        "import sys; sys.modules['yaml'] = None\n"
        "import streamfold\n"
        "from streamfold.services import InputError, read_capture\n"
        f"assert streamfold.fold(open({str(INPUTS / 'raw-body.sse')!r}, 'rb').read()).complete\n"
        f"assert read_capture(open({str(INPUTS / 'base64-two-streams.har')!r}, 'rb').read()).source == 'har'\n"
        "try:\n"
        f"    read_capture(open({str(INPUTS / 'cassette-go-vcr.yaml')!r}, 'rb').read())\n"
        "except InputError as error:\n"
        "    print(error)\n")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "reading a YAML cassette needs PyYAML (pip install pyyaml)"


def test_interactions_that_are_not_mappings_are_left_out_and_said() -> None:
    data = (INPUTS / "cassette-go-vcr.yaml").read_bytes().replace(b"interactions:\n", b"interactions:\n    - 7\n")
    capture = read_capture(data)
    assert capture.entry == 1 and capture.body == RAW  # the others keep their numbers
    assert notes(capture)["recording-malformed"] == "cassette interaction 0 is not a mapping: left out"


def test_an_ndjson_body_whose_headers_were_scrubbed_is_still_a_stream() -> None:
    # openinference's cassettes drop response headers: an Ollama reply is known by its lines alone.
    from vcr.serializers import yamlserializer

    lines = b"".join(json.dumps({"model": "llama3", "message": {"role": "assistant", "content": word},
                                 "done": word == "."}).encode() + b"\n" for word in ("Hi", " there", "."))
    interaction = {"request": {"method": "POST", "uri": "http://127.0.0.1:11434/api/chat", "headers": {},
                               "body": '{"model": "llama3", "stream": true}'},
                   "response": {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": lines}}}
    data = yamlserializer.serialize({"version": 1, "interactions": [interaction]}).encode()
    loaded = load(data)
    assert loaded.capture.entries[0].streamed and loaded.result.choices[0].content == "Hi there."
