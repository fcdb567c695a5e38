"""The built-in tool events of a Responses stream (custom tool input, MCP arguments and listings, code
interpreter code, apply_patch diffs, shell commands and output, image generation partials): every event type of
openai-python's `ResponseStreamEvent` union is known (read from the SDK itself), the streamed fields APPEND and
their `.done` REPLACEs, the items stay out of `tool_calls`, and an item cut before its final form is exported with
what the stream built."""

from __future__ import annotations

import json
import os
import typing
from pathlib import Path
from typing import Any

import pytest

from streamfold import Result, fold
from streamfold.dialects import spec_of
from streamfold.dialects.openai_responses import OpenAIResponses

CAPTURES = Path(__file__).resolve().parents[1] / "captures" / "openai-responses"
REALWORLD = Path(os.environ.get("STREAMFOLD_REALWORLD", "/work/shared/realworld")) / "cases"


class Stream:
    """Builds a Responses SSE body with consecutive sequence numbers."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.add("response.created", response={"id": "resp_1", "object": "response", "status": "in_progress",
                                                "model": "gpt-5.1", "output": [], "created_at": 1})

    def add(self, kind: str, **fields: Any) -> Stream:
        self.events.append({"type": kind, "sequence_number": len(self.events), **fields})
        return self

    def item(self, index: int, **item: Any) -> Stream:
        return self.add("response.output_item.added", output_index=index, item=item)

    def done(self, index: int, **item: Any) -> Stream:
        return self.add("response.output_item.done", output_index=index, item=item)

    def body(self) -> bytes:
        return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in self.events)

    def fold(self) -> Result:
        return fold(self.body())


def codes(result: Result) -> set[str]:
    return {f.code for f in (*result.errors, *result.diagnostics)}


def _sdk_event_types() -> list[str]:
    from openai.types.responses import ResponseStreamEvent

    members = typing.get_args(typing.get_args(ResponseStreamEvent)[0]) \
        if typing.get_origin(ResponseStreamEvent) is typing.Annotated else typing.get_args(ResponseStreamEvent)
    return sorted(typing.get_args(member.model_fields["type"].annotation)[0] for member in members)


pytest.importorskip("openai")
SDK_EVENTS = _sdk_event_types()


def test_the_sdk_union_is_read() -> None:
    assert len(SDK_EVENTS) >= 59 and "response.mcp_call_arguments.delta" in SDK_EVENTS


@pytest.mark.parametrize("kind", SDK_EVENTS)
def test_every_event_of_the_sdk_union_is_known(kind: str) -> None:
    stream = Stream().item(0, id="x_1", type="message", role="assistant", content=[], status="in_progress")
    result = stream.add(kind, output_index=0, item_id="x_1").fold()
    assert "unknown-event" not in codes(result)


@pytest.mark.parametrize("kind", ["response.apply_patch_call_operation_diff.delta",
                                  "response.apply_patch_call_operation_diff.done"])
def test_the_apply_patch_events_the_sdk_lacks_are_known(kind: str) -> None:
    result = Stream().add(kind, output_index=0, item_id="apc_1", delta="+x", diff="+x").fold()
    assert "unknown-event" not in codes(result)


def test_a_truly_unknown_event_is_still_named() -> None:
    result = Stream().add("response.hologram_call.delta", output_index=0, delta="x").fold()
    (finding,) = [d for d in result.diagnostics if d.code == "unknown-event"]
    assert finding.severity == "info" and "response.hologram_call.delta" in finding.message


def test_the_real_apply_patch_stream_folds_clean_and_its_diff_is_exported() -> None:
    path = REALWORLD / "oai_resp_apply_patch.stream"
    if not path.exists():
        pytest.skip("the realworld corpus is not on this machine")
    result = fold(path.read_bytes())
    assert codes(result) == set()
    (item,) = result.export()["output"]
    assert item["operation"]["diff"].startswith("+## Shopping Checklist\n")
    assert [b.type for b in result.choices[0].blocks] == ["apply_patch_call"]
    assert result.choices[0].tool_calls == ()


def test_a_cut_apply_patch_call_exports_the_appended_diff() -> None:
    result = fold((CAPTURES / "r-apply-patch-diff-cut-by-error.sse").read_bytes())
    (item,) = result.export()["output"]
    assert item["operation"] == {"type": "update_file", "diff": "@@ -1 +1 @@\n-old line\n+new line\n",
                                 "path": "notes.md"}
    assert item["call_id"] == "call_P4tch" and result.choices[0].tool_calls == ()


def test_cut_items_are_exported_with_every_streamed_field() -> None:
    stream = (Stream()
              .item(0, id="ctc_1", type="custom_tool_call", call_id="call_1", name="run_sql", input="")
              .add("response.custom_tool_call_input.delta", output_index=0, item_id="ctc_1", delta="SELECT ")
              .add("response.custom_tool_call_input.delta", output_index=0, item_id="ctc_1", delta="1;")
              .item(1, id="mcp_1", type="mcp_call", server_label="s", name="f", arguments="")
              .add("response.mcp_call_arguments.delta", output_index=1, item_id="mcp_1", delta='{"a":')
              .add("response.mcp_call_arguments.delta", output_index=1, item_id="mcp_1", delta="1}")
              .item(2, id="ci_1", type="code_interpreter_call", code="", container_id="c", status="in_progress")
              .add("response.code_interpreter_call_code.delta", output_index=2, item_id="ci_1", delta="print(1)")
              .item(3, id="sh_1", type="shell_call", call_id="call_3", status="in_progress", action={"commands": []})
              .add("response.shell_call_command.added", output_index=3, command_index=0, command="ls")
              .add("response.shell_call_command.delta", output_index=3, command_index=0, delta=" -l")
              .add("response.shell_call_command.added", output_index=3, command_index=1, command="pwd")
              .item(4, id="sho_1", type="shell_call_output", call_id="call_3", status="in_progress", output=[])
              .add("response.shell_call_output_content.delta", output_index=4, item_id="sho_1", command_index=0,
                   delta={"stdout": "a\n"})
              .add("response.shell_call_output_content.delta", output_index=4, item_id="sho_1", command_index=0,
                   delta={"stderr": "warn\n", "stdout": "b\n"}))
    result = stream.fold()  # cut: no final items, no terminal event
    output = result.export()["output"]
    assert output[0]["input"] == "SELECT 1;"
    assert output[1]["arguments"] == '{"a":1}'
    assert output[2]["code"] == "print(1)"
    assert output[3]["action"] == {"commands": ["ls -l", "pwd"]}
    assert output[4]["output"] == [{"stdout": "a\nb\n", "stderr": "warn\n"}]
    choice = result.choices[0]
    assert choice.tool_calls == () and choice.content == ""
    assert [b.type for b in choice.blocks] == ["custom_tool_call", "mcp_call", "code_interpreter_call", "shell_call",
                                               "shell_call_output"]
    assert codes(result) == {"missing-terminal"}
    assert result.export() == result.export()  # exporting changes nothing it exports from


def test_a_done_value_replaces_the_deltas_and_a_different_one_is_reported() -> None:
    stream = (Stream()
              .item(0, id="ci_1", type="code_interpreter_call", code="", container_id="c", status="in_progress")
              .add("response.code_interpreter_call_code.delta", output_index=0, item_id="ci_1", delta="print(1")
              .add("response.code_interpreter_call_code.done", output_index=0, item_id="ci_1", code="print(1)"))
    result = stream.fold()
    assert result.export()["output"][0]["code"] == "print(1)"
    (finding,) = [d for d in result.diagnostics if d.code == "done-mismatch"]
    assert finding.frame == 3 and finding.details["kept"] == "done"


def test_an_empty_done_value_next_to_deltas_keeps_the_deltas() -> None:
    stream = (Stream()
              .item(0, id="ctc_1", type="custom_tool_call", call_id="c", name="n", input="")
              .add("response.custom_tool_call_input.delta", output_index=0, item_id="ctc_1", delta="x")
              .add("response.custom_tool_call_input.done", output_index=0, item_id="ctc_1", input=""))
    result = stream.fold()
    assert result.export()["output"][0]["input"] == "x"
    (finding,) = [d for d in result.diagnostics if d.code == "done-mismatch"]
    assert finding.details["kept"] == "deltas"


def test_a_final_item_that_disagrees_with_its_deltas_wins_and_is_reported() -> None:
    stream = (Stream()
              .item(0, id="apc_1", type="apply_patch_call", call_id="c", status="in_progress",
                    operation={"type": "create_file", "diff": "", "path": "a"})
              .add("response.apply_patch_call_operation_diff.delta", output_index=0, item_id="apc_1", delta="+a\n")
              .done(0, id="apc_1", type="apply_patch_call", call_id="c", status="completed",
                    operation={"type": "create_file", "diff": "+b\n", "path": "a"}))
    result = stream.fold()
    assert result.export()["output"][0]["operation"]["diff"] == "+b\n"
    (finding,) = [d for d in result.diagnostics if d.code == "done-mismatch"]
    assert "operation.diff" in finding.message and finding.frame == 3


def test_an_event_for_an_item_of_another_type_is_ignored_and_said() -> None:
    stream = (Stream().item(0, id="msg_1", type="message", role="assistant", content=[], status="in_progress")
              .add("response.mcp_call_arguments.delta", output_index=0, item_id="msg_1", delta="{}"))
    result = stream.fold()
    assert "unexpected-payload" in codes(result)
    assert result.export()["output"][0].get("arguments") is None


def test_an_image_partial_is_a_preview_never_the_result() -> None:
    stream = (Stream().item(0, id="ig_1", type="image_generation_call", status="in_progress")
              .add("response.image_generation_call.partial_image", output_index=0, item_id="ig_1",
                   partial_image_index=0, partial_image_b64="AAAA"))
    result = stream.fold()
    assert "result" not in result.export()["output"][0]
    assert codes(result) == {"missing-terminal"}


def test_the_builtin_capture_folds_clean_with_nothing_in_tool_calls() -> None:
    result = fold((CAPTURES / "r-builtin-tool-items-streamed-fields.sse").read_bytes())
    assert codes(result) == set()
    assert result.choices[0].tool_calls == ()
    output = result.export()["output"]
    assert [item["type"] for item in output] == ["mcp_list_tools", "mcp_call", "code_interpreter_call",
                                                 "image_generation_call", "custom_tool_call", "shell_call",
                                                 "shell_call_output", "message"]


@pytest.mark.parametrize(("event", "line"), [
    ({"type": "response.apply_patch_call_operation_diff.done", "output_index": 0, "diff": "+a"},
     'apply_patch_call_operation_diff.done [0] "+a"'),
    ({"type": "response.shell_call_command.added", "output_index": 1, "command_index": 2, "command": "ls"},
     'shell_call_command.added [1:2] "ls"'),
    ({"type": "response.shell_call_output_content.delta", "output_index": 1, "command_index": 0,
      "delta": {"stdout": "a"}}, 'shell_call_output_content.delta [1:0] stdout "a"'),
    ({"type": "response.image_generation_call.partial_image", "output_index": 3, "partial_image_index": 1,
      "partial_image_b64": "AAAA"}, "image_generation_call.partial_image [3] partial image 1 (4 base64 chars)"),
    ({"type": "response.custom_tool_call_input.done", "output_index": 0, "input": "SELECT 1"},
     'custom_tool_call_input.done [0] "SELECT 1"'),
])
def test_summary_lines(event: dict[str, Any], line: str) -> None:
    assert spec_of(OpenAIResponses).summary(event) == line
