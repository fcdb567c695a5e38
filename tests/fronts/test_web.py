"""The web page's server: the JSON it returns (contract, frames, provenance,
export, diff), its guards (loopback Host, other origins, size limit, security
headers), the `streamfold web` command, and the static page's own rules
(no external URL, no HTML parsed from strings).

The browser itself is driven in test_web_browser.py.
"""

from __future__ import annotations

import fnmatch
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

import streamfold
from streamfold.services.rows import frame_rows
from streamfold.web.app import CONTENT_SECURITY_POLICY, create_app, format_size, is_loopback_host
from streamfold.web.fold_view import provenance_runs, text_fields
from streamfold.web.server import parse_size, start_in_thread

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
STATIC = ROOT / "src" / "streamfold" / "web" / "static"
STATIC_FILES = sorted(path for path in STATIC.rglob("*") if path.is_file())
LOCAL = "http://127.0.0.1"


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(body, ensure_ascii=False).encode() + b"\n\n"


@pytest.fixture()
def client() -> TestClient:
    return TestClient(create_app(), base_url=LOCAL)


def fold_view(client: TestClient, data: bytes, **query: str) -> dict[str, Any]:
    response = client.post("/api/fold", content=data, params=query)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    return response.json()  # type: ignore[no-any-return]


# -- POST /api/fold -------------------------------------------------------------

@pytest.mark.parametrize("name", ["openai-tool-calls.sse", "openai-broken.sse", "openai-reasoning.sse",
                                  "openai-plain-text.sse"])
def test_fold_returns_the_contract_frames_and_export(client: TestClient, name: str) -> None:
    data = (EXAMPLES / name).read_bytes()
    result = streamfold.fold(data)
    view = fold_view(client, data)
    assert view["result"] == json.loads(json.dumps(result.to_dict()))
    assert view["export"] == json.loads(json.dumps(result.export()))
    assert view["export_error"] is None
    assert view["capture"] == {"size": len(data), "input_size": len(data), "source": "raw"}
    rows = list(frame_rows(result))
    assert len(view["frames"]) == len(rows) == len(result.frames)
    for sent, row, frame in zip(view["frames"], rows, result.frames):
        assert {key: sent[key] for key in row} == json.loads(json.dumps(row))
        assert sent["raw"] == frame.raw.decode("utf-8", "replace")
        assert sent["size"] == len(frame.raw)
        if sent["kind"] == "json":
            # The page parses exactly the text the core decoded.
            text = sent["raw"][slice(*sent["data_span"])] if "data_span" in sent else sent["payload_json"]
            assert text == frame.data
            assert json.loads(text) == result.payload(frame.index).value


def test_every_provenance_run_agrees_with_frame_producing_char(client: TestClient) -> None:
    for name in ("openai-tool-calls.sse", "openai-broken.sse", "openai-reasoning.sse"):
        data = (EXAMPLES / name).read_bytes()
        result = streamfold.fold(data)
        view = fold_view(client, data)
        fields = {(entry["choice"], entry["field"]): entry["runs"] for entry in view["provenance"]}
        assert set(fields) == {(choice, field) for choice, field, _ in text_fields(result)}
        for choice, field, text in text_fields(result):
            runs = fields[(choice, field)]
            assert runs[0][0] == 0 and runs[-1][1] == len(text)
            for (start, end, frame), following in zip(runs, [*runs[1:], None]):
                assert start < end and (following is None or following[0] == end)
                for offset in range(start, end):  # ASCII texts: UTF-16 units are characters
                    assert result.frame_producing_char(offset, choice=choice, field=field).index == frame


def test_provenance_and_error_positions_are_in_utf16_units(client: TestClient) -> None:
    # "🙂" is one character for Python and two UTF-16 units for the page.
    data = chunk({"content": "a🙂"}) + chunk({"content": "b"}) + chunk({"content": "🙂🙂c"}, "stop") + b"data: [DONE]\n\n"
    view = fold_view(client, data)
    (entry,) = view["provenance"]
    assert entry["runs"] == [[0, 3, 0], [3, 4, 1], [4, 9, 2]]
    content = view["result"]["choices"][0]["content"]
    assert len(content.encode("utf-16-le")) // 2 == 9
    broken = b'data: {"content": "\xf0\x9f\x99\x82\xf0\x9f\x99\x82 x\n\n'
    (frame,) = fold_view(client, broken)["frames"]
    assert frame["kind"] == "invalid"
    data_text = frame["data"]
    python_position = streamfold.decode_frame(streamfold.fold(broken).frames[0]).position
    assert frame["error"]["position"] == len(data_text[:python_position].encode("utf-16-le")) // 2


