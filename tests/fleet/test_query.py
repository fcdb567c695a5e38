"""`streamfold fleet query` and `streamfold fleet report`, run as the real program in a subprocess over a
fleet `fold_fleet` wrote from crafted captures (tests/fleet_crafted.py): every output format, the table a
terminal gets, a SQL error, a directory that is no fleet, an empty fleet, and the reports as JSON equal to
running their SQL ourselves."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from fleet_crafted import GATEWAY, make_empty_fleet, make_fleet
from streamfold.fleet.query import open_fleet, rows_of
from streamfold.fleet.report import REPORTS

pytestmark = pytest.mark.server  # streamfold processes, as the commands run (the reports' numbers: test_report.py)

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1", "COLUMNS": "80"}
ENV.pop("TTY_COMPATIBLE", None)

CUT = ("SELECT capture_id, outcome_class, ttfb FROM captures WHERE host = 'gw.example.test' "
       "ORDER BY capture_id")
#: One value of each kind DuckDB hands back that the formats must spell.
KINDS = ("SELECT TIMESTAMPTZ '2026-12-07 02:30:00+00' AS t, [1, 2] AS l, {'a': 1} AS s, 1.5::DECIMAL(4, 2) AS d, "
         "'{\"x\": [1]}'::JSON AS j, 'nan'::DOUBLE AS n, NULL AS z, true AS b")


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_fleet(tmp_path_factory.mktemp("fleet"))


def streamfold(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "streamfold", *args], capture_output=True, text=True, env=ENV,
                          cwd=cwd, timeout=120, check=False)


def on_a_terminal(*args: str) -> str:
    """What the program writes to a real terminal (a pty) 80 columns wide, colour codes taken out."""
    pty = pytest.importorskip("pty")
    leader, follower = pty.openpty()
    done = subprocess.Popen([sys.executable, "-m", "streamfold", *args], stdout=follower, stderr=subprocess.PIPE,
                            env=ENV)
    os.close(follower)
    out = bytearray()
    while True:
        try:
            read = os.read(leader, 65536)
        except OSError:  # Linux: EIO once the program has closed the terminal
            break
        if not read:
            break
        out += read
    os.close(leader)
    assert done.wait(timeout=120) == 0
    assert done.stderr is not None
    done.stderr.close()
    return re.sub(r"\x1b\[[0-9;]*m", "", out.decode().replace("\r\n", "\n"))


def expected_rows(fleet: Path, sql: str) -> tuple[list[str], list[tuple[object, ...]]]:
    with open_fleet(fleet) as db:
        return rows_of(db, sql)


def test_piped_it_writes_csv_with_a_header(fleet: Path) -> None:
    done = streamfold("fleet", "query", str(fleet), CUT)
    assert done.returncode == 0 and done.stderr == ""
    columns, rows = expected_rows(fleet, CUT)
    assert list(csv.reader(io.StringIO(done.stdout))) == [
        columns, *[[row[0], row[1], "" if row[2] is None else repr(row[2])] for row in rows]]
    assert [row[1] for row in rows] == ["unreadable", "complete", "arguments-invalid", "upstream-cut", "client-cut", "upstream-cut"]


def test_each_kind_of_value_in_json_jsonl_and_csv(fleet: Path) -> None:
    as_json = streamfold("fleet", "query", str(fleet), KINDS, "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    row = {"t": "2026-12-07T02:30:00+00:00", "l": [1, 2], "s": {"a": 1}, "d": 1.5, "j": {"x": [1]}, "n": None,
           "z": None, "b": True}
    assert json.loads(as_json.stdout) == [row]
    as_lines = streamfold("fleet", "query", str(fleet), f"{KINDS} UNION ALL {KINDS}", "--format", "jsonl")
    assert [json.loads(line) for line in as_lines.stdout.splitlines()] == [row, row]
    as_csv = streamfold("fleet", "query", str(fleet), KINDS, "--format", "csv")
    assert list(csv.reader(io.StringIO(as_csv.stdout))) == [
        ["t", "l", "s", "d", "j", "n", "z", "b"],
        ["2026-12-07T02:30:00+00:00", "[1,2]", '{"a":1}', "1.5", '{"x": [1]}', "nan", "", "true"]]


def test_json_of_no_rows_is_an_empty_array(fleet: Path) -> None:
    done = streamfold("fleet", "query", str(fleet), "SELECT * FROM captures WHERE false", "--format", "json")
    assert done.returncode == 0 and json.loads(done.stdout) == []


def test_parquet_goes_to_a_file_with_its_types(fleet: Path, tmp_path: Path) -> None:
    target = tmp_path / "cut.parquet"
    done = streamfold("fleet", "query", str(fleet), CUT, "--format", "parquet", "--output", str(target))
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""
    table = pq.read_table(target)
    columns, rows = expected_rows(fleet, CUT)
    assert table.column_names == columns and [tuple(row.values()) for row in table.to_pylist()] == rows
    assert str(table.schema.field("ttfb").type) == "double"
    refused = streamfold("fleet", "query", str(fleet), CUT, "--format", "parquet")
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr == "streamfold: --format parquet writes a file: give it with --output FILE\n"


def test_output_writes_csv_to_the_file(fleet: Path, tmp_path: Path) -> None:
    target = tmp_path / "answer.csv"
    done = streamfold("fleet", "query", str(fleet), "SELECT count(*) AS captures FROM captures", "-o", str(target))
    assert done.returncode == 0 and done.stdout == ""
    assert target.read_text(encoding="utf-8") == "captures\n8\n"


def test_on_a_terminal_a_table_with_stream_text_escaped_and_long_cells_cut(fleet: Path) -> None:
    out = on_a_terminal("fleet", "query", str(fleet),
                        "SELECT c.capture_id, content, repeat('x', 60) AS wide, c.model FROM choices "
                        "JOIN captures AS c USING (capture_id) WHERE content LIKE '%red%'")
    assert "\x1b[31m" not in out
    assert "\\x1b[31mred" in out
    assert "x" * 60 not in out and "…" in out
    assert re.search(r"capture_id\s+content\s+wide\s+model", out)
    assert "NULL" in out and "1 row" in out
    many = on_a_terminal("fleet", "query", str(fleet), "SELECT range AS n FROM range(1500)")
    assert many.splitlines()[-2:] == ["1,000 rows", "More rows follow: --format csv or --output FILE gives them all."]
    assert re.search(r"^\s*999$", many, re.MULTILINE) and not re.search(r"^\s*1000$", many, re.MULTILINE)


def test_the_session_spills_to_the_system_temporary_directory_and_speaks_utc(fleet: Path, tmp_path: Path) -> None:
    """DuckDB's default spill directory for a database in memory is `.tmp` in the working directory."""
    done = streamfold("fleet", "query", str(fleet), "SELECT current_setting('temp_directory') AS spill, "
                      "current_setting('TimeZone') AS zone", "--format", "json", cwd=tmp_path)
    answer = json.loads(done.stdout)[0]
    assert answer["zone"] == "UTC"
    assert Path(answer["spill"]).parent == Path(tempfile.gettempdir())
    assert list(tmp_path.iterdir()) == []


