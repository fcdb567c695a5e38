"""`fleet fold` as a run: it resumes after an interruption without redoing finished work, folds again only
what changed, says each input that failed on one line and goes on, stops at the first with --strict, and
changes nothing the user pointed at. The command runs as users run it: a `streamfold` process."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fleet_helpers import ROOT, fold_here, rows, sse
from store_helpers import BODIES, record
from streamfold.fleet.engines import Batches, Fold, Folded, LocalEngine
from streamfold.fleet.query import open_fleet
from streamfold.fleet.run import fold_fleet
from streamfold.store import CaptureStore

pytestmark = pytest.mark.server  # streamfold processes, killed and run again
CAPTURES = ROOT / "tests" / "captures"


def streamfold(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "streamfold", *args], capture_output=True, text=True,
                          timeout=timeout, check=False)


def everything(out: Path) -> dict[str, list[dict[str, object]]]:
    """Every table's rows as the query views show them (the newest of each capture), sorted."""
    with open_fleet(out) as db:
        found = {}
        for table in ("captures", "choices", "tool_calls", "findings", "usage"):
            names = [column[0] for column in db.execute(f"DESCRIBE {table}").fetchall()]
            order = ", ".join(name for name in ("capture_id", "choice", "kind", "position") if name in names)
            found[table] = [dict(zip(names, row)) for row in
                            db.execute(f"SELECT * FROM {table} ORDER BY {order}").fetchall()]
    return found


class _CutAfter:
    """The local engine, interrupted (as Ctrl-C would) once `batches` batches came back."""

    def __init__(self, batches: int) -> None:
        self.engine, self.left = LocalEngine(1), batches
        self.description = "cut"

    def map(self, fold: Fold, batches: Batches) -> Folded:
        for done in self.engine.map(fold, batches):
            if self.left == 0:
                raise KeyboardInterrupt
            self.left -= 1
            yield done

    def close(self) -> None:
        self.engine.close()


def test_an_interrupted_run_resumes_where_it_stopped_and_ends_equal_to_one_run(tmp_path: Path) -> None:
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    first = fold_here([CAPTURES / "anthropic"], whole, batch_size=5)
    with pytest.raises(KeyboardInterrupt):
        fold_fleet([str(CAPTURES / "anthropic")], str(cut), engine=_CutAfter(3), batch_size=5)
    manifest = json.loads((cut / "manifest.json").read_text())
    assert manifest["runs"][-1]["status"] == "interrupted" and manifest["runs"][-1]["captures"] == 15
    resumed = fold_here([CAPTURES / "anthropic"], cut, batch_size=5)
    assert resumed.captures + 15 == first.captures
    assert everything(cut) == everything(whole)
    assert len(rows(cut, "captures")) == len(rows(whole, "captures"))  # no capture written twice


