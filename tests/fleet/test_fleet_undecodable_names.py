"""Text that is not UTF-8 on its way into a fleet: a file name's bytes (Python keeps them as lone surrogates),
a JSONL record's lone `\\uD800` escape. Arrow and DuckDB hold only UTF-8, so such text is written as the
`\\xNN` escapes of its bytes, the capture still folds and opens again, and a fleet directory whose own name
is not UTF-8 is refused in one sentence, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fleet_helpers import fold_here, jsonl, rows, sse
from streamfold import fold
from streamfold.fleet.arrow import nest
from streamfold.fleet.layout import FleetError
from streamfold.fleet.query import open_fleet
from streamfold.fleet.reopen import reopen
from streamfold.fleet.text import path_of, row_text
from streamfold.tables import CaptureInfo, table_rows

CHAT = '{"id":"c1","model":"m-1","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"stop"}]}'
NOT_UTF8 = os.fsdecode(b"caf\xe9")  # Latin-1 bytes, as an old archive's file names are

pytestmark = pytest.mark.skipif(sys.platform in ("win32", "darwin"),
                                reason="the file system takes only Unicode names (no bytes that are not UTF-8)")


def test_row_text_writes_lone_surrogates_as_the_escapes_of_their_bytes() -> None:
    assert row_text("plain é") == "plain é"
    assert row_text(NOT_UTF8) == "caf\\xe9"
    assert row_text("a\ud800b") == "a\\xed\\xa0\\x80b"  # a JSON escape's lone half: its CESU-8 bytes
    assert row_text(NOT_UTF8).encode("utf-8")


def test_a_directory_whose_name_is_not_utf8_folds_and_each_capture_opens_again(tmp_path: Path) -> None:
    folder = tmp_path / NOT_UTF8
    folder.mkdir()
    (folder / "one.sse").write_bytes(sse(CHAT))
    out = tmp_path / "out"
    run = fold_here([folder], out)
    assert run.failures == [] and run.captures == 1 and run.unreadable == 0
    [row] = rows(out, "captures")
    assert row["location"] == str(tmp_path / "caf\\xe9" / "one.sse") == row["capture_id"]
    assert row["outcome_class"] == "complete"
    assert path_of(row["location"]) == str(folder / "one.sse")
    assert reopen(row).capture.body == sse(CHAT)
    # The manifest names the SOURCE as given, its bytes kept (JSON's escape of the surrogate reads back as it).
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["runs"][0]["sources"] == [str(folder)]
    # A second run finds the input finished: nothing is folded twice.
    again = fold_here([folder], out)
    assert again.inputs_skipped == 1 and again.captures == 0


def test_a_record_s_lone_surrogate_escapes_are_kept_as_escapes(tmp_path: Path) -> None:
    records = jsonl(tmp_path / "r.jsonl", ['{"id": "x\\udcff", "url": "https://h.example/\\ud800", '
                                           f'"body": {json.dumps(sse(CHAT).decode())}}}'])
    out = tmp_path / "out"
    run = fold_here([records], out)
    assert run.captures == 1 and run.unreadable == 0
    [row] = rows(out, "captures")
    assert row["capture_id"].endswith("#x\\xff") and row["url"] == "https://h.example/\\xed\\xa0\\x80"
    assert row["host"] == "h.example" and row["outcome_class"] == "complete"


def test_a_fleet_directory_whose_name_is_not_utf8_is_refused_in_a_sentence(tmp_path: Path) -> None:
    source = tmp_path / "one.sse"
    source.write_bytes(sse(CHAT))
    out = tmp_path / NOT_UTF8
    with pytest.raises(FleetError, match="not UTF-8 text"):
        fold_here([source], out)
    with pytest.raises(FleetError, match="not UTF-8 text"):
        open_fleet(out)
    done = subprocess.run([sys.executable, "-m", "streamfold", "fleet", "fold", str(source), "--out", str(out)],
                          capture_output=True, timeout=120, check=False)
    assert done.returncode != 0 and b"Traceback" not in done.stderr
    assert b"not UTF-8 text" in done.stderr and not out.exists()


def test_nest_keeps_a_folded_row_whose_text_arrow_refuses() -> None:
    """The last guard: text that reaches the rows by another way than a record (a reader of some input format
    that keeps a lone surrogate) costs its escapes, not the batch."""
    good = table_rows(fold(sse(CHAT)), "clean")
    bad = table_rows(fold(sse(CHAT)), "a\ud800", capture=CaptureInfo(url=f"https://h.example/{NOT_UTF8}"))
    folded = nest([good, bad])
    assert folded.column("capture_id").to_pylist() == ["clean", "a\\xed\\xa0\\x80"]
    assert folded.column("url").to_pylist() == [None, "https://h.example/caf\\xe9"]
    assert folded.column("choices")[1].as_py()[0]["content"] == "Hi"
