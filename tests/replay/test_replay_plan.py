"""The plan is pure, so it is tested hard: every transparent fault over every capture of
tests/captures (all dialects, all transports) folds to the clean reply; the writes follow the
recorded reads and their times, or the fault that changes them; a seed repeats the random ones."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay_helpers import by_name, fold_plan, recordings, served, usable
from store_helpers import record
from streamfold.replay import Recording, parse_fault, plan_response, recording_of, reply_part
from streamfold.replay.plan import RANDOM_CHUNK_MOST
from streamfold.store import CaptureStore, read_stored

TRANSPARENT = ["chunk:1", "chunk:3", "chunk:64", "chunk:random", "split-utf8", "crlf", "cr", "nospace",
               "keepalive:1", "keepalive:4", "bom", "fields", "stall:0:2.5", "slow:20"]
#: Transparent faults together, as a client under test would meet them at once.
COMBINED = [["chunk:1", "crlf", "keepalive:2", "fields"], ["split-utf8", "cr", "nospace", "bom"],
            ["chunk:random", "split-utf8", "crlf", "fields", "keepalive:1", "stall:0:1", "slow:1"]]
_MULTIBYTE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")


def clean_reply(recording: Recording) -> dict[str, object]:
    return reply_part(fold_plan(plan_response(recording)))


def mismatches(specs: list[str]) -> tuple[int, list[str]]:
    """(how many captures took the faults, the names of those whose reply changed)."""
    faults = [parse_fault(spec) for spec in specs]
    tried, changed = 0, []
    for recording in recordings():
        if not usable(recording, faults):
            continue
        tried += 1
        plan = plan_response(recording, faults, seed=7)
        if reply_part(fold_plan(plan)) != clean_reply(recording):
            changed.append(recording.name)
    return tried, changed


def test_every_dialect_and_transport_is_among_the_captures() -> None:
    found = {(recording.dialect, recording.transport) for recording in recordings()}
    for dialect in ("openai-chat", "anthropic", "openai-responses", "gemini", "ollama", "bedrock", "cohere", "tgi",
                    "llama-cpp", "lmstudio", "cloudflare"):
        assert any(seen == dialect for seen, _ in found), dialect
    assert {transport for _, transport in found} == {"sse", "ndjson", "json-array", "aws-eventstream"}


@pytest.mark.parametrize("spec", TRANSPARENT)
def test_a_transparent_fault_leaves_every_captures_reply_as_it_was(spec: str) -> None:
    tried, changed = mismatches([spec])
    kind = parse_fault(spec).kind
    least = len(recordings()) if kind in ("chunk", "split-utf8", "stall", "slow") else 60
    assert tried >= least, f"only {tried} captures could take {spec}"
    assert changed == []


@pytest.mark.parametrize("specs", COMBINED, ids=lambda specs: "+".join(specs))
def test_transparent_faults_combined_leave_every_reply_as_it_was(specs: list[str]) -> None:
    tried, changed = mismatches(specs)
    assert tried >= 60 and changed == []


@pytest.mark.parametrize("spec", ["chunk:1", "chunk:5", "chunk:random", "split-utf8", "stall:2:1", "slow:3"])
def test_faults_that_only_split_writes_serve_the_clean_bytes(spec: str) -> None:
    for recording in recordings():
        if usable(recording, [parse_fault(spec)]):
            assert plan_response(recording, [parse_fault(spec)]).body == recording.body, recording.name


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**31), index=st.integers(min_value=0, max_value=10_000))
def test_random_chunks_of_any_seed_reassemble_to_the_clean_reply(seed: int, index: int) -> None:
    recording = recordings()[index % len(recordings())]
    plan = plan_response(recording, [parse_fault("chunk:random")], seed=seed)
    assert plan.body == recording.body
    assert all(1 <= len(write.data) <= RANDOM_CHUNK_MOST for write in plan.writes)
    assert reply_part(fold_plan(plan)) == clean_reply(recording)


def test_a_seed_repeats_the_random_writes_and_another_seed_does_not() -> None:
    recording = by_name("examples/openai-plain-text")
    fault = [parse_fault("chunk:random")]
    sizes = [[len(w.data) for w in plan_response(recording, fault, seed=seed).writes] for seed in (3, 3, 4)]
    assert sizes[0] == sizes[1] and sizes[0] != sizes[2]


def test_chunk_n_writes_n_bytes_and_the_rest_last() -> None:
    recording = by_name("examples/openai-reasoning")
    plan = plan_response(recording, [parse_fault("chunk:7")])
    sizes = [len(write.data) for write in plan.writes]
    assert set(sizes[:-1]) == {7} and 1 <= sizes[-1] <= 7 and sum(sizes) == len(recording.body)


def test_split_utf8_splits_every_multibyte_character_across_two_writes() -> None:
    checked = 0
    for recording in recordings():
        plan = plan_response(recording, [parse_fault("split-utf8")])
        ends, position = set(), 0
        for write in plan.writes:
            position += len(write.data)
            ends.add(position)
        for found in _MULTIBYTE.finditer(recording.body):
            checked += 1
            assert any(found.start() < end < found.end() for end in ends), (recording.name, found.start())
    assert checked > 50  # the captures hold accents, dashes, CJK and emoji


def test_without_recorded_reads_a_frame_is_a_write() -> None:
    recording = by_name("examples/openai-plain-text")
    assert recording.reads is None
    plan = plan_response(recording)
    assert [write.data for write in plan.writes] == [frame.raw for frame in recording.frames]
    assert all(write.delay == 0 for write in plan.writes)


@pytest.fixture
def stored(tmp_path: Path) -> Recording:
    """A capture with its reads and arrival times, as `record` stores them (store_helpers.split)."""
    store = CaptureStore.open(str(tmp_path / "replay.sqlite"))
    body = by_name("anthropic/a3-a6-thinking-then-tool-use").body
    number = record(store, body, seed=1, url="https://api.anthropic.com/v1/messages")
    store.close()
    return recording_of(read_stored(str(tmp_path / "replay.sqlite"), number), f"replay#{number}")


def test_the_writes_follow_the_recorded_reads_and_their_times(stored: Recording) -> None:
    assert stored.reads is not None and len(stored.reads) > 3 and stored.path == "/v1/messages"
    plan = plan_response(stored)
    offsets = [offset for offset, _ in stored.reads]
    starts, position = [], 0
    for write in plan.writes:
        starts.append(position)
        position += len(write.data)
    assert starts == offsets and plan.body == stored.body
    times = [at for _, at in stored.reads]
    expected = [times[0] - 0.0, *(later - earlier for earlier, later in itertools.pairwise(times))]
    assert [write.delay for write in plan.writes] == pytest.approx(expected)


def test_speed_scales_the_recorded_delays_and_max_drops_them(stored: Recording) -> None:
    original = [write.delay for write in plan_response(stored).writes]
    doubled = [write.delay for write in plan_response(stored, speed=2.0).writes]
    assert doubled == pytest.approx([delay / 2 for delay in original]) and sum(original) > 0.3
    assert all(write.delay == 0 for write in plan_response(stored, speed="max").writes)
    with pytest.raises(ValueError, match="positive number"):
        plan_response(stored, speed=0.0)


def test_a_byte_is_not_written_before_it_was_recorded(stored: Recording) -> None:
    """chunk:1 over recorded reads: each byte waits for the read that brought it."""
    plan = plan_response(stored, [parse_fault("chunk:1")])
    assert len(plan.writes) == len(stored.body)
    assert sum(write.delay for write in plan.writes) == pytest.approx(stored.reads[-1][1] if stored.reads else 0)


def test_stall_and_slow_add_their_seconds_at_any_speed() -> None:
    recording = by_name("examples/openai-plain-text")
    plan = plan_response(recording, [parse_fault("stall:3:2.5"), parse_fault("slow:10")], speed="max")
    starts, position = {}, 0
    for write in plan.writes:
        starts[position] = write.delay
        position += len(write.data)
    assert starts[recording.frames[3].offset] == pytest.approx(2.51)
    assert all(delay == pytest.approx(0.01) for at, delay in starts.items() if at != recording.frames[3].offset)


def test_line_faults_rewrite_what_they_say_and_nothing_else() -> None:
    recording = by_name("anthropic/a3-a6-thinking-then-tool-use")
    crlf = served(recording, "crlf")[0].body
    assert b"\r\n" in crlf and re.search(rb"(?<!\r)\n", crlf) is None and crlf.replace(b"\r\n", b"\n") == recording.body
    cr = served(recording, "cr")[0].body
    assert b"\n" not in cr and cr.replace(b"\r", b"\n") == recording.body
    nospace = served(recording, "nospace")[0].body
    assert re.search(rb"(?m)^(data|event): ", nospace) is None and b"data:{" in nospace
    assert served(recording, "bom")[0].body == b"\xef\xbb\xbf" + recording.body
    keepalive = served(recording, "keepalive:4")[0].body
    assert keepalive.count(b": keep-alive\n\n") == (len(recording.frames) - 1) // 4
    fields = served(recording, "fields")[0].body
    assert fields.count(b"\nid: ") + fields.startswith(b"id: ") == len(recording.frames)
    assert fields.count(b"retry: 3000\n") == 1


def test_served_headers_keep_the_capture_s_and_drop_its_framing() -> None:
    recording = Recording("x", b"data: [DONE]\n\n", "sse", "openai-chat", by_name("examples/openai-plain-text").frames[-1:],
                          response_headers=(("Content-Type", "text/event-stream; charset=utf-8"),
                                            ("Content-Encoding", "gzip"), ("Content-Length", "99"),
                                            ("Transfer-Encoding", "chunked"), ("x-request-id", "req_1")))
    headers = dict(plan_response(recording).headers)
    assert headers == {"content-type": "text/event-stream; charset=utf-8", "x-request-id": "req_1"}
    ndjson = by_name("ollama/generate-stream")
    assert dict(plan_response(ndjson).headers)["content-type"] == "application/x-ndjson"
