"""What ai 7's reader makes of two chunks, as pure functions of the values: a tool part's `approval`, and
the pieces of text a reset step leaves."""

from __future__ import annotations

from typing import Any

__all__ = ["approval", "kept_pieces"]


def approval(value: dict[str, Any]) -> dict[str, Any]:
    """A tool part's `approval` as ai 7's reader makes it of a `tool-approval-request` (ai 6's has the id alone)."""
    made: dict[str, Any] = {"id": value.get("approvalId")}
    if value.get("approvalDescriptor") is not None:
        made["descriptor"] = value["approvalDescriptor"]
    if "inputSchemaInput" in value:
        made["inputSchemaInput"] = value["inputSchemaInput"]
    if value.get("reason") is not None:
        made["requestReason"] = value["reason"]
    if value.get("isAutomatic") is True:
        made["isAutomatic"] = True
    if value.get("signature") is not None:
        made["signature"] = value["signature"]
    return made


def kept_pieces(fragments: list[tuple[str, int]], runs: list[list[int]]) -> list[tuple[str, int]]:
    """The text of `runs` ([start, end] offsets into the text `fragments` make, as (piece, frame) pairs) in
    the order it came, each piece with its frame; each run is moved to where its text is in the result.
    One walk of the fragments, whatever the runs."""
    pieces: list[tuple[str, int]] = []
    length = position = piece_start = 0
    for start, end, run in sorted((run[0], run[1], run) for run in runs):
        while position < len(fragments) and piece_start + len(fragments[position][0]) <= start:
            piece_start += len(fragments[position][0])
            position += 1
        run[0] = length
        at, at_start = position, piece_start
        while at < len(fragments) and at_start < end:
            piece, frame = fragments[at]
            taken = piece[max(start - at_start, 0):end - at_start]
            if taken:
                pieces.append((taken, frame))
                length += len(taken)
            at_start += len(piece)
            at += 1
        run[1] = length
    return pieces
