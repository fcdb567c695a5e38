"""The ledger is synced once a batch, not once an input: a directory of small files finishes hundreds of inputs
a batch, and a sync each took 70% of `fleet fold`'s run over 2,000 of them (benchmarks/bench_fleet.py). The
inputs' lines still all reach the ledger, so a second run reads none of them again."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import streamfold.fleet.layout as layout
from fleet_helpers import fold_here, sse


def test_a_batch_of_small_files_is_one_sync_and_every_input_is_recorded(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    captures = tmp_path / "captures"
    captures.mkdir()
    for index in range(250):
        (captures / f"{index:03d}.sse").write_bytes(sse(json.dumps({"choices": [{"delta": {"content": f"{index}"}}]})))
    syncs: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(layout.os, "fsync", lambda descriptor: (syncs.append(descriptor), real_fsync(descriptor))[1])

    run = fold_here([captures], tmp_path / "fleet", batch_size=100)

    assert run.captures == 250
    assert len(syncs) <= 4  # three batches, and the inputs the last one finished
    lines = [json.loads(line) for line in (tmp_path / "fleet" / "_fleet" / "ledger.jsonl").read_text().splitlines()]
    assert sorted(Path(line["input"]).name for line in lines if "input" in line) == \
           [f"{index:03d}.sse" for index in range(250)]
    again = fold_here([captures], tmp_path / "fleet", batch_size=100)
    assert (again.inputs, again.inputs_skipped) == (0, 250)
