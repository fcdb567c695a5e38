"""Timing from arrival times: TTFT, gaps, stalls, throughput, chart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from streamfold import fold
from streamfold.cli import cli
from streamfold.services.inputs import read_capture
from streamfold.services.timing import analyse, sparkline

INPUTS = Path(__file__).resolve().parents[1] / "inputs"


def test_arrivals_ttft_gaps_and_stalls_from_a_timestamped_log() -> None:
    capture = read_capture((INPUTS / "timestamped.log").read_bytes())
    assert capture.reads is not None
    result = fold(capture.body)
    timing = analyse(result, capture.reads, stall=1.0)
    assert len(timing.arrivals) == len(result.frames)
    # A log does not say when the request was sent: no TTFB or TTFT, but the first text after the first
    # byte (frame 0 is the role chunk; frame 1 has the first text).
    assert (timing.origin, timing.ttfb, timing.ttft) == ("first byte", None, None)
    assert timing.first_text == pytest.approx(0.412)
    assert timing.gap_max == pytest.approx(1.85)
    assert timing.gap_median == pytest.approx(0.031)
    (stall,) = timing.stalls
    assert stall.code == "stall" and stall.frame == 7 and stall.details["seconds"] == pytest.approx(1.85)
    assert timing.duration == pytest.approx(timing.arrivals[-1])
    assert timing.chars_per_second == pytest.approx(len(result.choices[0].content) / (timing.duration - 0.412))


def test_trace_time_counts_from_the_request() -> None:
    capture = read_capture((INPUTS / "trace-ascii-time.txt").read_bytes())
    assert capture.started is not None and capture.reads is not None
    timing = analyse(fold(capture.body), capture.reads, start=capture.started)
    assert 0.3 < (timing.ttft or 0) < 0.6  # the local server waited 0.35 s before the first word
    assert timing.origin == "request" and timing.ttfb is not None and 0 <= timing.ttfb < 0.05  # its head came at once
    assert timing.first_text == pytest.approx(timing.ttft - timing.ttfb)


def test_a_frame_split_over_two_reads_arrives_with_the_second() -> None:
    body = b'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'
    timing = analyse(fold(body), ((0, 10.0), (20, 12.5)))
    assert timing.arrivals == (2.5,)


def test_sparkline_shows_the_long_gap() -> None:
    capture = read_capture((INPUTS / "timestamped.log").read_bytes())
    assert capture.reads is not None
    chart = sparkline(analyse(fold(capture.body), capture.reads), width=12)
    assert len(chart) == 12 and chart[6] == "█" and set(chart) - {"█"} <= set("▁▂▃")


def test_show_prints_timing_and_json_carries_it() -> None:
    runner = CliRunner()
    out = runner.invoke(cli, ["show", "--stall", "1", str(INPUTS / "timestamped.log")], env={"COLUMNS": "100"}).stdout
    assert "first text 412 ms after the first byte" in out and "stall (frame 7" in out
    assert "TTFT" not in out and "the input does not say when the request was sent" in out
    data = json.loads(runner.invoke(cli, ["show", "--json", str(INPUTS / "timestamped.log")]).stdout)
    assert data["timing"]["first_text"] == pytest.approx(0.412) and data["timing"]["ttft"] is None
    assert data["timing"]["origin"] == "first byte"
