"""What `streamfold serve SOURCE…` reads: files, stored captures, whole stores and directories, each
capture named as the docs say, and a SOURCE that cannot be read is a sentence, not a traceback."""

from __future__ import annotations

import io
import shutil
import sys
from pathlib import Path

import pytest

from replay_helpers import CAPTURES
from store_helpers import record
from streamfold.replay import ReplayServer, SourceError, parse_fault, read_sources
from streamfold.store import CaptureStore

PLAIN = CAPTURES / "examples" / "openai-plain-text.sse"


def make_store(path: Path, *bodies: bytes) -> list[int]:
    store = CaptureStore.open(str(path))
    numbers = [record(store, body, seed=index + 1, url="https://api.openai.com/v1/chat/completions")
               for index, body in enumerate(bodies)]
    store.close()
    return numbers


def test_files_stores_and_directories_are_named_as_documented(tmp_path: Path) -> None:
    folder = tmp_path / "caps"
    (folder / "anthropic").mkdir(parents=True)
    shutil.copy(PLAIN, folder / "plain.sse")
    shutil.copy(CAPTURES / "anthropic" / "a2-tool-no-arguments.sse", folder / "anthropic" / "tool.sse")
    shutil.copy(CAPTURES / "anthropic" / "a2-tool-no-arguments.expect.json", folder / "anthropic" / "tool.expect.json")
    (folder / "README.md").write_text("not a capture")
    (folder / ".hidden.sse").write_bytes(PLAIN.read_bytes())
    numbers = make_store(folder / "kept.sqlite", PLAIN.read_bytes(), PLAIN.read_bytes())
    found = read_sources([str(folder), str(PLAIN), f"{folder / 'kept.sqlite'}#{numbers[1]}"])
    assert [r.name for r in found] == ["anthropic/tool", "kept#1", "kept#2", "plain", "openai-plain-text", "kept#2-2"]
    assert [r.dialect for r in found] == ["anthropic", *["openai-chat"] * 5]
    assert found[1].reads is not None and found[1].path == "/v1/chat/completions"
    whole = read_sources([str(folder / "kept.sqlite")])
    assert [r.name for r in whole] == ["kept#1", "kept#2"]


@pytest.mark.parametrize("source, said", [
    ("no/such.sse", "cannot read 'no/such.sse'"),
    ("EMPTY_DIR", "holds no captures"),
    ("STORE#99", "no capture #99"),
    ("STORE#x", "must be a capture id"),
])
def test_a_source_that_cannot_be_read_is_a_sentence(tmp_path: Path, source: str, said: str) -> None:
    (tmp_path / "empty").mkdir()
    make_store(tmp_path / "s.sqlite", PLAIN.read_bytes())
    source = source.replace("EMPTY_DIR", str(tmp_path / "empty")).replace("STORE", str(tmp_path / "s.sqlite"))
    with pytest.raises(SourceError, match=None) as caught:
        read_sources([source])
    assert said in str(caught.value)


def test_request_n_of_a_seed_is_served_the_same_every_run_and_requests_differ() -> None:
    recordings = read_sources([str(PLAIN)])
    runs = [ReplayServer(recordings, [parse_fault("chunk:random")], seed=42) for _ in range(2)]
    first = [[len(w.data) for w in app.plan(recordings[0], request).writes] for app in runs for request in (1, 2)]
    assert first[0] == first[2] and first[1] == first[3] and first[0] != first[1]
    other = ReplayServer(recordings, [parse_fault("chunk:random")], seed=43).plan(recordings[0], 1)
    assert [len(w.data) for w in other.writes] != first[0]


def test_standard_input_is_a_source_named_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(PLAIN.read_bytes())))
    (found,) = read_sources(["-"])
    assert found.name == "stdin" and found.body == PLAIN.read_bytes() and found.dialect == "openai-chat"
