"""Inputs the mutation fuzzer (test_mutation_fuzz.py) found raising, each reduced to its smallest form:
each now folds to a Result that keeps every invariant (tests/mutations.py `check_result`)."""

from __future__ import annotations

from eventstream_helpers import event
from mutations import check_result
from streamfold import fold
from streamfold.services.rows import frame_rows


def test_a_chat_chunk_whose_tool_calls_are_not_a_list_is_summarised() -> None:
    # The frames listing iterated a float: TypeError in openai_chat/summary.py.
    for calls in (b"Infinity", b"7", b'"x"', b"true"):
        result = fold(b'data: {"choices":[{"delta":{"content":"hi","tool_calls":' + calls + b"}}]}\n\n")
        assert [row["summary"] for row in frame_rows(result)] == ['content "hi"']
        check_result(result)


def test_responses_usage_details_that_are_not_objects_export_as_zeros() -> None:
    # The export's usage copied a list into a dict: ValueError in openai_responses/native.py.
    data = (b'data: {"type":"response.completed","response":{"usage":{"input_tokens":3,'
            b'"input_tokens_details":[{"a":null}],"output_tokens_details":"x"}}}\n\n')
    result = fold(data)
    assert result.dialect == "openai-responses"
    usage = result.export()["usage"]
    assert usage["input_tokens_details"] == {"cached_tokens": 0, "cache_write_tokens": 0}
    assert usage["output_tokens_details"] == {"reasoning_tokens": 0}
    check_result(result)


def test_a_bedrock_block_start_with_an_empty_start_folds_its_text() -> None:
    # `start: {}` looked up the kind it had guessed ("unknown"): KeyError in bedrock.py.
    data = (event("messageStart", {"role": "assistant"})
            + event("contentBlockStart", {"contentBlockIndex": 0, "start": {}})
            + event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "hi"}})
            + event("contentBlockStop", {"contentBlockIndex": 0}) + event("messageStop", {"stopReason": "end_turn"}))
    result = fold(data)
    assert result.dialect == "bedrock"
    assert result.choices[0].content == "hi"
    assert result.export()["output"]["message"]["content"] == [{"text": "hi"}]
    check_result(result)
