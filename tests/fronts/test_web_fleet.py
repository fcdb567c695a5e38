"""`streamfold web --fleet DIR` over a fleet the real `streamfold fleet fold` made from crafted captures
of known outcomes (files, a JSONL of capture records, a capture store): the page's operations without a
browser (filters as DuckDB parameters, bad parameters refused with a sentence, a capture opened again by
its capture_id and refused when its file is gone or changed), then the page in a real Chromium
(Playwright, Debian's /usr/bin/chromium) against a real server on 127.0.0.1.

The browser tests skip, with the reason, when playwright or the browser is missing. Every page fails its
test if it asked for anything off 127.0.0.1 or its script threw.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from starlette.testclient import TestClient

from fleet_helpers import fold_here
from streamfold.fleet.query import open_fleet
from streamfold.fleet.report import REPORTS
from streamfold.store import CaptureStore
from streamfold.web.api import ApiError, PageApi, fold_options
from streamfold.web.app import create_app
from streamfold.web.server import start_in_thread
from watched_page import Watched

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

INPUTS = Path(__file__).resolve().parents[1] / "inputs"
XSS_TEXT = '<img src=x onerror="window.__xss=1">'
XSS_MODEL = "<script>window.__xss=2</script>"


def chat(*pieces: str, model: str = "gpt-4o-mini", end: bool = True) -> bytes:
    """An OpenAI chat stream, one event per piece; `end`: the finish and [DONE] (else it stops short)."""
    def event(delta: dict[str, str], finish: str | None = None) -> bytes:
        chunk = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": model,
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return b"data: " + json.dumps(chunk).encode() + b"\n\n"
    body = event({"role": "assistant", "content": ""}) + b"".join(event({"content": piece}) for piece in pieces)
    return body + (event({}, "stop") + b"data: [DONE]\n\n" if end else b"")


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The inputs, and the fleet `fleet fold` made of them; then one input deleted."""
    root = tmp_path_factory.mktemp("fleet")
    inputs = root / "inputs"
    inputs.mkdir()
    (inputs / "complete.sse").write_bytes(chat("Hello", " fleet"))
    (inputs / "cut.sse").write_bytes(chat("Cut", " short", end=False))
    (inputs / "xss.sse").write_bytes(chat(XSS_TEXT, model=XSS_MODEL))
    (inputs / "gone.sse").write_bytes(chat("Soon", " deleted"))
    (inputs / "changed.sse").write_bytes(chat("Before"))
    records = [{"id": "rec-1", "body": chat("From", " a record", model="gpt-5").decode(), "request_model": "gpt-5",
                "url": "https://gateway.example/v1/chat/completions", "arrivals": [[0, 0.25], [40, 0.5]]},
               {"id": "rec-2", "body": chat("Record", " cut", end=False).decode()}]
    (inputs / "records.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records))
    pq.write_table(pa.table({"id": ["row-a", "row-b"], "body": [chat("Parquet", " row a").decode(),
                                                                chat("Parquet", " row b").decode()]}),
                   inputs / "rows.parquet")
    shutil.copy(INPUTS / "base64-two-streams.har", inputs / "two.har")
    with CaptureStore(str(inputs / "live.sqlite")) as store:
        exchange = store.begin("POST", "https://api.openai.com/v1/chat/completions",
                               [("content-type", "application/json")], b'{"model":"gpt-4o","stream":true}',
                               started=1_765_000_000.0)
        exchange.response(200, [("content-type", "text/event-stream")], at=0.05)
        for number, piece in enumerate((b"From", b" the", b" store")):
            exchange.read(chat(piece.decode(), end=number == 2), at=0.1 + number * 0.2)
        exchange.end("complete", at=1.0)
        store.flush()
    fleet = root / "fleet"
    assert fold_here([inputs], fleet).failures == []
    (inputs / "gone.sse").unlink()
    return {"inputs": inputs, "fleet": fleet}


def capture_id(made: dict[str, Path], name: str, nth: int = 0) -> str:
    with open_fleet(made["fleet"]) as db:
        found = db.execute("SELECT capture_id FROM captures WHERE location LIKE ? ORDER BY capture_id",
                           [f"%{name}%"]).fetchall()
    assert len(found) > nth, name
    return str(found[nth][0])


def outcome_counts(made: dict[str, Path], where: str = "", parameters: list[Any] | None = None) -> dict[str, int]:
    with open_fleet(made["fleet"]) as db:
        return dict(db.execute(f"SELECT outcome_class, count(*) FROM captures {where} GROUP BY ALL",
                               parameters or []).fetchall())


# -- the operations, without a browser -------------------------------------------------------------------------


def test_the_fleet_answers_its_reports_and_the_values_to_filter_by(made: dict[str, Path]) -> None:
    answer = PageApi(fleet_path=made["fleet"]).fleet()
    assert answer["captures"] == sum(outcome_counts(made).values())
    assert [report["name"] for report in answer["reports"]] == [report.name for report in REPORTS]
    assert [report.get("error") for report in answer["reports"]] == [None] * len(REPORTS)
    assert all(report["sql"] for report in answer["reports"])
    assert dict(answer["filters"]["outcome"]) == outcome_counts(made)
    assert "openai-chat" in dict(answer["filters"]["dialect"])
    assert {"gpt-5", XSS_MODEL} <= set(dict(answer["filters"]["model"]))


def test_filters_narrow_the_list_and_its_counts(made: dict[str, Path]) -> None:
    api = PageApi(fleet_path=made["fleet"])
    everything = api.fleet_captures()
    assert everything["total"] == sum(outcome_counts(made).values())
    assert dict(everything["outcomes"]) == outcome_counts(made)
    cut = api.fleet_captures(outcome="upstream-cut")
    assert cut["total"] == outcome_counts(made)["upstream-cut"] >= 2
    assert {row["outcome_class"] for row in cut["rows"]} == {"upstream-cut"}
    narrowed = api.fleet_captures(outcome="complete", model="gpt-5")
    assert [row["capture_id"] for row in narrowed["rows"]] == [capture_id(made, "records.jsonl")]
    # The record had arrival times: its latency is in the histograms.
    assert narrowed["latency"]["ttfb"]["count"] == 1 and sum(b[2] for b in narrowed["latency"]["ttfb"]["bins"]) == 1
    page = api.fleet_captures(offset="1", limit="2")
    assert page["rows"] == everything["rows"][1:3]


def test_a_filter_value_is_a_parameter_never_sql(made: dict[str, Path]) -> None:
    api = PageApi(fleet_path=made["fleet"])
    for hostile in ("' OR 1=1 --", "x') OR TRUE OR ('", "complete'; DROP VIEW captures; --"):
        assert api.fleet_captures(outcome=hostile)["total"] == 0
        assert api.fleet_captures(finding=hostile)["total"] == 0
    assert api.fleet_captures()["total"] == sum(outcome_counts(made).values())


@pytest.mark.parametrize("given, said", [
    ({"limit": "0"}, "limit must be a number of captures from 1 to 500"),
    ({"limit": "501"}, "limit must be"),
    ({"limit": "ten"}, "limit must be"),
    ({"offset": "-1"}, "offset must be a number of captures to skip"),
    ({"offset": "²"}, "offset must be"),
    ({"dialect": "x" * 1001}, "a dialect to filter by is at most 1000 characters"),
])
def test_bad_list_parameters_are_refused_with_a_sentence(made: dict[str, Path], given: dict[str, str],
                                                         said: str) -> None:
    with pytest.raises(ApiError) as refused:
        PageApi(fleet_path=made["fleet"]).fleet_captures(**given)
    assert refused.value.status == 400 and said in refused.value.message


def test_a_capture_opens_by_its_id_from_where_the_fleet_says(made: dict[str, Path]) -> None:
    api = PageApi(fleet_path=made["fleet"])
    for name, text in (("complete.sse", "Hello fleet"), ("records.jsonl", "From a record"),
                       ("live.sqlite", "From the store")):
        view = api.fleet_fold(capture_id(made, name), fold_options())
        assert view["result"]["choices"][0]["content"] == text
        assert view["fleet"]["capture_id"] == capture_id(made, name)
        assert "fingerprint" not in view["fleet"]
    assert api.fleet_body(capture_id(made, "complete.sse")) == (made["inputs"] / "complete.sse").read_bytes()


def test_a_har_entry_and_a_parquet_row_open_as_their_own_capture(made: dict[str, Path]) -> None:
    api = PageApi(fleet_path=made["fleet"])
    contents = [api.fleet_fold(capture_id(made, "rows.parquet", nth), fold_options())["result"]["choices"][0]["content"]
                for nth in (0, 1)]
    assert contents == ["Parquet row a", "Parquet row b"]
    entries = []
    for nth in (0, 1):
        view = api.fleet_fold(capture_id(made, "two.har", nth), fold_options())
        assert view["har"]["entry"] == int(view["fleet"]["entry"])
        entries.append(view["fleet"]["entry"])
    assert entries == ["1", "2"]


def test_every_capture_reopens_as_the_fleet_folded_it(made: dict[str, Path]) -> None:
    api = PageApi(fleet_path=made["fleet"])
    rows = api.fleet_captures(limit="500")["rows"]
    assert len(rows) >= 12
    for row in rows:
        if row["location"].endswith("gone.sse"):
            continue
        view = api.fleet_fold(row["capture_id"], fold_options())
        assert (view["result"]["dialect"], view["result"]["frames"]["total"]) == (row["dialect"], row["frames_total"])
        assert view["fleet"]["outcome_class"] == row["outcome_class"]


def test_a_capture_behind_a_url_opens_through_fsspec(tmp_path: Path) -> None:
    """A memory:// URL stands for s3:// or gs://: the same fsspec path, in this process."""
    fsspec = pytest.importorskip("fsspec")
    from streamfold.fleet.engines import LocalEngine
    from streamfold.fleet.run import fold_fleet

    memory = fsspec.filesystem("memory")
    memory.pipe("/fleet-test/remote.sse", chat("From", " a bucket"))
    try:
        fold_fleet(["memory://fleet-test/"], str(tmp_path / "fleet"), engine=LocalEngine(1))
        api = PageApi(fleet_path=tmp_path / "fleet")
        (row,) = api.fleet_captures()["rows"]
        assert row["location"].startswith("memory://")
        assert api.fleet_fold(row["capture_id"], fold_options())["result"]["choices"][0]["content"] == "From a bucket"
        memory.rm("/fleet-test/remote.sse")
        with pytest.raises(ApiError) as gone:
            api.fleet_fold(row["capture_id"], fold_options())
        assert gone.value.status == 404 and "cannot be opened again" in gone.value.message
    finally:
        if memory.exists("/fleet-test"):
            memory.rm("/fleet-test", recursive=True)


def test_a_capture_gone_or_changed_or_unknown_is_said(made: dict[str, Path]) -> None:
    api = PageApi(fleet_path=made["fleet"])
    with pytest.raises(ApiError) as gone:
        api.fleet_fold(capture_id(made, "gone.sse"), fold_options())
    assert gone.value.status == 404 and "moved or deleted since the fleet was folded" in gone.value.message
    changed = made["inputs"] / "changed.sse"
    original = changed.read_bytes()
    try:
        changed.write_bytes(chat("After", " the", " fold"))
        with pytest.raises(ApiError) as conflict:
            api.fleet_fold(capture_id(made, "changed.sse"), fold_options())
        assert conflict.value.status == 409 and "changed since the fleet was folded" in conflict.value.message
    finally:
        changed.write_bytes(original)
    for unknown in (str(made["inputs"] / "complete.sse") + "x", "/etc/passwd"):
        with pytest.raises(ApiError) as missing:
            api.fleet_fold(unknown, fold_options())
        assert missing.value.status == 404 and "this fleet holds no capture" in missing.value.message
    with pytest.raises(ApiError) as empty:
        api.fleet_fold("", fold_options())
    assert empty.value.status == 400


def test_a_changed_record_is_said_and_its_neighbours_still_open(made: dict[str, Path]) -> None:
    """A record's fingerprint is its own line's: another line changing leaves it openable."""
    api = PageApi(fleet_path=made["fleet"])
    records = made["inputs"] / "records.jsonl"
    original = records.read_text()
    first, second = original.splitlines()
    try:
        records.write_text(first + "\n" + second.replace("Record", "Rewritten") + "\n")
        assert api.fleet_fold(capture_id(made, "records.jsonl", 0), fold_options())["result"]["choices"][0][
            "content"] == "From a record"
        with pytest.raises(ApiError) as changed:
            api.fleet_fold(capture_id(made, "records.jsonl", 1), fold_options())
        assert changed.value.status == 409 and "its line 2 is not the record" in changed.value.message
    finally:
        records.write_text(original)


def test_a_later_run_shows_at_the_next_request(tmp_path: Path) -> None:
    (tmp_path / "one.sse").write_bytes(chat("One"))
    fleet = str(tmp_path / "fleet")

    def fold(name: str) -> None:
        assert fold_here([tmp_path / name], Path(fleet)).failures == []

    fold("one.sse")
    api = PageApi(fleet_path=fleet)
    assert api.fleet()["captures"] == 1 and api.fleet_captures()["total"] == 1
    (tmp_path / "two.sse").write_bytes(chat("Two", end=False))
    fold("two.sse")
    assert api.fleet()["captures"] == 2
    assert dict(api.fleet_captures()["outcomes"]) == {"upstream-cut": 1, "complete": 1}


def test_a_capture_over_the_page_s_limit_is_refused_with_the_limit_to_give(made: dict[str, Path]) -> None:
    with pytest.raises(ApiError) as refused:
        PageApi(fleet_path=made["fleet"], max_size=100).fleet_fold(capture_id(made, "complete.sse"), fold_options())
    assert refused.value.status == 413 and "streamfold web --max-size" in refused.value.message


def test_without_a_fleet_every_fleet_operation_says_how_to_give_one() -> None:
    api = PageApi()
    assert api.meta()["fleet"] is None
    for call in (api.fleet, api.fleet_captures, lambda: api.fleet_fold("a", fold_options())):
        with pytest.raises(ApiError) as refused:
            call()
        assert refused.value.status == 404 and "streamfold web --fleet DIR" in refused.value.message


def test_the_server_adapts_the_operations_and_keeps_its_host_rule(made: dict[str, Path]) -> None:
    client = TestClient(create_app(fleet_path=made["fleet"]), base_url="http://127.0.0.1")
    assert client.get("/api/meta").json()["fleet"] == {"name": "fleet"}
    listed = client.get("/api/fleet/captures", params={"outcome": "complete", "limit": "1"})
    assert listed.status_code == 200 and listed.json()["total"] == outcome_counts(made)["complete"]
    refused = client.get("/api/fleet/captures", params={"limit": "0"})
    assert refused.status_code == 400 and "limit must be" in refused.json()["error"]
    gone = client.get("/api/fleet/fold", params={"id": capture_id(made, "gone.sse")})
    assert gone.status_code == 404 and "moved or deleted" in gone.json()["error"]
    ranged = client.get("/api/fleet/fold", params={"id": capture_id(made, "records.jsonl"), "frames": "range"})
    last = json.loads(ranged.text.strip().splitlines()[-1])
    assert last["view"]["result"]["choices"][0]["content"] == "From a record"
    foreign = client.get("/api/fleet", headers={"host": "evil.example"})
    assert foreign.status_code in (400, 403, 421)


def test_the_command_refuses_a_directory_that_is_no_fleet(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "streamfold", "web", "--fleet", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "is not a fleet directory" in done.stderr and "streamfold fleet fold" in done.stderr


# -- the page, in a real browser -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fleet_server(made: dict[str, Path]) -> Iterator[str]:
    with start_in_thread(create_app(fleet_path=made["fleet"])) as running:
        yield running.url


@pytest.fixture()
def watched(browser: Browser, fleet_server: str) -> Iterator[Watched]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = Watched(context.new_page())
    page.page.goto(fleet_server)
    wait_list(page.page, 1)
    yield page
    context.close()
    page.check()


def wait_list(page: Page, loads: int) -> None:
    page.wait_for_selector(f'body[data-fleet-loads="{loads}"]', state="attached", timeout=20_000)


def listed_ids(page: Page) -> list[str]:
    return list(page.eval_on_selector_all(".fleet-row", "rows => rows.map(r => r.title.split('\\n')[0])"))


def open_row(page: Page, name: str) -> None:
    page.click(f'.fleet-row[title*="{name}"] .fleet-open')


def test_the_page_shows_duckdb_s_outcome_counts_and_filters_narrow_the_list(watched: Watched,
                                                                            made: dict[str, Path]) -> None:
    page = watched.page
    assert page.get_attribute("body", "data-mode") == "fleet"
    shown = dict(page.eval_on_selector_all("#fleet-outcomes .bar", "bars => bars.map(b => [b.dataset.label, "
                                                                   "Number(b.dataset.count)])"))
    assert shown == outcome_counts(made)
    assert len(listed_ids(page)) == sum(shown.values())
    assert page.locator("#fleet-reports .report").count() == len(REPORTS)
    page.select_option('#fleet-filters select[data-filter="outcome"]', "upstream-cut")
    wait_list(page, 2)
    assert len(listed_ids(page)) == outcome_counts(made)["upstream-cut"]
    assert set(page.eval_on_selector_all(".fleet-row", "rows => rows.map(r => r.dataset.outcome)")) == {"upstream-cut"}
    page.select_option('#fleet-filters select[data-filter="model"]', "gpt-5")
    wait_list(page, 3)
    assert listed_ids(page) == [] and page.is_visible("#fleet-empty")
    page.click(".fleet-clear")
    wait_list(page, 4)
    # A bar of the chart filters by its class.
    page.click('#fleet-outcomes .bar[data-label="complete"] rect')
    wait_list(page, 5)
    assert len(listed_ids(page)) == outcome_counts(made)["complete"]
    assert page.input_value('#fleet-filters select[data-filter="outcome"]') == "complete"


@pytest.mark.parametrize("name, text", [("complete.sse", "Hello fleet"), ("records.jsonl", "From a record"),
                                        ("live.sqlite", "From the store")])
def test_one_click_opens_a_capture_in_the_four_stage_view(watched: Watched, made: dict[str, Path], name: str,
                                                          text: str) -> None:
    page = watched.page
    open_row(page, name)
    page.wait_for_selector('body[data-state="ready"][data-fold-count="1"]', timeout=30_000)
    assert page.get_attribute("body", "data-mode") == "inspect"
    assert text in (page.text_content("#result-view") or "")
    assert "Back to the fleet" in page.inner_text("#summary-bar")
    page.click("#summary-bar .fleet-summary button")
    assert page.get_attribute("body", "data-mode") == "fleet"


def test_markup_in_a_fleet_is_only_ever_text(watched: Watched) -> None:
    page = watched.page
    assert XSS_MODEL in page.inner_text("#fleet-rows")
    open_row(page, "xss.sse")
    page.wait_for_selector('body[data-state="ready"][data-fold-count="1"]', timeout=30_000)
    assert XSS_TEXT in (page.text_content("#result-view") or "")
    assert page.evaluate("() => window.__xss") is None
    assert page.locator("img[src='x'], #result-view script, #fleet-rows script").count() == 0


def test_a_capture_whose_file_was_deleted_says_so(watched: Watched) -> None:
    page = watched.page
    open_row(page, "gone.sse")
    page.wait_for_selector("#alert:not([hidden])", timeout=20_000)
    assert "moved or deleted since the fleet was folded" in page.inner_text("#alert")
    page.wait_for_selector('body[data-mode="fleet"]', state="attached", timeout=10_000)
