"""The fault vocabulary: every SPEC of the issue parses to its kind and parameters, a bad one is a
usage error that shows the kind's usage, and a fault a capture cannot take is refused with a sentence."""

from __future__ import annotations

import pytest

from replay_helpers import by_name
from streamfold.replay import FAULTS, FaultError, ReplayServer, parse_fault
from streamfold.replay.faults import refusal

TRANSPARENT = {"chunk", "split-utf8", "crlf", "cr", "nospace", "keepalive", "bom", "fields", "stall", "slow"}
DESTRUCTIVE = {"cut", "glue", "drop", "duplicate", "corrupt", "no-terminal", "strip-events", "http-error",
               "error-event", "cumulative-args", "reorder"}


def test_the_vocabulary_is_the_issues_closed_set_each_with_what_a_client_must_build() -> None:
    assert {name for name, kind in FAULTS.items() if kind.transparent} == TRANSPARENT
    assert {name for name, kind in FAULTS.items() if not kind.transparent} == DESTRUCTIVE
    assert all(len(kind.client) > 20 for kind in FAULTS.values())


@pytest.mark.parametrize("spec, kind, number, second, seconds, random", [
    ("chunk:1", "chunk", 1, None, None, False),
    ("chunk:random", "chunk", None, None, None, True),
    ("split-utf8", "split-utf8", None, None, None, False),
    ("keepalive:3", "keepalive", 3, None, None, False),
    ("stall:4:2.5", "stall", 4, None, 2.5, False),
    ("slow:20", "slow", 20, None, None, False),
    ("cut:7", "cut", 7, None, None, False),
    ("cut:7:12", "cut", 7, 12, None, False),
    ("glue:2", "glue", 2, None, None, False),
    ("http-error:429", "http-error", 429, None, None, False),
    ("error-event:5", "error-event", 5, None, None, False),
    ("reorder:3,4", "reorder", 3, 4, None, False),
    ("no-terminal", "no-terminal", None, None, None, False),
])
def test_a_spec_parses_to_its_kind_and_parameters(spec: str, kind: str, number: int | None, second: int | None,
                                                  seconds: float | None, random: bool) -> None:
    fault = parse_fault(spec)
    assert (fault.kind, fault.number, fault.second, fault.seconds, fault.random) == (kind, number, second, seconds,
                                                                                     random)
    assert fault.spec == spec


@pytest.mark.parametrize("spec, said", [
    ("chunky:3", "no such fault; the faults are chunk:N|random"),
    ("chunk", "usage is chunk:N|random"),
    ("chunk:0", "N|random must be a whole number of at least 1"),
    ("chunk:-2", "must be a whole number"),
    ("cut:x", "FRAME must be a whole number"),
    ("cut:1:2:3", "usage is cut:FRAME[:BYTE]"),
    ("bom:1", "it takes no parameter"),
    ("http-error:200", "STATUS must be an HTTP error status, 400 to 599"),
    ("stall:3", "usage is stall:FRAME:SECONDS"),
    ("stall:3:soon", "SECONDS must be a number"),
    ("reorder:3", "usage is reorder:A,B"),
    ("reorder:3,3", "two different frames"),
])
def test_a_bad_spec_is_a_usage_error_that_shows_the_usage(spec: str, said: str) -> None:
    with pytest.raises(FaultError, match=None) as caught:
        parse_fault(spec)
    assert said in str(caught.value) and repr(spec) in str(caught.value)


@pytest.mark.parametrize("name, specs, said", [
    ("ollama/generate-stream", ["cr"], "defined for sse streams only; this capture is ndjson"),
    ("ollama/generate-stream", ["strip-events"], "defined for sse streams only"),
    ("bedrock/converse-reasoning-tool-call", ["corrupt:1"], "this capture is aws-eventstream"),
    ("bedrock/converse-reasoning-tool-call", ["http-error:500"], "does not know the bedrock dialect's HTTP error"),
    ("gemini/g3-parallel-calls-same-tool", ["cumulative-args"], "Gemini sends each function call's arguments whole"),
    ("ollama/b3-chat-thinking-tool-call", ["cumulative-args"], "Ollama sends each tool call whole"),
    ("tgi/generate-stream-example", ["error-event:1"], "does not know the tgi dialect's in-stream error"),
    ("cohere/thinking-reply", ["no-terminal"], "how a cohere stream says it is over"),
    ("examples/openai-plain-text", ["cut:54"], "the capture has 54 frame(s), numbered 0 to 53"),
    ("examples/openai-plain-text", ["crlf", "cr"], "both rewrite the line ends"),
    ("examples/openai-plain-text", ["http-error:500", "drop:1"], "combines with no other destructive fault"),
    ("examples/openai-plain-text", ["chunk:1", "chunk:2"], "--fault chunk is given twice"),
])
def test_a_fault_the_capture_cannot_take_is_refused_with_a_sentence(name: str, specs: list[str], said: str) -> None:
    recording = by_name(name)
    faults = [parse_fault(spec) for spec in specs]
    sentence = refusal(faults, transport=recording.transport, dialect=recording.dialect, frames=len(recording.frames))
    assert sentence is not None and said in sentence
    with pytest.raises(FaultError, match=recording.name):  # the server refuses it when it is made
        ReplayServer([recording], faults)


def test_the_same_faults_are_accepted_where_they_apply() -> None:
    for name, spec in (("examples/openai-plain-text", "cumulative-args"), ("anthropic/a2-tool-no-arguments", "cr"),
                       ("ollama/generate-stream", "crlf"), ("gemini/g3-parallel-calls-same-tool", "no-terminal"),
                       ("bedrock/converse-reasoning-tool-call", "cut:2"), ("openai-responses/r-refusal",
                                                                          "error-event:3")):
        ReplayServer([by_name(name)], [parse_fault(spec)])


def test_a_cut_byte_past_the_frame_is_refused_at_startup() -> None:
    recording = by_name("examples/openai-plain-text")
    with pytest.raises(FaultError, match="BYTE must be below 359"):
        ReplayServer([recording], [parse_fault("cut:0:359")])
