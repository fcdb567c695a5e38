"""The generic merger's rules (reference §0) and PARSE-AT-END recovery (trap O8)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from streamfold._toolargs import parse_arguments
from streamfold.merge import Merger


def test_append_joins_in_order_and_ignores_null_and_empty() -> None:
    merger = Merger()
    for frame, piece in enumerate(["a", None, "", "bc", "d"]):
        merger.append(("p",), piece, frame)
    assert merger.text(("p",)) == "abcd"
    buffer = merger.texts[("p",)]
    assert [buffer.frame_at(i) for i in range(4)] == [0, 3, 3, 4]
    assert buffer.frame_at(4) is None and buffer.frame_at(-1) is None
    assert merger.frames_of(("p",)) == (0, 4)


def test_set_once_keeps_the_first_non_empty_value() -> None:
    merger = Merger()
    assert merger.set_once(("id",), "", 0) is None
    assert merger.set_once(("id",), "null", 1) is None  # Mistral's literal "null" (B4)
    assert merger.set_once(("id",), "call_1", 2) == "call_1"
    assert merger.set_once(("id",), "call_2", 3) == "call_1"
    assert merger.get(("id",)) == "call_1"
    assert merger.frames_of(("id",)) == (2, 2)


def test_replace_keeps_the_last_non_null_value() -> None:
    merger = Merger()
    merger.replace(("usage",), {"total": 1}, 0)
    merger.replace(("usage",), None, 1)  # a null never clears (O16)
    merger.replace(("usage",), {"total": 9}, 2)
    assert merger.get(("usage",)) == {"total": 9}
    assert merger.frames_of(("usage",)) == (0, 2)


def test_parse_at_end_empty_buffer_is_an_empty_object() -> None:
    merger = Merger()
    assert merger.parse(("args",), 0).value == {}  # A2: no fragment at all
    merger.append(("ws",), "  \n", 0)
    assert merger.parse(("ws",), 0).value == {}


def test_parse_is_redone_after_a_later_append() -> None:
    merger = Merger()
    merger.append(("a",), '{"x": 1', 0)
    assert merger.parse(("a",), 0).error is not None
    merger.append(("a",), "}", 1)
    assert merger.parse(("a",), 1).value == {"x": 1}


def test_journal_records_changes_only_when_asked() -> None:
    quiet, loud = Merger(), Merger(journal=True)
    for merger in (quiet, loud):
        merger.append((0, "content"), "hi", 3)
        merger.replace((0, "finish_reason"), "stop", 4)
    assert quiet.drain() == []
    assert loud.drain() == [("append", (0, "content"), "hi", 3), ("set", (0, "finish_reason"), "stop", 4)]
    assert loud.drain() == []


@given(st.lists(st.lists(st.text(min_size=1, max_size=4), max_size=6), max_size=6), st.booleans())
def test_extend_is_add_of_each_piece(runs: list[list[str]], journal: bool) -> None:
    """`TextBuffer.extend` (a dialect's run of hot frames) leaves the buffer, its provenance and the
    journal as `add` of each piece would, whatever came before it."""
    by_add, by_extend = Merger(journal=journal), Merger(journal=journal)
    frame = 0
    for pieces in runs:
        frames = list(range(frame, frame + len(pieces)))
        for piece, at in zip(pieces, frames, strict=True):
            by_add.buffer((0, "content")).add(piece, at)
        by_extend.buffer((0, "content")).extend(pieces, frames)
        by_add.append((0, "reasoning"), "|", frame)  # something between the runs, in the journal's order
        by_extend.append((0, "reasoning"), "|", frame)
        frame += len(pieces) + 1
    added, extended = by_add.buffer((0, "content")), by_extend.buffer((0, "content"))
    assert (added.length, list(added.frames), list(added.ends)) == (extended.length, list(extended.frames),
                                                                  list(extended.ends))
    assert added.fragments() == extended.fragments() and added.text() == extended.text()
    assert by_add.drain() == by_extend.drain()


def test_extend_of_a_buffer_past_the_caps_drops_as_add_does() -> None:
    merger = Merger(max_choices=1)
    merger.append((0, "content"), "kept", 0)
    dropped = merger.buffer((1, "content"))
    dropped.extend(["a", "b"], [3, 4])
    assert dropped.text() == "ab" and (1, "content") not in merger.texts


class TestRecovery:
    def test_identical_copies(self) -> None:
        parsed = parse_arguments('{"a": 1}{"a": 1}', [('{"a"', 1), (": 1}", 2), ('{"a": 1}', 3)])
        assert (parsed.value, parsed.recovery, parsed.copies) == ({"a": 1}, "identical-copies", 2)

    def test_cumulative_prefixes(self) -> None:
        fragments = [('{"a"', 1), ('{"a": 1', 2), ('{"a": 1}', 3)]
        parsed = parse_arguments("".join(f for f, _ in fragments), fragments)
        assert (parsed.value, parsed.recovery) == ({"a": 1}, "cumulative")

    def test_chain_of_snapshots_takes_the_last(self) -> None:
        parsed = parse_arguments('{"a":1}{"a":1,"b":2}', [('{"a":1}', 1), ('{"a":1,"b":2}', 2)])
        assert (parsed.value, parsed.recovery) == ({"a": 1, "b": 2}, "cumulative")

    def test_real_fragments_that_happen_to_parse_are_not_snapshots(self) -> None:
        # mcowger/plexus#759: "{}" as a genuine fragment must not be taken for a snapshot.
        parsed = parse_arguments('{"a": {}}', [('{"a": ', 1), ("{}", 2), ("}", 3)])
        assert (parsed.value, parsed.recovery) == ({"a": {}}, None)

    def test_truncated_arguments_keep_the_error_and_position(self) -> None:
        parsed = parse_arguments('{"city": "Os', [('{"city": "Os', 1)])
        assert parsed.value is None and parsed.error == "Unterminated string starting at" and parsed.position == 9