def test_invalid_frame_keeps_message_position_and_data(client: TestClient) -> None:
    view = fold_view(client, (EXAMPLES / "openai-broken.sse").read_bytes())
    invalid = [frame for frame in view["frames"] if frame["kind"] == "invalid"]
    assert [frame["index"] for frame in invalid] == [17]
    (frame,) = invalid
    assert frame["error"]["message"].startswith("Unterminated string")
    assert frame["data"][frame["error"]["position"]] == '"'
    glued = next(frame for frame in view["frames"] if frame["kind"] == "glued")
    documents = json.loads(glued["payload_json"])
    assert [document["offset"] for document in documents] == [0, 323]
    assert [d["document"]["choices"][0]["delta"]["content"] for d in documents] == [" Sydney", " and"]


def test_tool_argument_error_position(client: TestClient) -> None:
    data = (b'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,'
            b'"id":"c1","function":{"name":"f","arguments":"{\\"a\\": \xf0\x9f\x99\x82,"}}]}}]}\n\n'
            b'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,'
            b'"function":{"arguments":" x}"}}]},"finish_reason":"tool_calls"}]}\n\n'
            b"data: [DONE]\n\n")
    view = fold_view(client, data)
    call = view["result"]["choices"][0]["tool_calls"][0]
    assert call["error"] is not None
    (error,) = view["tool_argument_errors"]
    assert error["choice"] == 0 and error["tool"] == 0
    # The emoji before the failure counts two UTF-16 units: the error is at "🙂" itself (not a value).
    arguments = call["arguments"]
    assert arguments.encode("utf-16-le")[2 * error["position"]:][:4].decode("utf-16-le") == "🙂"


def test_bytes_between_frames_are_kept_for_the_raw_view(client: TestClient) -> None:
    view = fold_view(client, b": hi\n\n\n\ndata: {\"a\":1}\n\ndata: [DONE]\n\n\n")
    assert "gap" not in view["frames"][0]
    assert view["frames"][1]["gap"] == "\n\n"
    assert view["trailing"] == "\n"
    array = fold_view(client, b'[{"a":1},\n {"b":2}]')
    assert [frame.get("gap") for frame in array["frames"]] == ["[", ",\n "]
    assert array["trailing"] == "]"


def test_export_is_null_with_a_reason_when_the_dialect_has_none(client: TestClient) -> None:
    view = fold_view(client, b'data: {"foo": 1}\n\n')
    assert view["result"]["dialect"] == "unknown"
    assert view["export"] is None
    assert "unknown" in view["export_error"]


def test_dialect_and_transport_are_passed_to_the_core_and_checked(client: TestClient) -> None:
    data = b'{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"}}]}\n'
    view = fold_view(client, data, transport="ndjson", dialect="openai-chat")
    assert view["result"]["transport"] == "ndjson" and view["result"]["choices"][0]["content"] == "hi"
    response = client.post("/api/fold", content=data, params={"dialect": "nonsense"})
    assert response.status_code == 400 and "unknown dialect 'nonsense'" in response.json()["error"]
    response = client.post("/api/fold", content=data, params={"transport": "carrier-pigeon"})
    assert response.status_code == 400 and "unknown transport" in response.json()["error"]


def test_fold_view_of_a_large_capture_has_one_run_per_frame() -> None:
    data = b"".join(chunk({"content": f"w{i} "}) for i in range(2000)) + b"data: [DONE]\n\n"
    result = streamfold.fold(data)
    (choice, field, text), = text_fields(result)
    runs = provenance_runs(result, choice, field, text)
    assert len(runs) == 2000
    assert all(text[start:end] == f"w{frame} " for start, end, frame in runs)


# -- POST /api/diff -------------------------------------------------------------

