"""The page's operations called as functions (`streamfold.web.api`), with no HTTP: on the real captures,
the same answers the page gets through the server, and no web framework imported to give them (a Web
Worker running the core has none).
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

import streamfold
from store_helpers import BODIES, record
from streamfold.services import read_capture
from streamfold.services.load import fold_capture
from streamfold.store import CaptureStore
from streamfold.web.api import ApiError, PageApi, fold_options
from streamfold.web.fold_view import encode

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = sorted(path for path in (ROOT / "tests" / "captures").rglob("*")
                  if path.is_file() and path.suffix not in (".md", ".json", ".py"))
INPUTS = sorted(path for path in (ROOT / "tests" / "inputs").iterdir() if path.is_file())


def test_the_operations_import_no_web_framework() -> None:
    code = ("import sys, streamfold.web.api, streamfold.web.ranges, streamfold.web.stored\n"
            "print(sorted(name for name in sys.modules if name.split('.')[0] in ('starlette', 'uvicorn', 'httpx')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("path", CAPTURES, ids=lambda path: str(path.relative_to(ROOT / "tests" / "captures")))
def test_a_fold_is_the_contract_and_its_ranges_are_its_rows(path: Path) -> None:
    api = PageApi(kept_folds=1)
    data = path.read_bytes()
    whole = api.fold(data, fold_options())
    # The page reads a capture as the CLI does (what the input is may add a finding), folding it with fold().
    assert whole["result"] == fold_capture(read_capture(data)).result.to_dict()
    if whole["capture"]["source"] == "raw":
        assert {**whole["result"], "diagnostics": []} == {**streamfold.fold(data).to_dict(), "diagnostics": []}
    ranged = api.fold(data, fold_options(), frames="range")
    assert ranged["frame_count"] == len(whole["frames"]) and "frames" not in ranged
    rows: list[object] = []
    while len(rows) < ranged["frame_count"]:
        answer = api.frames(ranged["fold_id"], str(len(rows)), "7")
        assert answer["total"] == ranged["frame_count"] and answer["frames"]
        rows += answer["frames"]
    assert rows == whole["frames"]
    # What the server sends is these values' JSON: nothing in them needs more than JSON.
    assert json.loads(encode(whole)) == whole


@pytest.mark.parametrize("path", INPUTS, ids=lambda path: path.name)
def test_what_a_person_has_at_hand_folds_as_the_cli_reads_it_and_its_entries_can_be_picked(path: Path) -> None:
    api, data = PageApi(), path.read_bytes()
    try:
        view = api.fold(data, fold_options())
    except ApiError as refused:
        assert refused.status in (400, 413) and refused.message
        return
    assert view["result"] == fold_capture(read_capture(data)).result.to_dict()
    har = view.get("har")
    if har is not None:
        other = next(entry["index"] for entry in har["entries"] if entry["index"] != har["entry"])
        try:
            picked = api.fold(data, fold_options(entry=str(other)))
        except ApiError as refused:  # an entry with no body to fold
            assert refused.status == 400 and refused.message
            return
        assert picked["har"]["entry"] == other
        assert picked["result"] == fold_capture(read_capture(data, entry=str(other))).result.to_dict()


def test_options_are_checked_before_anything_is_folded() -> None:
    with pytest.raises(ApiError) as refused:
        fold_options(dialect="no-such-dialect")
    assert refused.value.status == 400 and "anthropic" in refused.value.message
    with pytest.raises(ApiError, match="unknown transport"):
        fold_options(transport="carrier-pigeon")
    with pytest.raises(ApiError, match="at most 2000 characters"):
        fold_options(entry="x" * 2001)
    assert fold_options("", "", "") == fold_options()


def test_a_dialect_override_and_a_limit_hold() -> None:
    data = BODIES[0].read_bytes()
    api = PageApi(max_size=1024 * 1024)
    forced = api.fold(data, fold_options(dialect="anthropic"))
    assert forced["result"]["dialect"] == "anthropic"
    small = PageApi(max_size=len(data) + 10)
    with pytest.raises(ApiError) as refused:
        small.fold(gzip.compress(data * 50), fold_options())
    assert refused.value.status == 413 and "--max-size" in refused.value.message


def test_a_diff_compares_the_two_sides_it_is_given() -> None:
    left, right = BODIES[0].read_bytes(), BODIES[1].read_bytes()
    api = PageApi()
    same = api.diff(left + left, str(len(left)), fold_options())
    assert all(field["same"] for field in same["fields"])
    differ = api.diff(left + right, str(len(left)), fold_options())
    assert not all(field["same"] for field in differ["fields"])
    for bad in ("", "-1", "²", str(2 * len(left) + 1)):
        with pytest.raises(ApiError, match="left_size"):
            api.diff(left + left, bad, fold_options())


def test_a_range_of_a_fold_no_longer_kept_is_refused() -> None:
    api = PageApi(kept_folds=1)
    first = api.fold(BODIES[0].read_bytes(), fold_options(), frames="range")["fold_id"]
    api.fold(BODIES[1].read_bytes(), fold_options(), frames="range")
    with pytest.raises(ApiError) as refused:
        api.frames(first)
    assert refused.value.status == 404
    with pytest.raises(ApiError, match="start must be a whole number"):
        api.frames(first, "-3")


def test_meta_and_the_command_line_s_file(tmp_path: Path) -> None:
    given = tmp_path / "given.sse"
    given.write_bytes(BODIES[0].read_bytes())
    api = PageApi(capture_path=given, max_size=4096)
    meta = api.meta()
    assert meta["capture"] == {"name": "given.sse", "size": given.stat().st_size}
    assert meta["max_size"] == 4096 and "anthropic" in meta["dialects"] and meta["store"] is None
    assert api.opened_file() == given.read_bytes()
    given.unlink()
    assert "error" in api.meta()["capture"]
    with pytest.raises(ApiError) as refused:
        api.opened_file()
    assert refused.value.status == 404
    with pytest.raises(ApiError, match="no capture was given"):
        PageApi().opened_file()


def test_a_store_s_captures_list_fold_and_give_their_body(tmp_path: Path) -> None:
    path = tmp_path / "captures.sqlite"
    with CaptureStore(str(path)) as store:
        ids = [record(store, body.read_bytes(), seed) for seed, body in enumerate(BODIES[:3], start=1)]
    api = PageApi(db_path=path, open_stored="latest")
    assert api.meta()["store"] == {"name": "captures.sqlite", "open": "latest"}
    status, listing = api.captures()
    assert status == 200 and [row["id"] for row in listing["captures"]] == ids[::-1]
    assert api.captures(listing["version"]) == (200, {"store": "captures.sqlite", "version": listing["version"],
                                                     "unchanged": True})
    capture_id = api.stored_id(str(ids[0]))
    view = api.stored_fold(capture_id, fold_options())
    said = [finding for finding in view["result"]["diagnostics"] if finding["code"] != "input-store"]
    assert {**view["result"], "diagnostics": said} == streamfold.fold(BODIES[0].read_bytes()).to_dict()
    assert view["stored"]["id"] == ids[0] and len(view["arrivals"]) == len(view["frames"])
    assert api.stored_body(capture_id) == BODIES[0].read_bytes()
    ranged = api.stored_fold(capture_id, fold_options(), frames="range")
    assert api.frames(ranged["fold_id"])["frames"] == view["frames"]
    for text, status in (("abc", 404), ("999", 404)):
        with pytest.raises(ApiError) as refused:
            api.stored_fold(api.stored_id(text), fold_options())
        assert refused.value.status == status
    with pytest.raises(ApiError, match="limit must be"):
        api.captures(None, "0")
    with pytest.raises(ApiError, match="no capture store"):
        PageApi().captures()
