"""What the long mutation fuzz found, kept as plain cases: a value of the wrong type where a
dialect expected a string or a list reached a set lookup or `len()` and raised."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from feeding import tr_fold
from streamfold.cli import cli


def test_a_cohere_v1_event_type_that_is_a_list_is_no_event_type() -> None:
    data = (b'{"is_finished": false, "event_type": [[[]]], "generation_id": "g"}\n'
            b'{"is_finished": false, "event_type": "text-generation", "text": "Oslo"}\n'
            b'{"is_finished": true, "event_type": "stream-end", "finish_reason": "COMPLETE", '
            b'"response": {"text": "Oslo", "generation_id": "g"}}\n')
    result = tr_fold(data)
    assert result.dialect == "cohere-v1" and result.choices[0].content == "Oslo"


def test_an_ag_ui_state_delta_that_is_no_list_is_summarised_in_the_frames_table(tmp_path: Path) -> None:
    capture = tmp_path / "run.sse"
    capture.write_bytes(b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n'
                        b'data: {"type":"STATE_DELTA","delta":true}\n\n'
                        b'data: {"type":"RUN_FINISHED","threadId":"t","runId":"r"}\n\n')
    done = CliRunner().invoke(cli, ["frames", str(capture)], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert done.exception is None or isinstance(done.exception, SystemExit), done.exception
    assert "STATE_DELTA 0 operation(s)" in done.stdout
    assert tr_fold(capture.read_bytes()).dialect == "ag-ui"


def test_a_realtime_response_done_whose_output_is_a_number_still_finishes_the_reply() -> None:
    # `for item in response.get("output") or ()` iterated an int (the million-input fuzz of issue 20).
    data = (b'{"type":"response.created","event_id":"e1","response":{"id":"r","object":"realtime.response",'
            b'"status":"in_progress","output":[]}}\n'
            b'{"type":"response.output_text.delta","event_id":"e2","response_id":"r","item_id":"i",'
            b'"output_index":0,"content_index":0,"delta":"Hi"}\n'
            b'{"type":"response.done","event_id":"e3","response":{"id":"r","object":"realtime.response",'
            b'"status":"completed","output":7}}\n')
    result = tr_fold(data, dialect="openai-realtime")
    assert result.choices[0].content == "Hi" and result.choices[0].finish_reason == "stop"
