"""`streamfold frames` prints its rows as the capture folds (issue 11: 100k frames took 86 s
and 541 MB before the first row, all rendered by one rich Table at the end). The rows are
made slice by slice (`services.rows.fold_rows`) and are exactly `frame_rows` of the Result,
however the body is sliced; the table is written a batch at a time, no row kept."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

import streamfold
from streamfold.cli import cli
from streamfold.cli.frame_table import FrameTable
from streamfold.services.rows import RowBounds, fold_rows, frame_rows

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = sorted(p for d in ("tests/captures", "examples") for p in (ROOT / d).rglob("*") if p.is_file())


def chat(count: int) -> bytes:
    chunk = ('data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,'
             '"delta":{"content":"w%d "},"finish_reason":null}]}\n\n')
    return b"".join((chunk % index).encode() for index in range(count)) + b"data: [DONE]\n\n"


def streamed(body: bytes, slices: tuple[int, int]) -> tuple[list[dict[str, Any]], list[int], streamfold.Result]:
    rows: list[dict[str, Any]] = []
    batches: list[int] = []

    def take(batch: list[dict[str, Any]], bounds: RowBounds) -> None:
        assert all(row["index"] < bounds.index and row["offset"] <= bounds.offset for row in batch)
        rows.extend(batch)
        batches.append(len(batch))

    result = fold_rows(body, take, slices=slices)
    return rows, batches, result


@pytest.mark.parametrize("slices", [(16 * 1024, 256 * 1024), (7, 61), (1, 1)], ids=["default", "odd", "bytes"])
def test_the_rows_as_they_fold_are_the_rows_of_the_result(slices: tuple[int, int]) -> None:
    for path in CAPTURES if slices != (1, 1) else CAPTURES[::7]:
        body = path.read_bytes()
        rows, _, result = streamed(body, slices)
        assert rows == list(frame_rows(streamfold.fold(body))), path
        assert result.to_dict() == streamfold.fold(body).to_dict(), path


def test_rows_come_before_the_fold_ends() -> None:
    body = chat(5000)
    rows, batches, result = streamed(body, (16 * 1024, 256 * 1024))
    assert len(batches) > 3 and batches[0] < 200  # the first 16 KiB: about a hundred rows, at once
    assert [row["index"] for row in rows] == list(range(len(result.frames)))


def test_rows_wait_for_the_dialect_then_come_in_order() -> None:
    # Payloads no dialect claims wait (up to a window) for one that does; their rows wait with them.
    body = b"".join(b'data: {"x":%d}\n\n' % i for i in range(5)) + chat(50)
    rows, batches, _ = streamed(body, (40, 40))
    assert batches[0] >= 6  # the five unclaimed frames came with the first the dialect claimed
    assert [row["index"] for row in rows] == list(range(56))
    assert rows == list(frame_rows(streamfold.fold(body)))


def table(body: bytes, width: int = 100, color: bool = False) -> tuple[str, int]:
    out = io.StringIO()
    writes = 0
    console = Console(width=width, force_terminal=color, no_color=not color, color_system="standard" if color else None)
    frame_table = FrameTable(console, out)

    def add(rows: list[dict[str, Any]], bounds: RowBounds) -> None:
        nonlocal writes
        frame_table.add(rows, bounds)
        writes += 1

    fold_rows(body, add)
    return out.getvalue(), writes


def test_the_table_is_written_a_slice_at_a_time_one_line_per_frame() -> None:
    text, writes = table(chat(5000))
    lines = text.splitlines()
    assert writes > 3 and len(lines) == 5002
    assert lines[0].split() == ["#", "line", "offset", "event", "kind", "summary"]
    assert lines[1].split() == ["0", "1", "0", "json", 'content', '"w0', '"']
    assert lines[-1].split()[-2:] == ["done", "[DONE]"]
    # Sized for the largest values up front: every row has its columns at the same places.
    assert len({line.index("json") for line in lines[1:-1]}) == 1
    assert all(line == line.rstrip() for line in lines)


def test_the_table_colours_invalid_and_glued_rows() -> None:
    text, _ = table((ROOT / "examples" / "openai-broken.sse").read_bytes(), color=True)
    assert "\x1b[1;31minvalid\x1b[0m" in text and "\x1b[33mglued\x1b[0m" in text
    plain, _ = table((ROOT / "examples" / "openai-broken.sse").read_bytes())
    assert "\x1b" not in plain and " invalid " in plain and " glued " in plain


def test_control_characters_of_the_stream_are_shown_as_escapes() -> None:
    body = b'event: \x1b[31mred\xe2\x80\xae\ndata: {"a":1}\n\ndata: {"a"\x07\x1b[2J\n\n'
    text, _ = table(body, width=200)
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "\\x1b[31mred\\u202e" in text


def test_a_long_summary_ends_in_an_ellipsis_within_the_width() -> None:
    body = b'data: {"choices":[{"index":0,"delta":{"content":"' + "東京 ".encode() * 60 + b'"}}]}\n\n'
    text, _ = table(body, width=60)
    row = text.splitlines()[1]
    assert row.endswith("…") and Console(width=200).measure(row).maximum <= 60


def test_frames_and_jsonl_through_the_command(tmp_path: Path) -> None:
    path = tmp_path / "big.sse"
    path.write_bytes(chat(2000))
    runner = CliRunner()
    out = runner.invoke(cli, ["frames", str(path)], env={"COLUMNS": "100", "NO_COLOR": "1"}).stdout
    assert len(out.splitlines()) == 2002
    out = runner.invoke(cli, ["frames", "--jsonl", str(path)], env={"NO_COLOR": "1"}).stdout
    assert [json.loads(line) for line in out.splitlines()] == list(frame_rows(streamfold.fold(path.read_bytes())))


def test_strict_still_fails_a_streamed_table_with_errors() -> None:
    path = ROOT / "examples" / "openai-broken.sse"
    result = CliRunner().invoke(cli, ["--strict", "frames", str(path)], env={"NO_COLOR": "1"})
    assert result.exit_code == 1 and "invalid" in result.stdout
