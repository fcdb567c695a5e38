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
