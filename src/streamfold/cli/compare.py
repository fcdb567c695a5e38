"""The commands that compare: `check` (a client's output against the reference)
and `diff` (two captures, or a capture and a non-streaming response). What
they compare is the services layer's (`services.diff`); this module prints it."""

from __future__ import annotations

import json
import sys
from typing import Any

import click
from rich.text import Text

from ..result import Result
from ..services.check import check_reply
from ..services.diff import Summary, UnreadableReplyError, diff_frames, diff_results, summary_of_response
from ..services.rows import frame_summary
from .common import (
    EXIT_MISMATCH,
    console,
    dialect_option,
    input_options,
    load_capture,
    read_input,
    transport_option,
)

__all__ = ["check", "diff"]


@click.command()
@input_options
@click.option("--expect", "expected", required=True, metavar="OUTPUT",
              help="What the client built: a file with its text or its JSON message/completion object, or - for stdin.")
@click.option("--choice", type=int, default=0, show_default=True)
@dialect_option
@transport_option
def check(capture: str, input_format: str, entry: str | None, expected: str, choice: int, dialect: str | None,
          transport: str | None) -> None:
    """Compare what a client built with streamfold's reference; exit 1 at the first divergence.

    OUTPUT is the client's text, or its JSON (a ChatCompletion, an Anthropic
    Message, a Responses object, a message dict). The report names the first
    differing character, the frame that produced the reference character there,
    and a probable cause (a dropped frame, glued frames, reasoning mixed in,
    tool arguments merged, a lost final frame).

    \b
    Examples:
      streamfold check capture.sse --expect client-output.txt
      my-client | streamfold check capture.sse --expect -
    """
    result = load_capture(capture, input_format, entry, dialect, transport).result
    raw = read_input(expected).decode("utf-8", "replace")
    shown = console()
    try:
        value: Any = _json(raw) if raw.lstrip().startswith("{") else raw
        divergences = check_reply(result, value, choice=choice)
    except ValueError as exc:
        if raw.lstrip().startswith("{"):
            click.echo(f"streamfold: note: {expected} is JSON but not a reply streamfold can read: {exc}; "
                       "compared as text", err=True)
        divergences = check_reply(result, raw, choice=choice)
    if not divergences:
        shown.print(Text("the client's output matches the reference", style="green"))
        return
    for divergence in divergences:
        shown.print(Text.assemble(("mismatch ", "bold red"), divergence.message()))
    sys.exit(EXIT_MISMATCH)


@click.command()
@click.argument("first", metavar="A")
@click.argument("second", metavar="B")
@dialect_option
def diff(first: str, second: str, dialect: str | None) -> None:
    """Compare two captures: which frames differ or are missing, and how the replies differ.

    B may also be a non-streaming JSON response to the same request ("stream=false
    works"): then only the replies are compared. Exit 1 when they differ.

    \b
    Examples:
      streamfold diff through-proxy.sse direct.sse
      streamfold diff stream.sse non-streaming-response.json
    """
    shown = console()
    a = load_capture(first, dialect=dialect).result
    second_bytes = read_input(second)
    response, unread = _response(second_bytes)
    if unread is not None:
        shown.print(Text(f"B is JSON but not a reply streamfold can read: {unread}; read as a capture",
                         style="dim"))
    frames_differ = False
    if response is not None:
        differences = diff_results(a, response)
        shown.print(Text(f"A: {a.dialect} stream, {len(a.frames)} frames · B: a non-streaming response",
                         style="dim"))
    else:
        b = load_capture(second, dialect=dialect, data=second_bytes).result
        frames = diff_frames(a, b)
        differences = diff_results(a, b)
        shown.print(Text(f"A: {a.dialect}, {len(a.frames)} frames · B: {b.dialect}, {len(b.frames)} frames · "
                         f"{frames.same} frames alike (ids, timestamps and padding ignored)", style="dim"))
        for index_a, index_b in frames.changed[:20]:
            shown.print(Text.assemble(("changed ", "yellow"), f"frame A{index_a} ≠ B{index_b}: ",
                                      (_short(a, index_a), "red"), " → ", (_short(b, index_b), "green")))
        for label, indexes, result in (("only in A", frames.only_a, a), ("only in B", frames.only_b, b)):
            for index in indexes[:20]:
                shown.print(Text.assemble((f"{label} ", "yellow"), f"frame {index}: ", _short(result, index)))
        frames_differ = bool(frames.changed or frames.only_a or frames.only_b)
    for key, left, right in differences:
        shown.print(Text.assemble(("differs ", "bold red"), (key, "bold"), f": A {left!r:.200} · B {right!r:.200}"))
    if not differences and not frames_differ:
        shown.print(Text("the replies are the same", style="green"))
        return
    sys.exit(EXIT_MISMATCH)


def _response(data: bytes) -> tuple[Summary | None, str | None]:
    """The facts of B when it is a non-streaming response body a dialect reads, else None; and why
    a JSON object that looks like a reply could not be read as one."""
    try:
        value = _json(data)
    except ValueError:
        return None, None
    if not isinstance(value, dict) or data.lstrip().startswith(b"data:"):
        return None, None
    try:
        return summary_of_response(value), None
    except UnreadableReplyError as exc:
        return None, str(exc)
    except ValueError:
        return None, None  # JSON, but no reply: maybe a HAR, or an error body, read as a capture


def _json(data: str | bytes) -> Any:
    """One JSON document; ValueError when it is not one or is nested too deeply to read."""
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError("nested too deeply to read") from None


def _short(result: Result, index: int) -> str:
    summary = frame_summary(result, index)
    return summary if len(summary) <= 100 else summary[:99] + "…"
