"""`streamfold.fleet.report`: each canned question, run by real DuckDB over the Parquet files `fold_fleet`
wrote from crafted captures (tests/fleet_crafted.py says what each one is), gives the numbers those
captures make; an empty fleet and one without arrival times give answers too, never an error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fleet_crafted import ANTHROPIC, GATEWAY, make_empty_fleet, make_fleet
from streamfold.fleet import command
from streamfold.fleet.query import open_fleet
from streamfold.fleet.report import REPORTS, report_named, run_report


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_fleet(tmp_path_factory.mktemp("timed"))


def answer(fleet: Path, name: str) -> list[dict[str, Any]]:
    with open_fleet(fleet) as db:
        columns, rows = run_report(db, report_named(name))
    return [dict(zip(columns, row, strict=True)) for row in rows]


def test_the_reports_are_closed_pure_values_with_unique_names() -> None:
    names = [report.name for report in REPORTS]
    assert names == ["outcomes", "tool-arguments", "truncation", "latency", "opaque-state", "findings"]
    assert all(report.question.endswith(".") and report.sql.lstrip().startswith("SELECT") for report in REPORTS)
    with pytest.raises(KeyError):
        report_named("nothing")
    only = next(option for option in command.report.params if option.name == "only")
    assert only.help is not None and all(name in only.help for name in names)


def test_how_streams_ended_by_dialect_model_and_gateway(fleet: Path) -> None:
    rows = {(row["dialect"], row["model"], row["host"], row["outcome_class"]): (row["captures"], row["share"])
            for row in answer(fleet, "outcomes")}
    assert rows == {
        ("openai-chat", "gpt-x", GATEWAY, "complete"): (1, 0.25),
        ("openai-chat", "gpt-x", GATEWAY, "arguments-invalid"): (1, 0.25),
        ("openai-chat", "gpt-x", GATEWAY, "upstream-cut"): (1, 0.25),
        ("openai-chat", "gpt-x", GATEWAY, "client-cut"): (1, 0.25),
        # The reply named no model: the request's counts.
        ("openai-chat", "gpt-req", GATEWAY, "upstream-cut"): (1, 1.0),
        ("anthropic", "claude-x", ANTHROPIC, "complete"): (1, 0.5),
        ("anthropic", "claude-x", ANTHROPIC, "upstream-cut"): (1, 0.5),
        ("unknown", None, GATEWAY, "unreadable"): (1, 1.0),
    }


def test_tool_argument_failures_by_model(fleet: Path) -> None:
    assert answer(fleet, "tool-arguments") == [
        {"model": "gpt-x", "host": GATEWAY, "tool_calls": 3, "failed": 1, "failed_rate": 0.3333}]


def test_truncation_and_missing_usage_by_provider(fleet: Path) -> None:
    """3 of the gateway's 5 streams were cut, 4 reported no usage; the unreadable record is no stream."""
    assert answer(fleet, "truncation") == [
        {"dialect": "openai-chat", "host": GATEWAY, "streams": 5, "cut": 3, "cut_rate": 0.6, "client_cut": 1,
         "upstream_cut": 2, "missing_usage": 4, "missing_usage_rate": 0.8},
        {"dialect": "anthropic", "host": ANTHROPIC, "streams": 2, "cut": 1, "cut_rate": 0.5, "client_cut": 0,
         "upstream_cut": 1, "missing_usage": 0, "missing_usage_rate": 0.0}]


def test_latency_percentiles_and_stalls_where_arrival_times_exist(fleet: Path) -> None:
    """ttfb .1 .3 .2 and ttft .2 .5 .4: p50 the middle one, p95 interpolated 90% of the way to the largest."""
    assert answer(fleet, "latency") == [
        {"model": "gpt-x", "timed": 3, "ttfb_p50": 0.2, "ttfb_p95": 0.29, "ttft_p50": 0.4, "ttft_p95": 0.49,
         "stalled": 1, "stalls": 1}]


def test_opaque_state_carried_and_dropped(fleet: Path) -> None:
    assert answer(fleet, "opaque-state") == [
        {"dialect": "anthropic", "model": "claude-x", "host": ANTHROPIC, "captures": 2, "carrying": 1,
         "opaque_values": 1, "dropping": 1, "dropped_values": 1}]


def test_top_finding_codes_with_an_example_capture_to_open(fleet: Path) -> None:
    source = str(fleet.parent / "records.jsonl")
    assert answer(fleet, "findings") == [
        {"code": "missing-terminal", "kind": "diagnostic", "findings": 4, "captures": 4,
         "capture_id": f"{source}#a2", "location": source, "entry": "7"},
        {"code": "stall", "kind": "diagnostic", "findings": 1, "captures": 1, "capture_id": f"{source}#c3",
         "location": source, "entry": "3"},
        {"code": "tool-args-invalid", "kind": "diagnostic", "findings": 1, "captures": 1,
         "capture_id": f"{source}#c2", "location": source, "entry": "2"}]


def test_a_fleet_without_arrival_times_answers_every_report(tmp_path: Path) -> None:
    fleet = make_fleet(tmp_path, timed=False)
    assert answer(fleet, "latency") == []
    assert report_named("latency").when_empty == "No capture had arrival times."
    assert [row["code"] for row in answer(fleet, "findings")] == ["missing-terminal", "tool-args-invalid"]
    assert answer(fleet, "truncation")[0]["cut_rate"] == 0.6


def test_an_empty_fleet_answers_every_report_with_no_rows(tmp_path: Path) -> None:
    fleet = make_empty_fleet(tmp_path)
    with open_fleet(fleet) as db:
        for report in REPORTS:
            assert run_report(db, report)[1] == [], report.name