def diff(client: TestClient, left: bytes, right: bytes, **query: str) -> dict[str, Any]:
    response = client.post("/api/diff", content=left + right, params={"left_size": str(len(left)), **query})
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def test_diff_of_a_capture_with_itself_is_empty(client: TestClient) -> None:
    data = (EXAMPLES / "openai-tool-calls.sse").read_bytes()
    result = diff(client, data, data)
    assert all(field["same"] for field in result["fields"])
    assert result["frames"]["hunks_total"] == 0 and result["frames"]["hunks"] == []
    assert result["left"]["result"] == result["right"]["result"]


def test_diff_names_the_fields_and_frames_that_differ(client: TestClient) -> None:
    common = chunk({"role": "assistant", "content": ""}) + chunk({"content": "The sky "})
    left = common + chunk({"content": "is blue."}, "stop") + b"data: [DONE]\n\n"
    right = common + chunk({"content": "is grey"}) + chunk({"content": "."}, "length")
    result = diff(client, left, right)
    changed = {(field["section"], field["label"]): field for field in result["fields"] if not field["same"]}
    # Both sides have four frames: the counts agree, what the frames carry does not.
    assert set(changed) == {("stream", "complete"), ("choice 0", "content"), ("choice 0", "finish reason"),
                            ("findings", "diagnostics")}
    content = changed[("choice 0", "content")]
    assert (content["left"], content["right"]) == ("The sky is blue.", "The sky is grey.")
    assert content["prefix"] == len("The sky is ") and content["suffix"] == 1
    frames = result["frames"]
    assert (frames["left_total"], frames["right_total"]) == (4, 4)
    (hunk,) = frames["hunks"]
    assert hunk["op"] == "replace" and hunk["left"] == [2, 4] and hunk["right"] == [2, 4]
    assert [frame["index"] for frame in hunk["left_frames"]] == [2, 3]
    assert hunk["right_frames"][0]["raw"].startswith("data: ")


def test_diff_reads_a_har_or_curl_output_as_the_stream_it_holds(client: TestClient) -> None:
    """A HAR against curl -v output of the same exchange: the same stream body, so no difference."""
    inputs = ROOT / "tests" / "inputs"
    har, curl = (inputs / "chrome-export.har").read_bytes(), (inputs / "curl-v.txt").read_bytes()
    result = diff(client, har, curl)
    assert all(field["same"] for field in result["fields"]), [f for f in result["fields"] if not f["same"]]
    assert result["frames"]["hunks_total"] == 0
    assert (result["left"]["source"], result["right"]["source"]) == ("har", "curl-verbose")
    body = (inputs / "raw-body.sse").read_bytes()
    assert result["left"]["size"] == result["right"]["size"] == len(body)
    assert result["left"]["input_size"] == len(har)
    assert result["left"]["result"]["choices"][0]["content"] == "The kettle is on; tea in five minutes."
    broken = b'{"log": {"entries": [' + b"x" * 10 + b"]}}"
    response = client.post("/api/diff", content=broken + curl, params={"left_size": str(len(broken))})
    assert response.status_code == 400 and "HAR" in response.json()["error"]


def test_a_content_length_int_cannot_read_is_ignored(client: TestClient) -> None:
    response = client.post("/api/fold", content=chunk({"content": "hi"}, "stop"),
                           headers={"content-length": "1" * 5000})
    assert response.status_code == 200 and response.json()["result"]["choices"][0]["content"] == "hi"


def test_diff_marks_utf16_prefixes_and_rejects_a_bad_split(client: TestClient) -> None:
    left = chunk({"content": "🙂 a"}, "stop")
    right = chunk({"content": "🙂 b"}, "stop")
    content = next(f for f in diff(client, left, right)["fields"] if f["label"] == "content")
    assert content["prefix"] == 3 and content["suffix"] == 0
    for bad in ("", "-1", "x", str(len(left + right) + 1), "²", "٣", "1" * 5000):
        response = client.post("/api/diff", content=left + right, params={"left_size": bad})
        assert response.status_code == 400 and "left_size" in response.json()["error"]


# -- guards ---------------------------------------------------------------------

@pytest.mark.parametrize("host", ["localhost", "localhost:80", "127.0.0.1", "127.0.0.1:80", "[::1]", "[::1]:80",
                                  "LOCALHOST:80"])
def test_loopback_hosts_are_served(host: str) -> None:
    """The TestClient's server is on port 80: a Host without a port means it."""
    assert is_loopback_host(host) and is_loopback_host(host, 80)
    response = TestClient(create_app()).get("/api/meta", headers={"Host": host})
    assert response.status_code == 200