def test_a_killed_process_leaves_no_half_batch_and_the_next_run_completes_it(tmp_path: Path) -> None:
    out = tmp_path / "out"
    process = subprocess.Popen([sys.executable, "-m", "streamfold", "fleet", "fold", str(CAPTURES / "anthropic"),
                                "--out", str(out),
                                "--jobs", "1", "--batch-size", "5"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ledger = out / "_fleet" / "ledger.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not ledger.exists() or ledger.read_text().count('"batch"') < 3):
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    committed = ledger.read_text().count('"batch"')
    assert committed >= 3
    stray = out / "captures" / "day=unknown" / "dialect=openai-chat" / "part-crashed-000099.parquet"
    stray.parent.mkdir(parents=True, exist_ok=True)
    stray.write_bytes(b"PAR1 half a file")
    again = streamfold("fleet", "fold", str(CAPTURES / "anthropic"), "--out", str(out), "--jobs", "1",
                       "--batch-size", "5")
    assert again.returncode == 0, again.stderr
    assert not stray.exists()
    assert "files of an interrupted run removed (their captures folded again)" in again.stdout
    fold_here([CAPTURES / "anthropic"], tmp_path / "whole")
    assert everything(out) == everything(tmp_path / "whole")


def test_a_second_run_skips_what_is_folded_and_folds_again_only_what_changed(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    shutil.copytree(CAPTURES / "openai", inputs)
    out = tmp_path / "out"
    first = fold_here([inputs], out)
    second = fold_here([inputs], out)
    assert (second.captures, second.inputs_skipped) == (0, first.inputs)
    changed = sorted(inputs.glob("*.sse"))[0]
    changed.write_bytes(sse('{"id":"new","model":"m-2","choices":[{"index":0,"delta":{"content":"New"},'
                            '"finish_reason":"stop"}]}'))
    third = fold_here([inputs], out)
    assert (third.captures, third.inputs_skipped) == (1, first.inputs - 1)
    with open_fleet(out) as db:
        assert db.execute("SELECT model, response_id FROM captures WHERE capture_id = ?",
                          [str(changed)]).fetchall() == [("m-2", "new")]
        assert db.execute("SELECT content FROM choices WHERE capture_id = ?", [str(changed)]).fetchall() == [("New",)]
        assert db.execute("SELECT count(*) FROM captures").fetchone()[0] == first.captures


def test_new_exchanges_of_a_store_are_folded_and_old_ones_are_not_read_again(tmp_path: Path) -> None:
    path = tmp_path / "proxy.sqlite"
    with CaptureStore.open(str(path)) as store:
        for seed, body in enumerate(BODIES[:3], 1):
            record(store, body.read_bytes(), seed)
    out = tmp_path / "out"
    assert fold_here([path], out).captures == 3
    with CaptureStore.open(str(path)) as store:
        record(store, BODIES[3].read_bytes(), 4)
    again = fold_here([path], out)
    assert (again.captures, again.captures_skipped) == (1, 3)


def _digest(folder: Path) -> dict[str, str]:
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def test_bad_inputs_are_one_line_each_the_run_goes_on_and_the_exit_status_says_so(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    shutil.copy(CAPTURES / "openai" / sorted(os.listdir(CAPTURES / "openai"))[0], inputs / "good.sse")
    (inputs / "corrupt.sqlite").write_bytes(b"SQLite format 3\x00" + b"\x07" * 600)
    (inputs / "broken.parquet").write_bytes(b"PAR1" + b"\x00" * 64)
    (inputs / "records.jsonl").write_text('{"body": "data: {}\\n\\n"}\n{oops\n')
    before = _digest(inputs)
    out = tmp_path / "out"
    run = streamfold("fleet", "fold", str(inputs), str(tmp_path / "nowhere"), str(tmp_path / "*.none"),
                     "s3://streamfold-no-such-bucket/x/", "--out", str(out))
    assert run.returncode == 1, run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 5, lines
    for name, reason in ((str(tmp_path / "nowhere"), "no such file or directory"),
                         (str(tmp_path / "*.none"), "the pattern matches no file"),
                         ("s3://streamfold-no-such-bucket/x/", "cannot read it"),
                         (str(inputs / "corrupt.sqlite"), "cannot be read"),
                         (str(inputs / "broken.parquet"), "cannot be read")):
        assert any(line.startswith(f"streamfold: {name}: ") and reason in line for line in lines), (name, lines)
    assert "Traceback" not in run.stderr
    assert run.stdout.startswith("folded 3 captures from 4 inputs") and "1 could not be read" in run.stdout
    assert "5 inputs failed" in run.stdout.splitlines()[-1]
    assert _digest(inputs) == before
    manifest = json.loads((out / "manifest.json").read_text())
    assert len(manifest["runs"][-1]["failed_inputs"]) == 5
    strict = streamfold("fleet", "fold", str(inputs), str(tmp_path / "nowhere"), "--out", str(tmp_path / "strict"),
                        "--strict")
    assert strict.returncode == 1 and "stopped: an input failed (--strict)" in strict.stdout
    assert "folded 0 captures" in strict.stdout


def test_reading_a_store_changes_nothing_of_it(tmp_path: Path) -> None:
    path = tmp_path / "proxy.sqlite"
    with CaptureStore.open(str(path)) as store:
        record(store, BODIES[0].read_bytes(), 1)
    sqlite3.connect(path).execute("PRAGMA wal_checkpoint(TRUNCATE)").connection.close()
    before = _digest(tmp_path)
    assert fold_here([path], tmp_path / "out").captures == 1
    after = {name: digest for name, digest in _digest(tmp_path).items() if not name.startswith("out")}
    assert {name: digest for name, digest in after.items() if not name.endswith(("-wal", "-shm"))} == before


def test_another_run_on_the_same_directory_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    fold_here([CAPTURES / "openai"], out)
    import fcntl

    with open(out / "_fleet" / "lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        run = streamfold("fleet", "fold", str(CAPTURES / "openai"), "--out", str(out))
    assert run.returncode == 1 and "another `streamfold fleet fold` is writing" in run.stderr


def test_the_progress_bar_shows_captures_per_second_on_a_terminal(tmp_path: Path) -> None:
    script = shutil.which("script")
    if script is None:
        pytest.skip("util-linux's `script` (a terminal for the command) is not installed")
    command = (f"{sys.executable} -m streamfold fleet fold {CAPTURES / 'anthropic'} --out {tmp_path / 'out'} "
               "--jobs 1 --batch-size 2")
    run = subprocess.run([script, "-qec", command, "/dev/null"], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "COLUMNS": "120"}, check=False)
    assert run.returncode == 0, run.stdout
    assert "captures" in run.stdout and "/s" in run.stdout and "folding" in run.stdout
