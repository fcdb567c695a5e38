"""`check`: what a client built, compared with the reference fold.

`check` reports the first divergence with its character offset, the frame
that produced the reference character there, and a probable cause in plain
words, found by trying the mistakes clients really make: frames dropped,
the last frame lost, glued frames skipped, reasoning mixed into the reply,
text doubled, tool-call arguments merged across calls.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..dialects import opaque_state
from ..findings import location
from ..opaque import Kept, Opaque, kept
from ..result import Result, ToolCall
from .diff import CHOICE_FIELDS, Summary, compare, summary_of_response

__all__ = ["Divergence", "check_reply"]

#: The fields `check` compares: the reply text, and each tool call's name and arguments.
CHECKED = ("content", "name", "parsed")
_FINISH = next(item for item in CHOICE_FIELDS if item.key == "finish_reason")


@dataclass(frozen=True, slots=True)
class Divergence:
    """Where a client's output first differs from the reference, and why it probably does."""

    field: str
    offset: int
    #: The reference's and the client's values there (text from that character on, a count, a name): JSON values.
    expected: Any
    got: Any
    frame: int | None
    line: int | None
    cause: str
    #: The frame's byte offset and the transport, for a binary stream's location (message, byte).
    byte: int | None = None
    transport: str | None = None
    #: For opaque state (a signature, encrypted reasoning): what the value is; `field` is its path in the export.
    opaque: str | None = None

    def message(self) -> str:
        where = f" ({location(self.frame, self.byte, self.line, self.transport)})" if self.frame is not None else ""
        # Values as JSON ("Hi", not Python's 'Hi'), as `diff` shows them.
        expected, got = (json.dumps(value, ensure_ascii=False) for value in (self.expected, self.got))
        if self.opaque is not None:
            state = "is missing" if self.got is None else "differs"
            return (f"{self.field} ({self.opaque}) {state}{where}: the reference has {expected}, the client has "
                    f"{got}. Probable cause: {self.cause}")
        return (f"{self.field} differs at character {self.offset}{where}: the reference has {expected}, "
                f"the client has {got}. Probable cause: {self.cause}")


def check_reply(result: Result, expected_value: Any, *, choice: int = 0) -> list[Divergence]:
    """Compare what a client built (its text, its object as a dict, or an SDK's pydantic object)
    with the reference fold; an empty list means they agree.

    The fields compared are `diff`'s (`CHECKED` of them); a divergence says where and why. Text
    given as text may end with one newline the reference does not have (every editor, `echo` and
    `jq -r` write one): it is not counted as a difference. A client's object (not plain text)
    must also have kept the reply's opaque state, each value the next request sends back
    (`streamfold.opaque`): a signature or encrypted reasoning it dropped or changed is a
    divergence too, named with the frame that carried it.
    """
    if hasattr(expected_value, "model_dump"):  # an SDK's final object (pydantic); bytes stay bytes
        expected_value = expected_value.model_dump()
    opaque = [] if isinstance(expected_value, str) else _opaque_divergences(result, expected_value, choice)
    if isinstance(expected_value, str):
        expected_value = _without_final_newline(expected_value, result, choice)
    client = summary_of_response(expected_value, choice=choice, calls_when_absent=False)
    reference = result.choice(choice)
    differing = [found for found in compare(Summary(result, choices=frozenset({choice})), client, only=CHECKED)
                 if not found.same]
    (built,) = client.result.choices
    divergences: list[Divergence] = []
    content = reference.content if reference else ""
    if any(found.field == "content" for found in differing) and built.content != content:
        # A client that tells the reply's finish reason read the frame that carries it: it read to the end.
        read_to_end = client.tells(_FINISH) and reference is not None and reference.finish_reason is not None \
            and built.finish_reason == reference.finish_reason
        divergences.append(_text_divergence(result, choice, content, built.content, read_to_end))
    if client.tells_calls and reference is not None:
        if len(built.tool_calls) != len(reference.tool_calls):
            divergences.append(_count_divergence(reference.tool_calls, built.tool_calls))
        else:
            divergences.extend(_tool_divergence(result, choice, found.tool, found.field,
                                                reference.tool_calls[found.tool], built.tool_calls[found.tool])
                               for found in differing if found.tool is not None)
    return divergences + opaque