def test_a_sql_error_is_one_line_and_exit_2(fleet: Path) -> None:
    for sql, said in (("SELEC 1", "Parser Error"), ("SELECT * FROM nothing_here", "Catalog Error")):
        done = streamfold("fleet", "query", str(fleet), sql)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.startswith(f"streamfold: the query failed: {said}")
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_a_directory_that_is_no_fleet_is_one_line_and_exit_2(tmp_path: Path) -> None:
    for args in (("query", str(tmp_path), "SELECT 1"), ("report", str(tmp_path))):
        done = streamfold("fleet", *args)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.startswith(f"streamfold: '{tmp_path}' is not a fleet directory")
        assert done.stderr.count("\n") == 1


def test_an_empty_fleet_answers(tmp_path: Path) -> None:
    fleet = make_empty_fleet(tmp_path)
    done = streamfold("fleet", "query", str(fleet), "SELECT count(*) AS captures FROM captures")
    assert done.returncode == 0 and done.stdout == "captures\n0\n"
    report = streamfold("fleet", "report", str(fleet))
    assert report.returncode == 0, report.stderr
    for item in REPORTS:
        assert item.title in report.stdout and item.when_empty in report.stdout


def test_report_json_equals_each_report_sql_run_directly(fleet: Path) -> None:
    done = streamfold("fleet", "report", str(fleet), "--format", "json")
    assert done.returncode == 0, done.stderr
    reports = json.loads(done.stdout)
    assert [item["name"] for item in reports] == [report.name for report in REPORTS]
    with open_fleet(fleet) as db:
        for item in reports:
            relation = db.sql(item["sql"])
            assert item["columns"] == relation.columns
            assert item["rows"] == [dict(zip(relation.columns, row, strict=True)) for row in relation.fetchall()]
    assert next(item for item in reports if item["name"] == "truncation")["rows"][0]["cut_rate"] == 0.6


def test_report_prints_each_question_with_its_sql(fleet: Path, tmp_path: Path) -> None:
    done = streamfold("fleet", "report", str(fleet), "--only", "tool-arguments")
    assert done.returncode == 0, done.stderr
    report = next(item for item in REPORTS if item.name == "tool-arguments")
    lines = done.stdout.splitlines()
    assert lines[:2] == [report.title, report.question]
    assert report.sql in done.stdout  # whole: off a terminal nothing is wrapped
    assert re.search(rf"gpt-x\s+{re.escape(GATEWAY)}\s+3\s+1\s+0\.3333", done.stdout)
    untimed = make_fleet(tmp_path, timed=False)
    latency = streamfold("fleet", "report", str(untimed), "--only", "latency")
    assert latency.stdout.splitlines()[-1] == "No capture had arrival times."
    unknown = streamfold("fleet", "report", str(fleet), "--only", "speed")
    assert unknown.returncode == 2 and unknown.stderr.startswith("streamfold: no report is named 'speed'")
