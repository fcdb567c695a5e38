"""Issue 20, part 3: `streamfold web --host 0.0.0.0` served any machine that sent `Host:
localhost:PORT`, and `streamfold record --host 0.0.0.0` printed no warning and forwarded any remote
request to the upstream with the caller's credentials. A server of streamfold bound off loopback now
requires a per-run access token (printed in its URL) on every request, and says on stderr what that
protects and what it does not (plain HTTP). Loopback binds stay tokenless.

Every server here is bound to 0.0.0.0 on this machine and reached through 127.0.0.1: a request
without the token, whatever its Host, is refused; with it, served.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from proxy_rig import record_process, stop
from proxy_upstream import OPENAI, Upstream
from streamfold.fronts.serving import admit, is_loopback_address
from streamfold.store import list_exchanges
from streamfold.web.access import cookie_name
from streamfold.web.app import create_app
from streamfold.web.server import start_in_thread as start_web

#: Real servers and `streamfold` processes over sockets and pipes (tests/conftest.py: CI runs them on one Python).
pytestmark = pytest.mark.server

WAIT = 60.0
CAPTURE = 'data: {"choices":[{"index":0,"delta":{"content":"served"}}]}\n\ndata: [DONE]\n\n'


def test_what_counts_as_loopback() -> None:
    assert all(map(is_loopback_address, ["127.0.0.1", "127.8.9.1", "localhost", "::1", "[::1]"]))
    assert not any(map(is_loopback_address, ["0.0.0.0", "::", "192.168.1.4", "example.com", ""]))


def test_admit_takes_the_token_off_what_the_app_sees() -> None:
    scope = {"type": "http", "path": "/t/T0K/v1/chat", "raw_path": b"/t/T0K/v1/chat", "headers": [(b"host", b"h")]}
    assert admit(scope, None) is scope
    admitted = admit(scope, "T0K")
    assert admitted is not None and (admitted["path"], admitted["raw_path"]) == ("/v1/chat", b"/v1/chat")
    assert admit({**scope, "path": "/t/T0K", "raw_path": b"/t/T0K"}, "T0K")["path"] == "/"  # type: ignore[index]
    assert admit(scope, "other") is None
    assert admit({**scope, "path": "/t/T0Kx/v1", "raw_path": b"/t/T0Kx/v1"}, "T0K") is None
    assert admit({**scope, "headers": [(b"x-streamfold-token", b"T0K")]}, "other") is None
    header = admit({**scope, "path": "/v1", "raw_path": b"/v1", "headers": [(b"X-Streamfold-Token", b"T0K")]}, "T0K")
    assert header is not None and header["headers"] == []  # neither forwarded nor recorded
    bearer = {**scope, "path": "/v1", "raw_path": b"/v1", "headers": [(b"authorization", b"Bearer T0K")]}
    assert admit(bearer, "T0K") is None and admit(bearer, "T0K", bearer=True) is not None


# -- the page -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def page_off_loopback() -> Iterator[tuple[str, int]]:
    with start_web(create_app(token="page-token"), host="0.0.0.0") as server:
        yield "page-token", int(server.url.split(":")[2].split("/")[0])


def test_the_page_off_loopback_refuses_requests_without_its_token(page_off_loopback: tuple[str, int]) -> None:
    _, port = page_off_loopback
    base = f"http://127.0.0.1:{port}"
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"192.0.2.7:{port}", "evil.example"):
        for path in ("/", "/api/meta", "/static/app.js"):
            refused = httpx.get(base + path, headers={"Host": host}, timeout=WAIT)
            assert refused.status_code == 401, (host, path)
            assert "access token" in refused.json()["error"]
        refused = httpx.post(base + "/api/fold", content=CAPTURE, headers={"Host": host}, timeout=WAIT)
        assert refused.status_code == 401
    wrong = httpx.get(base + "/api/meta", headers={"Authorization": "Bearer nope"}, timeout=WAIT)
    assert wrong.status_code == 401
    wrong_cookie = httpx.get(base + "/api/meta", cookies={cookie_name(port): "nope"}, timeout=WAIT)
    assert wrong_cookie.status_code == 401


def test_the_page_off_loopback_serves_its_token_by_url_cookie_and_header(page_off_loopback: tuple[str, int]) -> None:
    token, port = page_off_loopback
    network = f"192.0.2.7:{port}"  # any name this machine is reached by
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"Host": network}, timeout=WAIT) as browser:
        traded = browser.get("/", params={"token": token})
        assert traded.status_code == 303 and traded.headers["location"] == "/"
        assert f"{cookie_name(port)}={token}" in traded.headers["set-cookie"]
        assert "HttpOnly" in traded.headers["set-cookie"] and "SameSite=Strict" in traded.headers["set-cookie"]
        assert browser.get("/").status_code == 200  # the cookie from now on
        assert browser.get("/api/meta").json()["version"]
        view = browser.post("/api/fold", content=CAPTURE, headers={"Origin": f"http://{network}"})
        assert view.status_code == 200 and view.json()["result"]["choices"][0]["content"] == "served"
        other = browser.post("/api/fold", content=CAPTURE, headers={"Origin": "http://evil.example"})
        assert other.status_code == 403
    for headers in ({"Authorization": f"Bearer {token}"}, {"X-Streamfold-Token": token}):
        assert httpx.get(f"http://127.0.0.1:{port}/api/meta", headers=headers, timeout=WAIT).status_code == 200
    assert httpx.post(f"http://127.0.0.1:{port}/api/fold", params={"token": token}, content=CAPTURE,
                      timeout=WAIT).status_code == 200


def test_the_page_on_loopback_needs_no_token() -> None:
    with start_web(create_app()) as server:
        assert httpx.get(server.url + "api/meta", timeout=WAIT).status_code == 200
        assert httpx.get(server.url + "api/meta", headers={"Host": "192.0.2.7"}, timeout=WAIT).status_code == 403


def read_first_line(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    return process.stdout.readline().strip()


def test_streamfold_web_on_0000_prints_the_token_and_warns() -> None:
    process = subprocess.Popen([sys.executable, "-m", "streamfold", "web", "--host", "0.0.0.0", "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        match = re.match(r"streamfold web: (http://127\.0\.0\.1:(\d+)/)\?token=([\w-]{20,})  ", read_first_line(process))
        assert match, "no URL with a token"
        url, token = match.group(1), match.group(3)
        assert httpx.get(url + "api/meta", headers={"Host": "localhost:" + match.group(2)},
                         timeout=WAIT).status_code == 401
        assert httpx.get(url + "api/meta", headers={"Authorization": f"Bearer {token}"},
                         timeout=WAIT).status_code == 200
    finally:
        process.terminate()
        _, err = process.communicate(timeout=WAIT)
    assert "off loopback" in err and "access token" in err and "plain HTTP" in err
    assert "--host" in subprocess.run([sys.executable, "-m", "streamfold", "web", "--help"], capture_output=True,
                                      text=True, timeout=WAIT).stdout


# -- the recording proxy -------------------------------------------------------------------


def test_streamfold_record_on_0000_forwards_only_requests_with_its_token(upstream: tuple[Upstream, str],
                                                                         tmp_path: Path) -> None:
    app, target = upstream
    db = str(tmp_path / "record.sqlite")
    process = record_process(target, db, subprocess.PIPE, "--host", "0.0.0.0")
    try:
        assert process.stdout is not None
        first = process.stdout.readline().decode().strip()
        match = re.fullmatch(r"streamfold record: listening on http://0\.0\.0\.0:(\d+)/t/([\w-]{20,}) -> (\S+)", first)
        assert match and match.group(3) == target, first
        port, token = match.group(1), match.group(2)
        local = f"http://127.0.0.1:{port}"
        key = {"Authorization": "Bearer sk-callers-own-key"}
        for host in (f"localhost:{port}", f"192.0.2.7:{port}"):
            refused = httpx.post(f"{local}/v1/chat/completions", content=b"{}", timeout=WAIT,
                                 headers={**key, "Host": host})
            assert refused.status_code == 401 and "access token" in refused.text
        assert httpx.post(f"{local}/t/wrong-token/v1/chat/completions", content=b"{}", headers=key,
                          timeout=WAIT).status_code == 401
        assert app.requests == []  # nothing was forwarded
        served = httpx.post(f"{local}/t/{token}/v1/chat/completions", content=b'{"stream": true}', headers=key,
                            timeout=WAIT)
        assert served.status_code == 200 and served.content == OPENAI
        header = httpx.post(f"{local}/v1/chat/completions", content=b'{"stream": true}',
                            headers={**key, "X-Streamfold-Token": token, "Host": f"192.0.2.7:{port}"}, timeout=WAIT)
        assert header.status_code == 200 and header.content == OPENAI
        assert [request["path"] for request in app.requests] == ["/v1/chat/completions"] * 2
        assert not any(name.lower() == "x-streamfold-token" for request in app.requests
                       for name, _ in request["headers"])
    finally:
        err = stop(process)
    assert "off loopback" in err and "plain HTTP" in err and target in err
    rows = list_exchanges(db)
    assert len(rows) == 2 and all(token not in row["url"] for row in rows)
    assert all(row["url"] == f"{target}/v1/chat/completions" for row in rows)


# -- the replay server ---------------------------------------------------------------------

def test_streamfold_serve_on_0000_answers_only_requests_with_its_token(tmp_path: Path) -> None:
    capture = tmp_path / "reply.sse"
    capture.write_text(CAPTURE)
    process = subprocess.Popen([sys.executable, "-m", "streamfold", "serve", str(capture), "--host", "0.0.0.0",
                                "--speed", "max"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = read_first_line(process)
        match = re.fullmatch(r"http://0\.0\.0\.0:(\d+)/t/([\w-]{20,})", first)
        assert match, first
        port, token = match.group(1), match.group(2)
        local = f"http://127.0.0.1:{port}"
        for host in (f"localhost:{port}", f"192.0.2.7:{port}"):
            refused = httpx.post(f"{local}/v1/chat/completions", headers={"Host": host}, timeout=WAIT)
            assert refused.status_code == 401 and "access token" in refused.json()["error"]["message"]
        assert httpx.get(f"{local}/_streamfold/captures", timeout=WAIT).status_code == 401
        served = httpx.post(f"{local}/t/{token}/v1/chat/completions", timeout=WAIT)
        assert served.status_code == 200 and served.text == CAPTURE
        expect = served.headers["x-streamfold-expect"]
        assert expect.startswith(f"/t/{token}/_streamfold/expect")
        assert httpx.get(local + expect, timeout=WAIT).json()["choices"][0]["content"] == "served"
        for headers in ({"X-Streamfold-Token": token}, {"Authorization": f"Bearer {token}"}):
            assert httpx.post(f"{local}/v1/chat/completions", headers=headers, timeout=WAIT).text == CAPTURE
        openai = pytest.importorskip("openai")
        with openai.OpenAI(base_url=f"{local}/t/{token}/v1", api_key="unused", max_retries=0) as client:
            chunks = list(client.chat.completions.create(model="m", messages=[], stream=True))
        assert "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices) == "served"
    finally:
        process.terminate()
        _, err = process.communicate(timeout=WAIT)
    assert "off loopback" in err and "plain HTTP" in err