def _opaque_divergences(result: Result, client: Any, choice: int) -> list[Divergence]:
    """A divergence for each opaque value of choice `choice` the client dropped or changed."""
    divergences = []
    for item in opaque_state(result):
        if item.choice != choice:
            continue
        state, held = kept(client, item)
        if state is Kept.KEPT:
            continue
        frame = result.frames[item.frame] if item.frame is not None and item.frame < len(result.frames) else None
        divergences.append(Divergence(
            item.path, 0, _clipped(item.value), None if held is None else _clipped(held), item.frame,
            frame.line if frame is not None else None, _opaque_cause(item, held),
            frame.offset if frame is not None else None, result.transport, opaque=item.what))
    return divergences


def _opaque_cause(item: Opaque, held: Any) -> str:
    carried = f"frame {item.frame}" if item.frame is not None else "the stream"
    name = item.names[0]
    if held is None:
        return (f"the client dropped the {item.what} that {carried} carried: the next request that sends this "
                f"turn back is refused (a 400 from the API). Keep `{name}` exactly as received")
    if isinstance(held, str) and item.value in held and held != item.value:
        return (f"the client's {item.what} holds the reference's and more: it appended the pieces where each "
                "one replaces the last")
    if isinstance(held, str) and held and item.value.startswith(held):
        return f"the client's {item.what} stops early: the part after it was lost (a later frame replaced it)"
    return (f"the client's `{name}` differs from the one {carried} carried: changed, re-encoded, or taken from "
            "another block")


