"""The `openai-realtime` dialect: every capture's events are what the openai SDK's Realtime types
accept; the fold follows the first response (text or audio transcript, function calls, usage,
status); detection takes Realtime events and leaves Responses ones (over SSE or a WebSocket) to
`openai-responses`; `export` is the `realtime.response` that `response.done` carried."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openai.types.beta.beta_responses_server_event import BetaResponsesServerEvent
from openai.types.beta.realtime import RealtimeServerEvent as BetaRealtimeServerEvent
from openai.types.realtime import RealtimeResponse, RealtimeServerEvent
from pydantic import TypeAdapter

import streamfold
from feeding import tr_fold
from streamfold.dialects import detect, spec_of
from streamfold.dialects.openai_realtime import OpenAIRealtime
from streamfold.dialects.openai_responses import OpenAIResponses
from streamfold.framing.websocket import message_line
from streamfold.services import read_capture

CAPTURES = Path(__file__).resolve().parents[1] / "captures"
REALTIME = sorted(path for path in (CAPTURES / "openai-realtime").iterdir() if path.suffix in (".jsonl", ".ndjson"))
WEBSOCKET = sorted(path for path in (CAPTURES / "websocket").iterdir() if path.suffix in (".jsonl", ".har"))
GA, BETA = TypeAdapter(RealtimeServerEvent), TypeAdapter(BetaRealtimeServerEvent)
RESPONSES_WS = TypeAdapter(BetaResponsesServerEvent)


def received_events(path: Path) -> list[dict[str, Any]]:
    """The server events of a capture: the received text messages of a WebSocket one, or each NDJSON line."""
    body = read_capture(path.read_bytes()).body
    events = []
    for line in body.splitlines():
        value = json.loads(line)
        if set(value) <= {"type", "time", "opcode", "data"} and value.get("type") in ("send", "receive"):
            if value["type"] == "receive" and value.get("opcode", 1) == 1:
                events.append(json.loads(value["data"]))
        else:
            events.append(value)
    return events


def test_there_are_captures_of_both_shapes() -> None:
    assert {path.suffix for path in REALTIME} == {".jsonl", ".ndjson"} and len(REALTIME) >= 8
    assert {path.suffix for path in WEBSOCKET} == {".jsonl", ".har"}


@pytest.mark.parametrize("path", [*REALTIME, *WEBSOCKET], ids=lambda path: f"{path.parent.name}/{path.name}")
def test_every_received_event_is_what_the_openai_sdk_accepts(path: Path) -> None:
    events = received_events(path)
    assert events
    realtime = "event_id" in events[0]
    adapter = (BETA if "beta" in path.name else GA) if realtime else RESPONSES_WS
    for event in events:
        adapter.validate_python(event)  # raises on any field the SDK does not accept
    assert streamfold.fold(read_capture(path.read_bytes()).body).dialect == (
        "openai-realtime" if realtime else "openai-responses")


@pytest.mark.parametrize("path", REALTIME, ids=lambda path: path.name)
def test_each_capture_folds_the_same_however_fed(path: Path) -> None:
    result = tr_fold(path.read_bytes())
    assert result.dialect == "openai-realtime"


def test_detection_takes_realtime_events_only_by_their_event_id() -> None:
    realtime = {"event_id": "event_1", "type": "response.output_text.delta", "response_id": "r", "item_id": "i",
                "output_index": 0, "content_index": 0, "delta": "x"}
    responses = {"type": "response.output_text.delta", "sequence_number": 3, "item_id": "i", "output_index": 0,
                 "content_index": 0, "delta": "x"}
    assert detect(realtime) is OpenAIRealtime and detect(responses) is OpenAIResponses
    assert detect({"event_id": "e", "type": "session.created", "session": {}}) is OpenAIRealtime
    assert detect({"event_id": "e", "type": "error", "error": {"message": "m", "type": "t"}}) is OpenAIRealtime
    # Anthropic's error and other vendors' typed events carry no event_id.
    assert detect({"type": "error", "error": {"type": "overloaded_error", "message": "m"}}) is not OpenAIRealtime
    assert not OpenAIRealtime.claims({"event_id": 1, "type": "response.done"})
    assert not OpenAIRealtime.claims({"event_id": "e", "type": "message_start"})


def test_every_responses_capture_is_still_responses() -> None:
    for path in sorted((CAPTURES / "openai-responses").glob("*.sse")):
        assert streamfold.fold(path.read_bytes()).dialect == "openai-responses", path.name


def test_the_first_response_is_folded_and_the_others_listed() -> None:
    result = streamfold.fold((CAPTURES / "openai-realtime" / "two-responses.jsonl").read_bytes())
    assert result.id == "resp_C9xY4bOne007" and result.choices[0].content == "Hi!"
    listed = next(d for d in result.diagnostics if d.code == "realtime-other-responses")
    assert "resp_C9xY4dTwo008" in listed.message and listed.frame is not None
    frame = json.loads(result.frames[listed.frame].data or "")
    assert frame["type"] == "response.created" and frame["response"]["id"] == "resp_C9xY4dTwo008"
    assert result.usage is not None and result.usage.input_tokens == 120  # the first response's, not the second's


def test_the_audio_reply_text_is_its_transcript_and_the_users_speech_is_not_in_it() -> None:
    result = streamfold.fold((CAPTURES / "openai-realtime" / "audio-transcript.jsonl").read_bytes())
    assert result.choices[0].content == "Octopuses have three hearts and blue blood!"
    assert "octopuses." not in result.choices[0].content  # the user's transcription is the prompt
    exported = result.export()
    assert exported["output"][0]["content"] == [
        {"type": "output_audio", "transcript": "Octopuses have three hearts and blue blood!"}]


def events(*items: dict[str, Any]) -> bytes:
    return b"".join(message_line("receive", json.dumps({"event_id": f"event_{n}", **item}), float(n))
                    for n, item in enumerate(items))


def test_a_beta_session_with_text_and_transcript_keeps_the_first_as_the_reply() -> None:
    base = {"response_id": "r1", "item_id": "i1", "output_index": 0, "content_index": 0}
    body = events({"type": "response.created", "response": {"id": "r1", "object": "realtime.response"}},
                  {"type": "response.audio_transcript.delta", **base, "delta": "spoken"},
                  {"type": "response.text.delta", **base, "delta": "written"},
                  {"type": "response.done", "response": {"id": "r1", "object": "realtime.response",
                                                         "status": "completed"}})
    result = tr_fold(body)
    assert result.choices[0].content == "spoken" and result.native["aside"] == {"text": "written"}


def test_an_error_event_ends_an_open_response_and_only_says_itself_otherwise() -> None:
    error = {"type": "error", "error": {"type": "invalid_request_error", "code": "invalid_value",
                                        "message": "Invalid modalities"}}
    before = tr_fold(events(error, {"type": "response.created", "response": {"id": "r1"}},
                            {"type": "response.done", "response": {"id": "r1", "status": "completed"}}))
    assert before.choices[0].finish_reason == "stop" and [e.code for e in before.errors] == ["in-stream-error"]
    assert "no response was open" in before.errors[0].message and "Invalid modalities" in before.errors[0].message
    assert before.complete is False  # the server sent an error: said, whatever it was about
    during = tr_fold(events({"type": "response.created", "response": {"id": "r1"}}, error))
    assert during.choices[0].finish_reason == "error" and during.complete is False


def test_arguments_that_stream_broken_json_are_a_located_finding() -> None:
    item = {"id": "fc1", "type": "function_call", "call_id": "call_1", "name": "lookup", "arguments": ""}
    body = events({"type": "response.created", "response": {"id": "r1"}},
                  {"type": "response.output_item.added", "response_id": "r1", "output_index": 0, "item": item},
                  {"type": "response.function_call_arguments.delta", "response_id": "r1", "item_id": "fc1",
                   "output_index": 0, "call_id": "call_1", "delta": '{"q": "cut'},
                  {"type": "response.done", "response": {"id": "r1", "status": "incomplete",
                                                         "status_details": {"reason": "max_output_tokens"}}})
    result = tr_fold(body)
    call = result.choices[0].tool_calls[0]
    assert (call.id, call.name, call.arguments, call.parsed) == ("call_1", "lookup", '{"q": "cut', None)
    finding = next(d for d in result.diagnostics if d.code == "tool-args-invalid")
    assert finding.frame == 2 and "max_output_tokens" in finding.message


def test_a_call_that_streamed_no_deltas_takes_its_done_arguments() -> None:
    body = events({"type": "response.created", "response": {"id": "r1"}},
                  {"type": "response.function_call_arguments.done", "response_id": "r1", "item_id": "fc1",
                   "output_index": 0, "call_id": "call_9", "name": "ping", "arguments": '{"n": 1}'},
                  {"type": "response.done", "response": {"id": "r1", "status": "completed"}})
    call = tr_fold(body).choices[0].tool_calls[0]
    assert (call.id, call.name, call.parsed) == ("call_9", "ping", {"n": 1})


@pytest.mark.parametrize("name", ["text-reply.jsonl", "audio-transcript.jsonl", "function-call.jsonl",
                                  "failed-response.jsonl", "max-output-tokens.jsonl"])
def test_export_is_the_response_object_response_done_carried(name: str) -> None:
    path = CAPTURES / "openai-realtime" / name
    done = next(event for event in received_events(path) if event["type"] == "response.done")["response"]
    exported = streamfold.fold(path.read_bytes()).export()
    RealtimeResponse.model_validate(exported)
    for key in ("id", "object", "status", "status_details", "conversation_id", "output_modalities", "usage"):
        assert exported[key] == done[key], key
    def facts(output: list[dict[str, Any]]) -> list[Any]:
        return [(item["id"], item["type"], item["status"], item.get("call_id"), item.get("name"), item.get("arguments"),
                 [part.get("text") or part.get("transcript") for part in item.get("content", ())]) for item in output]
    assert facts(exported["output"]) == facts(done["output"])
    read = spec_of(OpenAIRealtime).read_response(exported)
    assert read is not None and read == spec_of(OpenAIRealtime).read_response({"type": "response.done", "response": done})


def test_a_json_round_trip_exports_the_same() -> None:
    result = streamfold.fold((CAPTURES / "openai-realtime" / "function-call.jsonl").read_bytes())
    again = streamfold.Result.from_dict(json.loads(json.dumps(result.to_dict())))
    assert again.export() == result.export()


def test_the_frames_table_says_what_each_event_carries() -> None:
    summaries = [spec_of(OpenAIRealtime).summary(event) for event in
                 received_events(CAPTURES / "openai-realtime" / "audio-transcript.jsonl")]
    assert "response.output_audio_transcript.delta \"Octopuses\"" in summaries
    assert any(line.startswith("response.output_audio.delta (") and "base64" in line for line in summaries)
    assert any(line.startswith("response.done resp_C9xU0bAud1o3, status completed, usage") for line in summaries)


def test_the_replay_server_resends_argument_deltas_cumulatively_per_item() -> None:
    """`serve --fault cumulative-args` (an NDJSON capture of server events): each delta becomes everything
    its call was sent so far; another call's deltas and other events are left alone."""
    rewrite = spec_of("openai-realtime").replay.cumulative_arguments()  # type: ignore[union-attr]
    assert rewrite is not None

    def delta(item: str, text: str) -> dict[str, object]:
        return {"type": "response.function_call_arguments.delta", "event_id": "e", "item_id": item, "delta": text}

    assert rewrite(None, delta("a", '{"x"')) is None
    assert rewrite(None, delta("b", "{")) is None
    assert rewrite(None, delta("a", ": 1}")) == delta("a", '{"x": 1}')
    assert rewrite(None, {"type": "response.done", "event_id": "e"}) is None
