"""Stored captures through the command line: every command that takes FILE takes
PATH.sqlite#ID, `streamfold captures` lists them, and each export (raw, HAR,
curl trace) reads back to the same result (the trace with the same arrival times)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from store_helpers import BODIES, CAPTURES, SECRET, record, split
from streamfold.cli import cli
from streamfold.services import load
from streamfold.store import CaptureStore


def run(*args: str, input: bytes | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), input=input, env={"COLUMNS": "100", "NO_COLOR": "1"})
    return result.exit_code, result.stdout, result.stderr


def run_bytes(*args: str) -> bytes:
    result = CliRunner().invoke(cli, list(args), env={"COLUMNS": "100", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.stderr
    return result.stdout_bytes


@pytest.fixture
def stored(tmp_path: Path) -> tuple[str, list[int]]:
    db = str(tmp_path / "captures.sqlite")
    with CaptureStore.open(db) as store:
        ids = [record(store, path.read_bytes(), seed, headers=(("x-api-key", SECRET),))
               for seed, path in enumerate(BODIES)]
    return db, ids


def _without_input_notes(out: dict[str, object]) -> dict[str, object]:
    """The result without the notes on where it was read from (store, HAR, trace)."""
    diagnostics = out["diagnostics"]
    assert isinstance(diagnostics, list)
    return {**out, "diagnostics": [d for d in diagnostics if not str(d["code"]).startswith(("input-", "store-"))]}


def test_show_json_and_frames_on_a_stored_capture_match_folding_its_bytes(stored: tuple[str, list[int]],
                                                                          tmp_path: Path) -> None:
    db, ids = stored
    for exchange_id, path in zip(ids, BODIES, strict=True):
        raw = tmp_path / path.name
        raw.write_bytes(path.read_bytes())
        code, out, err = run("show", "--json", f"{db}#{exchange_id}")
        assert code == 0, err
        from_store, from_file = json.loads(out), json.loads(run("show", "--json", str(raw))[1])
        timing = from_store.pop("timing")
        assert timing["duration"] == split(path.read_bytes(), exchange_id - 1)[-1][1]
        assert _without_input_notes(from_store) == _without_input_notes(from_file)
        assert run("frames", f"{db}#{exchange_id}")[1] == run("frames", str(raw))[1]
        assert run("export", f"{db}#{exchange_id}")[1] == run("export", str(raw))[1]
        assert run("blame", f"{db}#{exchange_id}", "0")[0] == run("blame", str(raw), "0")[0]


def test_the_store_alone_is_its_latest_capture_and_diff_takes_two(stored: tuple[str, list[int]]) -> None:
    db, ids = stored
    assert json.loads(run("show", "--json", db)[1]) == json.loads(run("show", "--json", f"{db}#{ids[-1]}")[1])
    code, out, _ = run("diff", f"{db}#{ids[0]}", f"{db}#{ids[0]}")
    assert code == 0 and "frames alike" in out


def test_captures_lists_newest_first_and_as_json(stored: tuple[str, list[int]]) -> None:
    db, ids = stored
    code, out, _ = run("captures", "--db", db, "--json")
    rows = json.loads(out)
    assert code == 0 and [row["id"] for row in rows] == ids[::-1]
    assert all(row["dialect"] and row["frames"] for row in rows) and SECRET not in out
    code, out, _ = run("captures", "--db", db)
    lines = out.splitlines()
    assert code == 0 and lines[0].split()[:3] == ["id", "time", "(UTC)"]
    assert [line.split()[0] for line in lines[1:]] == [str(i) for i in ids[::-1]]
    assert all(line == line.rstrip() for line in lines)


def test_captures_finds_the_store_in_streamfold_db(stored: tuple[str, list[int]]) -> None:
    db, ids = stored
    result = CliRunner().invoke(cli, ["captures", "--json"], env={"STREAMFOLD_DB": db})
    assert result.exit_code == 0 and len(json.loads(result.stdout)) == len(ids)


@pytest.mark.parametrize("fmt", ["raw", "har", "trace"])
def test_each_export_reads_back_to_the_same_result(stored: tuple[str, list[int]], fmt: str) -> None:
    db, ids = stored
    for exchange_id, path in zip(ids, BODIES, strict=True):
        data = run_bytes("captures", "export", f"{db}#{exchange_id}", "--format", fmt)
        assert (data == path.read_bytes()) if fmt == "raw" else data != path.read_bytes()
        back = load(data)
        direct = load(path.read_bytes(), input_format="raw")
        assert back.capture.body == path.read_bytes()
        assert back.result.choices == direct.result.choices and back.result.errors == direct.result.errors
        assert back.capture.status == (None if fmt == "raw" else 200)
        if fmt in ("trace", "har"):
            assert back.capture.reads is not None
            expected = split(path.read_bytes(), exchange_id - 1)
            offsets = [sum(len(chunk) for chunk, _ in expected[:i]) for i in range(len(expected))]
            assert [offset for offset, _ in back.capture.reads] == offsets
            assert back.capture.started is not None
            times = [seconds - back.capture.started for _, seconds in back.capture.reads]
            assert times == pytest.approx([at for _, at in expected], abs=2e-6)
        if fmt == "har":
            assert back.capture.source == "har" and dict(back.capture.request_headers)["x-api-key"] == "REDACTED"


def test_export_by_id_with_db_and_to_a_file(stored: tuple[str, list[int]], tmp_path: Path) -> None:
    db, ids = stored
    out = tmp_path / "one.har"
    code, _, err = run("captures", "--db", db, "export", str(ids[1]), "--format", "har", "-o", str(out))
    assert code == 0, err
    assert json.loads(out.read_text())["log"]["entries"][0]["comment"] == f"streamfold capture #{ids[1]}, complete"


def test_bad_references_are_one_line_errors(stored: tuple[str, list[int]], tmp_path: Path) -> None:
    db, ids = stored
    corrupt = tmp_path / "x.sqlite"
    corrupt.write_bytes(b"\x00\x01garbage" * 100)
    cases = {f"{db}#999": f"no capture #999 in {db!r}: it holds {len(ids)} captures",
             str(corrupt): "is not a capture store: it is not an SQLite file",
             str(tmp_path / "missing.sqlite"): "no capture store at",
             f"{db}#x": "must be a capture id"}
    for ref, message in cases.items():
        for command in ("show", "frames", "check"):
            extra = [ref, "--expect", str(CAPTURES / "openai" / "a2-tool-call-empty-arguments.expect.json")] \
                if command == "check" else [ref]
            code, _, err = run(command, *extra)
            assert code == 2 and message in err and "Traceback" not in err, (command, ref, err)
            assert len(err.strip().splitlines()) == 1
        code, _, err = run("captures", "export", ref)
        assert code == 2 and message in err
    code, _, err = run("captures", "--db", str(corrupt))
    assert code == 2 and "not an SQLite file" in err


def test_a_real_process_reads_a_store_a_writer_holds_open(tmp_path: Path) -> None:
    db = str(tmp_path / "live.sqlite")
    body = (CAPTURES / "openai" / "a2-tool-call-empty-arguments.sse").read_bytes()
    with CaptureStore.open(db) as store:
        done = record(store, body, 3)
        live = store.begin("POST", "http://127.0.0.1/v1/chat/completions", (), b"")
        live.read(body[:50])
        store.flush()
        listed = subprocess.run([sys.executable, "-m", "streamfold", "captures", "--db", db, "--json"],
                                capture_output=True, check=True,
                                env={"PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}).stdout
        live.end("client-cut")
    rows = json.loads(listed)
    assert {row["id"]: row["in_flight"] for row in rows} == {done: False, live.id: True}


@pytest.mark.parametrize("reads", [None, "x", [], [[5, 0.1]], [[0, "1"]], [[0, float("nan")]], [[0, 0.1], [3, -1]],
                                   [[0, 0.1], [10**9, 0.2]], [[True, 0.1]]])
def test_a_har_whose_reads_do_not_fit_is_read_without_them(stored: tuple[str, list[int]], reads: object) -> None:
    db, ids = stored
    har = json.loads(run_bytes("captures", "export", f"{db}#{ids[0]}", "--format", "har"))
    har["log"]["entries"][0]["_reads"] = reads
    back = load(json.dumps(har).encode())
    assert back.capture.reads is None and back.timing is None
    assert back.result.choices == load(BODIES[0].read_bytes()).result.choices