def _clipped(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        value = f"<{len(value)} bytes>"
    return value if not isinstance(value, str) or len(value) <= 24 else value[:24] + "…"


def _without_final_newline(text: str, result: Result, choice: int) -> str:
    found = result.choice(choice)
    reference = found.content if found is not None else ""
    for newline in ("\r\n", "\n"):
        if text.endswith(newline) and not reference.endswith(newline):
            return text[: -len(newline)]
    return text


def _text_divergence(result: Result, choice: int, reference: str, client: str, read_to_end: bool) -> Divergence:
    at = next((i for i, (a, b) in enumerate(zip(reference, client)) if a != b), min(len(reference), len(client)))
    frame = result.frame_producing_char(at, choice=choice, field="content") if at < len(reference) else None
    return Divergence("content", at, reference[at : at + 20], client[at : at + 20],
                      frame.index if frame else None, frame.line if frame else None,
                      _text_cause(result, choice, reference, client, read_to_end), frame.offset if frame else None,
                      result.transport)


def _text_cause(result: Result, choice: int, reference: str, client: str, read_to_end: bool) -> str:
    if reference.rstrip() == client.rstrip():
        return ("the only difference is whitespace or newlines at the end of the text: the stream is not at "
                "fault (an editor, echo or print may have added them, or the client strips them)")
    runs = result.text_runs(choice=choice, field="content")
    dropped = _dropped_frames(reference, runs, client)
    if dropped is not None and dropped:
        frames = ", ".join(str(f) for f in dropped[:8]) + ("…" if len(dropped) > 8 else "")
        glued = {d.frame for d in result.diagnostics if d.code == "glued-frames"}
        last_frames = {run[2] for run in runs[-len(dropped):]}
        if set(dropped) <= glued:
            return (f"the client lost the text of frame(s) {frames}, which hold two JSON documents each (a lost "
                    "blank line glued them): it parsed each frame as one document and dropped it")
        # Stopped reading: the text of the frames before is whole and the client read no further. Frames lost
        # whole while it read on (or while it kept none at all) are what a client that parses each network
        # read on its own loses: a frame split across two reads fails to parse in both halves.
        if set(dropped) == last_frames and client and client == reference[: len(client)] and not read_to_end:
            return (f"the client lost the last frame(s) {frames}: it stopped reading before the stream ended "
                    "(a final frame without its blank line, or the finish_reason taken as the end); or, if it "
                    "parses each network read on its own, they were split across two reads")
        kept = "kept no frame's text" if not client else "read on to the end" if read_to_end else \
            "kept everything around them"
        return (f"the client dropped frame(s) {frames} and {kept}: a frame split across two network reads, "
                "which a client that parses each read on its own loses (it must keep the bytes until the blank "
                "line that ends the frame); or frames that never reached it")
    found = result.choice(choice)
    reasoning = found.reasoning if found is not None else None
    if reasoning and reasoning[:40] in client:
        return "the client mixed the reasoning into the reply text (read reasoning_content/reasoning as content)"
    if len(client) > len(reference) and all(piece in client for piece in (reference[:20], reference[-20:])):
        return "the client's text is longer: it appended something twice (a cumulative resend or a repeated frame)"
    if client and reference.startswith(client):
        return "the client's text stops early: the end of the stream was lost"
    return "the client's text differs here; look at this frame's raw bytes (streamfold frames)"


def _dropped_frames(reference: str, runs: list[tuple[int, int, int]], client: str) -> list[int] | None:
    """If `client` is the reference with some frames' text left out, which frames; else None."""
    dropped: list[int] = []
    position = 0
    for start, end, frame in runs:
        piece = reference[start:end]
        if client.startswith(piece, position):
            position += len(piece)
        else:
            dropped.append(frame)
    return dropped if position == len(client) else None


def _count_divergence(ours: tuple[ToolCall, ...], theirs: tuple[ToolCall, ...]) -> Divergence:
    names = ", ".join(str(call.name) for call in ours)
    cause = f"the client has {len(theirs)} tool call(s), the reference {len(ours)} ({names})"
    if len(theirs) < len(ours) and any(
            sum(1 for call in ours if call.arguments and call.arguments in client.arguments) > 1 for client in theirs):
        cause += ": the client merged separate calls' arguments into one (keyed by name, or a missing or reused index)"
    return Divergence("tool_calls", 0, len(ours), len(theirs), None, None, cause)


def _tool_divergence(result: Result, choice: int, position: int, field: str, ours: ToolCall,
                     theirs: ToolCall) -> Divergence:
    if field == "name":
        return Divergence(f"tool:{position} name", 0, ours.name, theirs.name, None, None,
                          "the client's tool name differs (names concatenated from repeated fragments?)")
    arguments, client_arguments = ours.arguments, theirs.arguments
    if client_arguments == arguments:
        # The raw join is what the client kept, but the fragments repeat: the reference recovered the arguments.
        return Divergence(f"tool:{position} arguments", 0, json.dumps(ours.parsed, ensure_ascii=False)[:20],
                          client_arguments[:20], None, None,
                          "the client joined the fragments as they came, but they repeat earlier ones: the "
                          "reference recovered the arguments from them (see the cumulative-resend finding)")
    at = next((i for i, (a, b) in enumerate(zip(arguments, client_arguments)) if a != b),
              min(len(arguments), len(client_arguments)))
    frame = result.frame_producing_char(min(at, max(0, len(arguments) - 1)), choice=choice, field=f"tool:{position}")
    cause = "the client's arguments differ here"
    if client_arguments.startswith(arguments) and len(client_arguments) > len(arguments):
        cause = "the client's arguments run on past this call's: another call's fragments were appended to it"
    elif arguments.startswith(client_arguments):
        cause = "the client's arguments stop early: fragments after this point were lost"
    return Divergence(f"tool:{position} arguments", at, arguments[at : at + 20], client_arguments[at : at + 20],
                      frame.index if frame else None, frame.line if frame else None, cause,
                      frame.offset if frame else None, result.transport)