@pytest.mark.parametrize("host", ["localhost:8080", "127.0.0.1:1", "[::1]:9", "127.0.0.1:080x", "localhost:99999999"])
def test_loopback_hosts_on_another_port_are_refused(host: str) -> None:
    assert not is_loopback_host(host, 80)
    response = TestClient(create_app()).get("/api/meta", headers={"Host": host})
    assert response.status_code == 403 and "on port 80" in response.json()["error"]


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8080", "127.0.0.1.nip.io", "localhost.evil.example",
                                  "127.0.0.2", "[::2]", "[::1]x", "localhost:80x", "", "0.0.0.0", "testserver"])
def test_foreign_hosts_are_refused(host: str) -> None:
    assert not is_loopback_host(host)
    client = TestClient(create_app())
    for method, path in (("GET", "/"), ("GET", "/api/meta"), ("POST", "/api/fold"), ("GET", "/static/app.js")):
        response = client.request(method, path, headers={"Host": host}, content=b"data: {}\n\n")
        assert response.status_code == 403
        assert "localhost, 127.0.0.1 or [::1]" in response.json()["error"]
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY


def test_requests_from_other_origins_are_refused(client: TestClient) -> None:
    for origin in ("https://evil.example", "null", "http://127.0.0.1.evil.example:8000"):
        response = client.post("/api/fold", content=b"data: {}\n\n", headers={"Origin": origin})
        assert response.status_code == 403 and "other origins" in response.json()["error"]
    # Another program's page on this machine is another origin: only this server's own port is accepted.
    for origin in ("http://127.0.0.1:5000", "http://localhost:3000", "https://127.0.0.1", "http://127.0.0.1/x"):
        response = client.post("/api/fold", content=b"data: {}\n\n", headers={"Origin": origin})
        assert response.status_code == 403 and "other origins" in response.json()["error"], origin
    for origin in ("http://127.0.0.1", "http://localhost:80", "http://[::1]"):
        response = client.post("/api/fold", content=b"data: {}\n\n", headers={"Origin": origin})
        assert response.status_code == 200, origin


def test_security_headers_on_every_response(client: TestClient) -> None:
    for path in ("/", "/static/app.js", "/static/app.css", "/api/meta", "/api/capture", "/nowhere"):
        response = client.get(path)
        headers = response.headers
        assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY, path
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "no-referrer"
        assert headers["x-frame-options"] == "DENY"
        assert headers["cache-control"] == "no-store"
    assert CONTENT_SECURITY_POLICY == (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        "object-src 'none'; base-uri 'none'; frame-ancestors 'none'")


def test_size_limit_gives_a_clear_413() -> None:
    client = TestClient(create_app(max_size=1000), base_url=LOCAL)
    assert client.post("/api/fold", content=b"x" * 1000).status_code == 200
    response = client.post("/api/fold", content=b"x" * 1001)
    assert response.status_code == 413
    message = response.json()["error"]
    assert "1001 B" in message and "at most 1000 B" in message and "--max-size 1MiB" in message
    # The two captures of a diff count together.
    response = client.post("/api/diff", content=b"x" * 1200, params={"left_size": "600"})
    assert response.status_code == 413


def test_size_limit_without_content_length_on_a_real_server() -> None:
    """A chunked upload has no Content-Length: the limit holds while reading."""
    with start_in_thread(create_app(max_size=64 * 1024)) as server:
        def body() -> Any:
            for _ in range(40):
                yield b"data: " + b"x" * 4096 + b"\n\n"
        response = httpx.post(server.url + "api/fold", content=body(), timeout=30)
        assert response.status_code == 413
        assert "at most 64 KiB" in response.json()["error"]
        # The server is still fine afterwards.
        assert httpx.get(server.url + "api/meta").status_code == 200


def test_foreign_host_is_refused_by_the_real_server() -> None:
    with start_in_thread(create_app()) as server:
        port = server.url.rsplit(":", 1)[1].strip("/")
        refused = httpx.get(server.url, headers={"Host": f"attacker.example:{port}"})
        assert refused.status_code == 403
        assert httpx.get(server.url).status_code == 200
        assert httpx.get(f"http://localhost:{port}/api/meta").status_code == 200


