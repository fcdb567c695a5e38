"""Issue 20, part 3: secrets in query strings under other spellings were stored verbatim. A parameter's
name counts as a server decodes it (percent-decoded, `[]` suffix, NULs and case ignored, `;` a
separator too), and `jwt`, `token`, `access_token`, `bearer`, `signature`, `sig` are credentials like
`key`. Checked on the function every writer calls, and on the bytes of real store files written by the
store's API, the recording proxy between a real client and a real upstream, and the in-process
recorder; the mitmproxy addon's log line uses that same function."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

import streamfold.capture.mitmproxy_addon as addon
from proxy_upstream import OPENAI, Upstream
from streamfold.proxy.app import RecordingProxy
from streamfold.proxy.server import start_in_thread
from streamfold.store import CaptureStore, get_exchange, list_exchanges, redact
from streamfold.store.redact import is_secret_parameter, redact_url

SECRET = "S3cr3tV4lueThatMustNotBeStored"

# (the query as sent, the query as stored): each spelling from the issue, then the names it adds.
SPELLINGS = [
    (f"x=1;key={SECRET}", "x=1;key=REDACTED"),
    (f"key[]={SECRET}", "key[]=REDACTED"),
    (f"key%00={SECRET}", "key%00=REDACTED"),
    (f"jwt={SECRET}", "jwt=REDACTED"),
    (f"bearer={SECRET}", "bearer=REDACTED"),
    (f"token={SECRET}&access_token={SECRET}", "token=REDACTED&access_token=REDACTED"),
    (f"signature={SECRET};sig={SECRET}", "signature=REDACTED;sig=REDACTED"),
    (f"KEY%5B%5D={SECRET}&alt=sse", "KEY%5B%5D=REDACTED&alt=sse"),
    (f"%6Bey={SECRET}", "%6Bey=REDACTED"),
    (f"auth[token]={SECRET}&data[x]=1", "auth[token]=REDACTED&data[x]=1"),
    (f"JWT%00%00[]={SECRET}", "JWT%00%00[]=REDACTED"),
]
#: The issue's own five, for the recorders that stream each reply (half a second each).
ISSUE = SPELLINGS[:5]


@pytest.mark.parametrize("query, stored", SPELLINGS)
def test_each_spelling_is_redacted_and_the_rest_kept_byte_for_byte(query: str, stored: str) -> None:
    assert redact_url(f"https://api.example.com/v1/models/m:streamGenerateContent?{query}#top") == (
        f"https://api.example.com/v1/models/m:streamGenerateContent?{stored}#top")


def test_what_is_not_a_credential_is_kept() -> None:
    kept = "https://h/v1?alt=sse&max_tokens=5&keyword=x&monkey=1;data[]=2&tokens=3&idempotency-key=4"
    assert redact_url(kept) == kept
    assert not any(is_secret_parameter(name) for name in ("alt", "keyword", "monkey", "data[]", "max_tokens"))


def test_a_fragment_that_holds_parameters_is_redacted_too() -> None:
    assert redact_url(f"https://h/cb#access_token={SECRET}&state=1") == "https://h/cb#access_token=REDACTED&state=1"
    assert redact_url("https://h/page#section-2") == "https://h/page#section-2"


def stored_bytes(db: Path) -> bytes:
    """Every byte of the store and its -wal and -shm files."""
    return b"".join(path.read_bytes() for path in db.parent.glob(db.name + "*"))


def test_the_stores_file_never_holds_the_secret(tmp_path: Path) -> None:
    db = tmp_path / "captures.sqlite"
    with CaptureStore.open(str(db)) as store:
        for query, _ in SPELLINGS:
            exchange = store.begin("POST", f"https://api.example.com/v1/chat?{query}", (("x-jwt", SECRET),), b"{}")
            exchange.response(200, [("content-type", "text/event-stream")])
            exchange.read(OPENAI)
            exchange.end("complete")
        store.flush()
        assert SECRET.encode() not in stored_bytes(db)
    rows = list_exchanges(str(db))
    assert sorted(row["url"].partition("?")[2] for row in rows) == sorted(stored for _, stored in SPELLINGS)
    assert all(row["complete"] for row in rows)  # the rest still folds
    assert dict(get_exchange(str(db), rows[0]["id"]).request_headers)["x-jwt"] == "REDACTED"



@pytest.mark.server
def test_the_recording_proxy_forwards_the_secret_and_stores_it_redacted(upstream: tuple[Upstream, str],
                                                                         tmp_path: Path) -> None:
    app, target = upstream
    db = tmp_path / "proxy.sqlite"
    with CaptureStore.open(str(db)) as store, start_in_thread(RecordingProxy(target, store, echo=lambda _: None)) \
            as proxy:
        for query, _ in ISSUE:
            response = httpx.post(f"{proxy.url}/v1/chat/completions?{query}", content=b'{"stream": true}',
                                  timeout=30)
            assert response.status_code == 200 and response.content == OPENAI
        store.flush()
        # The upstream needs the credential: it is forwarded as the client sent it.
        assert [request["query"].decode() for request in app.requests] == [query for query, _ in ISSUE]
    assert SECRET.encode() not in stored_bytes(db)
    rows = list_exchanges(str(db))
    assert sorted(row["url"].partition("?")[2] for row in rows) == sorted(stored for _, stored in ISSUE)
    assert {row["dialect"] for row in rows} == {"openai-chat"}


@pytest.mark.server
def test_the_in_process_recorder_stores_it_redacted(upstream: tuple[Upstream, str], tmp_path: Path) -> None:
    httpx2 = pytest.importorskip("httpx2")
    from streamfold.capture import RecordingTransport

    _, target = upstream
    db = tmp_path / "inproc.sqlite"
    with CaptureStore.open(str(db)) as store:
        with httpx2.Client(transport=RecordingTransport(httpx2.HTTPTransport(), store)) as client:
            for query, _ in ISSUE:
                with client.stream("POST", f"{target}/v1/chat/completions?{query}", content=b"{}") as response:
                    assert response.read() == OPENAI
        store.flush()
    assert SECRET.encode() not in stored_bytes(db)
    assert len(list_exchanges(str(db))) == len(ISSUE)


def test_every_writer_redacts_with_the_one_function() -> None:
    """The mitmproxy addon (standard library only, tests/project/test_layers.py) prints its log line with
    the store's own function; the store's writer calls it for everything it writes."""
    assert addon.redact_url is redact.redact_url
    assert CaptureStore.begin.__globals__["redact_url"] is redact.redact_url
