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
from ..services.check import check_reply
from ..services.diff import Summary, response_summary
from ..services.diff_report import diff_report
from .common import (
    EXIT_MISMATCH,
    console,
    dialect_option,
    input_options,
    lane_option,
    load_capture,
    read_input,
    transport_option,
    write_json,
)

__all__ = ["check", "diff"]


@click.command()
@input_options
@click.option("--expect", "expected", required=True, metavar="OUTPUT",
              help="What the client built: a file with its text or its JSON message/completion object, or - for stdin.")
@click.option("--choice", type=int, default=0, show_default=True)
@dialect_option
@transport_option
@lane_option
def check(capture: str, input_format: str, entry: str | None, expected: str, choice: int, dialect: str | None,
          transport: str | None, lane: str | None) -> None:
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
    result = load_capture(capture, input_format, entry, dialect, transport, lane=lane).result
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
@click.option("--json", "as_json", is_flag=True,
              help="Print the comparison as one JSON object (schema 1), for CI and jq: the two sides (file, "
                   "dialect, transport, complete, model, frames), the frames that differ with their summaries, "
                   "each difference {path, a, b, first_difference, frames}, and notes on values alike as JSON.")
@click.option("--entry", default=None, metavar="N|URL",
              help="HAR, cassette or trace-log inputs: the entry to use on both sides, by index or by a substring "
                   "of its URL.")
@click.option("--entry-a", default=None, metavar="N|URL", help="HAR input A: its entry (overrides --entry for A).")
@click.option("--entry-b", default=None, metavar="N|URL", help="HAR input B: its entry (overrides --entry for B).")
@lane_option
def diff(first: str, second: str, dialect: str | None, show_all: bool, as_json: bool, entry: str | None,
         entry_a: str | None, entry_b: str | None, lane: str | None) -> None:
    """Compare two captures: which frames differ or are missing, and how the replies differ.

    B may also be a non-streaming JSON response to the same request ("stream=false
    works"): then only the replies are compared. Values are shown as JSON; for a
    differing text, where it first differs (character, and line:column when it
    has several lines). Tool arguments that are one JSON value written with other
    spacing are alike (a note says so). Exit 1 when they differ.

    \b
    Examples:
      streamfold diff through-proxy.sse direct.sse
      streamfold diff stream.sse non-streaming-response.json
      streamfold diff --all through-proxy.sse direct.sse
      streamfold diff before.har after.har --entry /v1/chat
      streamfold diff --json a.sse b.sse | jq '.differences[].path'
    """
    entry_a, entry_b = entry_a or entry, entry_b or entry
    a = load_capture(first, entry=entry_a, dialect=dialect, lane=lane).result
    second_bytes = read_input(second)
    # An entry asked of B says B is a HAR (a capture), not a non-streaming response.
    response, unread = _response(second_bytes) if entry_b is None else (None, None)
    if unread is not None:
        click.echo(f"streamfold: note: B is JSON but not a reply streamfold can read: {unread}; read as a capture",
                   err=True)
    b = response if response is not None else load_capture(second, entry=entry_b, dialect=dialect,
                                                           data=second_bytes, lane=lane).result
    report = diff_report(a, b, a_name=first, b_name=second)
    if as_json:
        write_json(report)
    else:
        _print_report(report, None if show_all else SHOWN_FRAMES)
    if not report["same"]:
        sys.exit(EXIT_MISMATCH)


def _print_report(report: dict[str, Any], limit: int | None) -> None:
    shown = console()
    a, b, frames = report["a"], report["b"], report["frames"]
    if frames is None:
        shown.print(Text(f"A: {a['dialect']} stream, {a['frames']} frames · B: a non-streaming response",
                         style="dim"))
    else:
        shown.print(Text(f"A: {a['dialect']}, {a['frames']} frames · B: {b['dialect']}, {b['frames']} frames · "
                         f"{frames['alike']} frames alike (ids, timestamps and padding ignored)", style="dim"))
        for pair in frames["changed"][:limit]:
            shown.print(Text.assemble(("changed ", "yellow"), f"frame A{pair['a']} ≠ B{pair['b']}: ",
                                      (_short(pair["a_summary"]), "red"), " → ", (_short(pair["b_summary"]), "green")))
        _more(shown, len(frames["changed"]), limit, "changed frames")
        for label, side in (("only in A", "only_a"), ("only in B", "only_b")):
            for row in frames[side][:limit]:
                shown.print(Text.assemble((f"{label} ", "yellow"), f"frame {row['frame']}: ", _short(row["summary"])))
            _more(shown, len(frames[side]), limit, f"frames {label}")
    whole = limit is None
    for found in report["differences"]:
        at = found["first_difference"]
        where = ""
        if at is not None:
            where = f"first difference at character {at['character']}"
            if any(isinstance(value, str) and "\n" in value for value in (found["a"], found["b"])):
                where += f", line {at['line']}:{at['column']}"
        shown.print(Text.assemble(("differs ", "bold red"), (found["path"], "bold"), where and f" ({where})",
                                  f": A {_value(found['a'], whole)} · B {_value(found['b'], whole)}"))
    for found in report["notes"]:
        shown.print(Text.assemble(("alike ", "dim"), (found["path"], "bold"), f" ({found['note']}): ",
                                  f"A {_value(found['a'], whole)} · B {_value(found['b'], whole)}"), style="dim")
    if report["same"]:
        shown.print(Text("the replies are the same", style="green"))
    elif not report["differences"]:
        shown.print(Text("the replies are the same; the frames that carried them differ", style="yellow"))


def _more(shown: Console, count: int, limit: int | None, what: str) -> None:
    if limit is not None and count > limit:
        shown.print(Text(f"… and {count - limit} more {what} (--all shows every one)", style="yellow"))


def _value(value: Any, whole: bool) -> str:
    """The value as JSON (`"a"`, `null`, `true`), cut at SHOWN_CHARS characters unless `whole`, saying so."""
    text = dumps_strict(value, default=str)
    if whole or len(text) <= SHOWN_CHARS:
        return text
    return f"{text[:SHOWN_CHARS]}… ({len(text) - SHOWN_CHARS} more characters; --all shows them)"


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


def _short(summary: str) -> str:
    return summary if len(summary) <= 100 else summary[:99] + "…"
