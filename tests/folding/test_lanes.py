"""Choosing the lane (issue 26 part 11): a capture that interleaves replies (a Realtime session's
responses, the Responses WebSocket mode's `stream_id`s) lists them in `Result.lanes`, folds the
dialect's default one, and folds any other when asked (`fold(..., lane=)`, `Folder(lane=)`,
`--lane`), in every chunking; a lane it does not hold is a located warning, never an exception."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from feeding import tr_fold
from streamfold import Folder, Lane, Result, fold
from streamfold.cli.main import cli
from streamfold.web.api import ApiError, PageApi, fold_options

CAPTURES = Path(__file__).resolve().parents[1] / "captures"
REALTIME = (CAPTURES / "openai-realtime" / "two-responses.jsonl").read_bytes()
STREAM_IDS = (CAPTURES / "websocket" / "responses-two-lanes.jsonl").read_bytes()


def codes(result: Result) -> list[str]:
    return [finding.code for finding in (*result.errors, *result.diagnostics)]


def test_realtime_responses_are_lanes_and_any_one_folds_in_every_chunking() -> None:
    first = tr_fold(REALTIME)
    assert first.lanes == (Lane("resp_C9xY4bOne007", "response", 7, True),
                           Lane("resp_C9xY4dTwo008", "response", 20, False))
    assert first.choices[0].content == "Hi!" and first.id == "resp_C9xY4bOne007"
    second = tr_fold(REALTIME, lane="resp_C9xY4dTwo008")
    assert [lane.followed for lane in second.lanes] == [False, True]
    assert second.choices[0].content == "Bye!" and second.id == "resp_C9xY4dTwo008" and second.complete
    other = next(d for d in second.diagnostics if d.code == "realtime-other-responses")
    assert other.frame == 7 and "the one asked for" in other.message and "resp_C9xY4bOne007" in other.message
    # Asking for the default lane by its id is the default fold (whose findings say it was asked for).
    named = fold(REALTIME, lane="resp_C9xY4bOne007")
    assert (named.choices, named.lanes, named.usage) == (first.choices, first.lanes, first.usage)


def test_websocket_stream_ids_are_lanes_and_the_other_one_folds() -> None:
    first = fold(STREAM_IDS)
    assert [(lane.id, lane.kind, lane.followed) for lane in first.lanes] == [
        ("lane-a", "stream_id", True), ("lane-b", "stream_id", False)]
    second = tr_fold(STREAM_IDS, lane="lane-b")
    assert second.choices[0].content == "Hallo !" and first.choices[0].content == "Bonjour !"
    assert second.id != first.id and second.complete
    # lane-a's first message is the one said to be left out now, and lane-b's messages are data.
    said = [d for d in second.diagnostics if d.code == "websocket-other-stream"]
    assert [d.frame for d in said] == [2] and "the lane asked for" in said[0].message
    assert all(frame.data is None or '"lane-a"' not in frame.data for frame in second.frames)


@pytest.mark.parametrize("data", [REALTIME, STREAM_IDS, b'data: {"choices":[{"delta":{"content":"x"}}]}\n\n'])
def test_a_lane_the_capture_does_not_hold_is_a_warning_naming_its_lanes(data: bytes) -> None:
    result = tr_fold(data, lane="nope")
    missing = [d for d in result.diagnostics if d.code == "lane-not-found"]
    assert len(missing) == 1 and missing[0].severity.value == "warning" and "'nope'" in missing[0].message
    assert missing[0].details["lanes"] == [lane.id for lane in result.lanes]
    assert not any(lane.followed for lane in result.lanes)
    assert not (result.choices and result.choices[0].content in ("Hi!", "Bye!", "Bonjour !", "Hallo !"))


def test_lanes_travel_in_the_json_contract_only_when_there_are_some() -> None:
    result = fold(REALTIME, lane="resp_C9xY4dTwo008")
    as_json = json.loads(json.dumps(result.to_dict()))
    assert as_json["lanes"][1] == {"id": "resp_C9xY4dTwo008", "kind": "response", "first_frame": 20,
                                   "followed": True}
    assert Result.from_dict(as_json) == result
    assert "lanes" not in fold(b'data: {"choices":[{"delta":{"content":"x"}}]}\n\n').to_dict()


@pytest.mark.parametrize("lane", ["", 3, b"lane-a"])
def test_a_lane_that_is_no_id_is_api_misuse(lane: object) -> None:
    with pytest.raises(ValueError, match="lane"):
        Folder(lane=lane)  # type: ignore[arg-type]


def test_the_command_line_folds_the_lane_asked_for_and_lists_them(tmp_path: Path) -> None:
    capture = tmp_path / "session.jsonl"
    capture.write_bytes(REALTIME)
    runner = CliRunner()
    shown = runner.invoke(cli, ["show", "--json", "--lane", "resp_C9xY4dTwo008", str(capture)])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["choices"][0]["content"] == "Bye!"
    text = runner.invoke(cli, ["show", str(capture)]).output
    assert "lanes (response): resp_C9xY4bOne007 (frame 7, folded), resp_C9xY4dTwo008 (frame 20)" in \
        " ".join(text.split())
    exported = runner.invoke(cli, ["export", "--lane", "lane-b", str(capture.with_name("x.jsonl"))])
    assert exported.exit_code == 2  # no such file: usage, as for any command
    (tmp_path / "ws.jsonl").write_bytes(STREAM_IDS)
    exported = runner.invoke(cli, ["export", "--lane", "lane-b", str(tmp_path / "ws.jsonl")])
    assert exported.exit_code == 0 and "Hallo !" in exported.output
    (tmp_path / "bye.txt").write_text("Bye!")
    asked = ["check", "--expect", str(tmp_path / "bye.txt"), str(capture)]
    assert runner.invoke(cli, asked).exit_code == 1  # the first response's "Hi!" is not what the client built
    assert runner.invoke(cli, [*asked, "--lane", "resp_C9xY4dTwo008"]).exit_code == 0
    compared = runner.invoke(cli, ["diff", "--lane", "resp_C9xY4dTwo008", str(capture), str(capture)])
    assert compared.exit_code == 0, compared.output


def test_the_page_api_folds_the_lane_asked_for() -> None:
    api = PageApi()
    view = api.fold(REALTIME, fold_options(lane="resp_C9xY4dTwo008"))
    assert view["result"]["choices"][0]["content"] == "Bye!"
    assert [lane["followed"] for lane in view["result"]["lanes"]] == [False, True]
    assert api.fold(REALTIME, fold_options(lane=""))["result"]["choices"][0]["content"] == "Hi!"
    with pytest.raises(ApiError):
        fold_options(lane="x" * 5000)


@pytest.mark.parametrize(("capture", "lanes", "other", "reply"), [
    ("gemini-live/audio-transcript-binary-two-turns.jsonl", ["1", "2"], "2", "Madrid."),
    ("anthropic-agents/subagent-thread-cross-posted.sse", ["primary", "sthr_01Kq7TfWm3pXc9Rd"],
     "sthr_01Kq7TfWm3pXc9Rd", None),
    ("adk/parallel-branches.sse", ["poet", "critic"], "critic", "Fine verse."),
    ("openai-responses-agents/websocket-inject.jsonl", ["/root", "/root/researcher"], "/root/researcher",
     "The fare is 89 EUR."),
    ("mistral-conversations/handoff-lanes.sse", None, "ag_0691f3d0coder00000", None),
    ("langgraph/subgraph-lanes.sse", None, "research:8e9f0a1b-2c3d-4e4f-8a5b-6c7d8e9f0a1b", None),
])
def test_the_agent_protocols_lanes_are_listed_and_folded_on_request(capture: str, lanes: list[str] | None,
                                                                    other: str, reply: str | None) -> None:
    data = (CAPTURES / capture).read_bytes()
    default = fold(data)
    if lanes is not None:  # (the default lane is the first of these)
        assert [(lane.id, lane.followed) for lane in default.lanes] == [(lane, lane == lanes[0]) for lane in lanes]
    assert other in [lane.id for lane in default.lanes if not lane.followed]
    asked = tr_fold(data, lane=other)
    assert [lane.id for lane in asked.lanes if lane.followed] == [other]
    assert "lane-not-found" not in codes(asked) and asked.choices[0].content != default.choices[0].content
    if reply is not None:
        assert asked.choices[0].content == reply
