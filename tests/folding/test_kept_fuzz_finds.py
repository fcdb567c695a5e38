"""Every input a long fuzz run ever failed on (tests/folding/fuzz_finds/, written by
`python tests/fuzz_runs.py keep REPORT`), run again the way the fuzzer ran it: each must now keep every
invariant the fuzzer checks. A find is never deleted: it is the regression test of its fix."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from fuzz_runs import FINDS, RUNS, keep, replay

KEPT = sorted(FINDS.glob("*.json"))


@pytest.mark.parametrize("path", KEPT, ids=[path.stem for path in KEPT])
def test_a_kept_find_keeps_every_invariant(path: Path) -> None:
    replay(path)


def test_every_kept_find_names_a_run_the_fuzzer_has() -> None:
    for path in KEPT:
        find = json.loads(path.read_text())
        assert find["test"] in RUNS, path.name
        base64.b64decode(find["input"], validate=True)


def test_a_report_line_is_kept_once_and_replays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("fuzz_runs.FINDS", tmp_path / "finds")
    data = b'data: {"choices":[{"delta":{"content":"hi"}}]}\n\n'
    line = json.dumps({"test": "chunks", "type": "AssertionError", "where": "x.py:1 f", "message": "m",
                       "options": {"cuts": [3, 9]}, "size": len(data), "input": base64.b64encode(data).decode()})
    report = tmp_path / "report.jsonl"
    report.write_text(line + "\n" + line + "\n")
    written = keep(report)
    assert len(written) == 2 and written[0] == written[1]
    assert [path.name for path in (tmp_path / "finds").iterdir()] == [written[0].name]
    assert json.loads(written[0].read_text())["options"] == {"cuts": [3, 9]}
    replay(written[0])
