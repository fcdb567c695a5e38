"""The commands that compare: `check` (a client's output against the reference)
and `diff` (two captures, or a capture and a non-streaming response). What
they compare is the services layer's (`services.diff`); this module prints it."""

from __future__ import annotations

import json
import sys
from typing import Any

import click
from rich.console import Console
from rich.text import Text

from .._json import dumps_strict
from ..result import Result
from ..services.check import check_reply
from ..services.diff import Summary, diff_frames, diff_results, response_summary
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


#: How many frames of each kind, and characters of each value, `diff` shows unless --all.
SHOWN_FRAMES = 20
SHOWN_CHARS = 200


@click.command()
@click.argument("first", metavar="A")
@click.argument("second", metavar="B")
@dialect_option
@click.option("--all", "show_all", is_flag=True,
              help=f"Show every differing frame and whole values (by default the first {SHOWN_FRAMES} frames of "
                   f"each kind and {SHOWN_CHARS} characters of a value, and how many more there are).")
@click.option("--entry", default=None, metavar="N|URL",
              help="HAR, cassette or trace-log inputs: the entry to use on both sides, by index or by a substring "
                   "of its URL.")
@click.option("--entry-a", default=None, metavar="N|URL", help="HAR input A: its entry (overrides --entry for A).")
@click.option("--entry-b", default=None, metavar="N|URL", help="HAR input B: its entry (overrides --entry for B).")
def diff(first: str, second: str, dialect: str | None, show_all: bool, entry: str | None, entry_a: str | None,
         entry_b: str | None) -> None:
    """Compare two captures: which frames differ or are missing, and how the replies differ.

    B may also be a non-streaming JSON response to the same request ("stream=false
    works"): then only the replies are compared. Values are shown as JSON; for a
    differing text, where it first differs (character, and line:column when it
    has several lines). Exit 1 when they differ.

    \b
    Examples:
      streamfold diff through-proxy.sse direct.sse
      streamfold diff stream.sse non-streaming-response.json
      streamfold diff --all through-proxy.sse direct.sse
      streamfold diff before.har after.har --entry /v1/chat
    """
    shown = console()
    limit = None if show_all else SHOWN_FRAMES
    entry_a, entry_b = entry_a or entry, entry_b or entry
    a = load_capture(first, entry=entry_a, dialect=dialect).result
    second_bytes = read_input(second)
    # An entry asked of B says B is a HAR (a capture), not a non-streaming response.
    response, unread = _response(second_bytes) if entry_b is None else (None, None)
    if unread is not None:
        shown.print(Text(f"B is JSON but not a reply streamfold can read: {unread}; read as a capture",
                         style="dim"))
    frames_differ = False
    if response is not None:
        differences = diff_results(a, response)
        shown.print(Text(f"A: {a.dialect} stream, {len(a.frames)} frames · B: a non-streaming response",
                         style="dim"))
    else:
        b = load_capture(second, entry=entry_b, dialect=dialect, data=second_bytes).result
        frames = diff_frames(a, b)
        differences = diff_results(a, b)
        shown.print(Text(f"A: {a.dialect}, {len(a.frames)} frames · B: {b.dialect}, {len(b.frames)} frames · "
                         f"{frames.same} frames alike (ids, timestamps and padding ignored)", style="dim"))
        for index_a, index_b in frames.changed[:limit]:
            shown.print(Text.assemble(("changed ", "yellow"), f"frame A{index_a} ≠ B{index_b}: ",
                                      (_short(a, index_a), "red"), " → ", (_short(b, index_b), "green")))
        _more(shown, len(frames.changed), limit, "changed frames")
        for label, indexes, result in (("only in A", frames.only_a, a), ("only in B", frames.only_b, b)):
            for index in indexes[:limit]:
                shown.print(Text.assemble((f"{label} ", "yellow"), f"frame {index}: ", _short(result, index)))
            _more(shown, len(indexes), limit, f"frames {label}")
        frames_differ = bool(frames.changed or frames.only_a or frames.only_b)
    for key, left, right in differences:
        where = _first_difference(left, right)
        shown.print(Text.assemble(("differs ", "bold red"), (key, "bold"), where and f" ({where})",
                                  f": A {_value(left, show_all)} · B {_value(right, show_all)}"))
    if not differences and not frames_differ:
        shown.print(Text("the replies are the same", style="green"))
        return
    sys.exit(EXIT_MISMATCH)


def _more(shown: Console, count: int, limit: int | None, what: str) -> None:
    if limit is not None and count > limit:
        shown.print(Text(f"… and {count - limit} more {what} (--all shows every one)", style="yellow"))


def _value(value: Any, whole: bool) -> str:
    """The value as JSON (`"a"`, `null`, `true`), cut at SHOWN_CHARS characters unless `whole`, saying so."""
    text = dumps_strict(value, default=str)
    if whole or len(text) <= SHOWN_CHARS:
        return text
    return f"{text[:SHOWN_CHARS]}… ({len(text) - SHOWN_CHARS} more characters; --all shows them)"


def _first_difference(left: Any, right: Any) -> str:
    """Where two differing texts first differ: `first difference at character 12` (and `, line 2:5`)."""
    if not isinstance(left, str) or not isinstance(right, str) or left == right:
        return ""
    at = next((i for i, (x, y) in enumerate(zip(left, right)) if x != y), min(len(left), len(right)))
    where = f"first difference at character {at}"
    if "\n" in left or "\n" in right:
        before = left[:at]
        where += f", line {before.count(chr(10)) + 1}:{at - (before.rfind(chr(10)) + 1) + 1}"
    return where


def _response(data: bytes) -> tuple[Summary | None, str | None]:
    """The facts of B when it is a non-streaming response body a dialect reads, else None; and why
    a JSON object that looks like a reply could not be read as one."""
    return response_summary(data)  # the page's diff reads its sides the same way


def _json(data: str | bytes) -> Any:
    """One JSON document; ValueError when it is not one or is nested too deeply to read."""
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError("nested too deeply to read") from None


def _short(result: Result, index: int) -> str:
    summary = frame_summary(result, index)
    return summary if len(summary) <= 100 else summary[:99] + "…"