def test_meta_and_capture_of_the_command_line_file(tmp_path: Path) -> None:
    capture = tmp_path / "reply.sse"
    capture.write_bytes(b"data: [DONE]\n\n")
    client = TestClient(create_app(capture_path=capture, max_size=12345), base_url=LOCAL)
    meta = client.get("/api/meta").json()
    assert meta["capture"] == {"name": "reply.sse", "size": 14}
    assert meta["max_size"] == 12345
    assert "openai-chat" in meta["dialects"] and meta["transports"][0] == "sse"
    assert client.get("/api/capture").content == b"data: [DONE]\n\n"
    capture.write_bytes(b"changed")  # read at each request: a reload shows the file anew
    assert client.get("/api/capture").content == b"changed"
    capture.unlink()
    assert client.get("/api/capture").status_code == 404
    assert "error" in client.get("/api/meta").json()["capture"]
    assert TestClient(create_app(), base_url=LOCAL).get("/api/capture").status_code == 404


def test_parse_size_and_format_size() -> None:
    assert parse_size("64MiB") == parse_size("64M") == parse_size("64 mib") == 64 * 1024 * 1024
    assert parse_size("1.5GiB") == 3 * 1024 ** 3 // 2
    assert parse_size("65536") == parse_size("64k") == 65536
    for bad in ("", "lots", "-1", "0", "12QB"):
        with pytest.raises(ValueError):
            parse_size(bad)
    assert format_size(1536) == "1.5 KiB" and format_size(1000) == "1000 B"
    assert format_size(64 * 1024 * 1024) == "64 MiB" and format_size(1536, compact=True) == "2KiB"


# -- the page's files -----------------------------------------------------------

def test_static_page_loads_nothing_from_elsewhere() -> None:
    for path in STATIC_FILES:
        text = path.read_text(encoding="utf-8")
        # The SVG namespace is a name, not something fetched.
        urls = [url for url in re.findall(r"(?:https?:)?//[\w.-]+\.[a-z]{2,}[^\s\"')]*", text)
                if url != "http://www.w3.org/2000/svg"]
        assert urls == [], f"{path.name} mentions {urls}"
        assert "@import" not in text and "@font-face" not in text
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    assert re.findall(r'(?:src|href)="([^"]+)"', html) == ["/static/favicon.svg", "/static/app.css", "/static/app.js"]
    assert "<script>" not in html and "style=" not in html  # nothing inline: the CSP forbids it


def test_page_script_never_parses_html_from_strings() -> None:
    script = "\n".join(path.read_text(encoding="utf-8") for path in STATIC_FILES if path.suffix == ".js")
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "DOMParser",
                 "createContextualFragment", "eval(", "new Function", "setAttribute('style'"):
        assert sink not in script, sink
    # The only href set is the blob: URL of a download the page made itself.
    assert re.findall(r"\.href\s*=\s*([^;]+);", script) == ["url"]


def test_only_the_backend_module_talks_to_the_server() -> None:
    """Every call to the core goes through static/js/backend.js, so another backend (a Web Worker) can replace it."""
    talking = {path.name for path in STATIC_FILES if path.suffix == ".js"
               if re.search(r"\bfetch\(|XMLHttpRequest|WebSocket|EventSource|sendBeacon|/api/",
                            path.read_text(encoding="utf-8"))}
    assert talking == {"backend.js", "worker.js"}
    # The static page's worker runs the core itself: what it fetches is its runtime's files, beside it.
    worker = (STATIC / "worker.js").read_text(encoding="utf-8")
    assert "/api/" not in worker and re.findall(r"\bfetch\(([^,)]+)", worker) == [
        "url", "`${RUNTIME}pyodide.asm.wasm`"]
    assert re.findall(r"fetched\(([^,]+),", worker) == ["url", "`${RUNTIME}files.json`", "RUNTIME + files.streamfold"]


def test_static_files_are_package_data() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"web/static/*"' in pyproject
    assert {path.name for path in STATIC.iterdir()} >= {"index.html", "app.js", "app.css"}
    # Every file the page loads is in the wheel: setuptools' package-data globs match no subfolder's files.
    declared = re.search(r"^\[tool\.setuptools\.package-data\]\nstreamfold = \[([^\]]*)\]", pyproject, re.M)
    assert declared is not None
    globs = json.loads(f"[{declared.group(1)}]")
    package = STATIC.parent.parent
    for path in STATIC_FILES:
        name = path.relative_to(package).as_posix()
        assert any(fnmatch.fnmatchcase(name, glob) and name.count("/") == glob.count("/") for glob in globs), name


def test_the_page_s_modules_all_load_from_its_entry() -> None:
    """Every module under static/ is reached from app.js (the served page's entry) or page.js (the static
    page's) by relative imports, or is the worker one of them starts (none left over, none missing)."""
    reached, waiting = set(), [STATIC / "app.js", STATIC / "page.js"]
    while waiting:
        module = waiting.pop()
        if module in reached:
            continue
        reached.add(module)
        text = module.read_text(encoding="utf-8")
        for target in [*re.findall(r"^import (?:.* from )?'(\./[\w./-]+\.js)';$", text, re.M),
                       *re.findall(r"new Worker\(new URL\('([\w./-]+\.js)', import\.meta\.url\)", text)]:
            assert (module.parent / target).resolve().is_file(), f"{module.name} imports {target}"
            waiting.append((module.parent / target).resolve())
    assert reached == {path.resolve() for path in STATIC_FILES if path.suffix == ".js"}


# -- the command ----------------------------------------------------------------

def test_web_command_serves_the_file_it_was_given(tmp_path: Path) -> None:
    capture = tmp_path / "given.sse"
    capture.write_bytes((EXAMPLES / "openai-plain-text.sse").read_bytes())
    process = subprocess.Popen([sys.executable, "-m", "streamfold", "web", str(capture), "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert match, line
        url = match.group(0)
        deadline = time.monotonic() + 10
        while True:
            try:
                meta = httpx.get(url + "api/meta").json()
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        assert meta["capture"]["name"] == "given.sse"
        assert httpx.get(url + "api/capture").content == capture.read_bytes()
        page = httpx.get(url)
        assert page.status_code == 200 and "streamfold" in page.text
    finally:
        process.terminate()
        process.wait(10)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def test_web_command_rejects_bad_arguments() -> None:
    from click.testing import CliRunner

    from streamfold.launcher import cli

    runner = CliRunner()
    result = runner.invoke(cli, ["web", "--max-size", "lots"])
    assert result.exit_code == 2 and "not a size" in result.output
    result = runner.invoke(cli, ["web", "/no/such/file.sse"])
    assert result.exit_code == 2
    result = runner.invoke(cli, ["web", "--help"])
    assert result.exit_code == 0 and "--max-size" in result.output and "--open" in result.output


def test_a_har_or_curl_dump_dropped_on_the_page_is_read_like_the_cli_reads_it() -> None:
    from starlette.testclient import TestClient

    from streamfold.web.app import create_app

    inputs = Path(__file__).resolve().parents[1] / "inputs"
    client = TestClient(create_app(), base_url="http://127.0.0.1")
    for name in ("chrome-export.har", "curl-v.txt", "trace-ascii-time.txt"):
        view = client.post("/api/fold", content=(inputs / name).read_bytes()).json()
        assert view["result"]["choices"][0]["content"] == "The kettle is on; tea in five minutes."
        assert view["capture"]["source"] != "raw" and view["capture"]["size"] == len((inputs / "raw-body.sse").read_bytes())
        assert any(d["frame"] is None for d in view["result"]["diagnostics"])  # the input note
    har = json.loads((inputs / "chrome-export.har").read_text())
    har["log"]["entries"] = har["log"]["entries"][:1]
    refused = client.post("/api/fold", content=json.dumps(har).encode())
    assert refused.status_code == 400 and "none is a streamed response" in refused.text


def test_arrival_times_reach_the_page_when_the_input_has_them() -> None:
    from starlette.testclient import TestClient

    from streamfold.web.app import create_app

    inputs = Path(__file__).resolve().parents[1] / "inputs"
    client = TestClient(create_app(), base_url="http://127.0.0.1")
    view = client.post("/api/fold", content=(inputs / "timestamped.log").read_bytes()).json()
    assert len(view["arrivals"]) == len(view["frames"]) and view["arrivals"] == sorted(view["arrivals"])
    assert abs(view["stream_timing"]["first_text"] - 0.412) < 1e-6 and view["stream_timing"]["ttft"] is None
    plain = client.post("/api/fold", content=(inputs / "raw-body.sse").read_bytes()).json()
    assert "arrivals" not in plain
