"""The commands that show one capture: `show`, `frames`, `export`, `blame`.
Each loads the capture through the services layer and hands the Result to
`render`."""

from __future__ import annotations

import sys
from typing import Any

import click
from rich.text import Text

from .._json import dumps_strict
from ..findings import BINARY_TRANSPORTS, Severity
from ..result import Result
from ..services import DEFAULT_STALL, NOT_A_STREAM
from ..services.lost import lost_text
from ..services.rows import RowBounds
from .common import (
    EXIT_OK,
    EXIT_USAGE,
    console,
    dialect_option,
    end,
    input_options,
    lane_option,
    load_capture,
    on_terminal,
    settings,
    several_inputs,
    transport_option,
    write_json,
)
from .frame_table import FrameTable
from .long_text import HEAD, TAIL
from .render import render_reply_only, render_result, render_timing, render_tool_calls
from .usage import Seconds

__all__ = ["blame", "export", "frames", "show"]


@click.command()
@several_inputs
@click.option("--json", "as_json", is_flag=True,
              help="Print the JSON result contract (schema 1) instead; for several files, a JSON array of "
                   '{"file": FILE, "result": ...} (result null when FILE could not be read).')
@click.option("--annotate", is_flag=True, help="Mark where each frame's text begins in the reply (¦).")
@click.option("--frame-numbers", is_flag=True,
              help="Mark each frame's text in the reply with its frame number (‹3›), to see which frame sent what.")
@click.option("--full", is_flag=True, help=f"Print long texts whole (by default a text over {HEAD + TAIL:,} "
                                           f"characters shows its first {HEAD:,} and last {TAIL:,}).")
@click.option("--stall", type=Seconds(), default=DEFAULT_STALL, show_default=True, metavar="SECONDS",
              help="With arrival times: a gap longer than this between frames is reported as a stall.")
@dialect_option
@transport_option
@lane_option
def show(capture: tuple[str, ...], input_format: str, entry: str | None, as_json: bool, annotate: bool,
         frame_numbers: bool, full: bool, stall: float, dialect: str | None, transport: str | None,
         lane: str | None) -> None:
    """Show the folded reply: text, reasoning, tool calls, usage, finish reason and findings.

    A frame that did not decode is marked in the reply where its text would have gone,
    with what of its text could still be read: ⟦frame 17 lost: invalid JSON; partial
    text " wor"⟧. Several files are shown in turn, each under a `==> FILE <==` line;
    the exit code is the worst of theirs. A long text shows its start and end, and how
    many characters are left out between them; --full prints it all (--json and export
    always do).

    With arrival times (curl --trace-time, a timestamped log, a stored capture) a timing
    section follows: TTFB (time to first byte), from the request to the first byte of the
    body, and TTFT (time to first text), from the request to the first frame that adds
    reply text (content, reasoning, a refusal or tool-call arguments), as `record` and
    `tail` measure them. An input that does not say when the request was sent has neither:
    it gives the first text after the first byte. A body that is no stream (an HTML page,
    an API's error response, a PDF or other binary file) is named in one finding
    (html-page, error-response, not-text) and not folded.

    \b
    Examples:
      streamfold show examples/openai-reasoning.sse
      streamfold show --full huge.sse | less -R
      streamfold show --json capture.sse | jq '.choices[0].content'
      streamfold show --frame-numbers examples/openai-broken.sse
      streamfold show a.sse b.sse c.har
    """
    if len(capture) == 1:
        _show_one(capture[0], input_format, entry, as_json, annotate, frame_numbers, full, stall, dialect, transport,
                  lane=lane)
        return
    worst = EXIT_OK
    shown: list[dict[str, Any]] = []
    for position, name in enumerate(capture):
        if not as_json:
            if position:
                click.echo()
            click.echo(f"==> {name} <==")
            sys.stdout.flush()
        try:
            out = _show_one(name, input_format, entry, as_json, annotate, frame_numbers, full, stall, dialect,
                            transport, several=True, lane=lane)
        except SystemExit as exc:  # an unreadable file (said on stderr) or --strict: the next one still shows
            worst = max(worst, exc.code if isinstance(exc.code, int) else EXIT_USAGE)
            out = getattr(exc, "shown", None)
        if as_json:
            shown.append({"file": name, "result": out})
    if as_json:
        write_json(shown)
    if worst != EXIT_OK:
        sys.exit(worst)


def _show_one(capture: str, input_format: str, entry: str | None, as_json: bool, annotate: bool, numbered: bool,
              full: bool, stall: float, dialect: str | None, transport: str | None, *,
              several: bool = False, lane: str | None = None) -> dict[str, Any] | None:
    """Show one capture; one of `several`: return its JSON instead of printing it, and end a reply
    written byte for byte with a newline (the next file's `==> FILE <==` goes on a line of its own)."""
    loaded = load_capture(capture, input_format, entry, dialect, transport, stall=stall, lane=lane)
    result, timing = loaded.result, loaded.timing
    out: dict[str, Any] | None = None
    if as_json:
        out = result.to_dict()
        if timing is not None:
            out["timing"] = timing.to_dict()
        if not several:
            write_json(out)
    elif settings().quiet and on_terminal():
        console().print(render_reply_only(result, full=full))
    elif settings().quiet:
        _write_reply(result, end_line=several)
    else:
        shown, wrap = console(), on_terminal()
        shown.print(render_result(result, annotate=annotate, numbered=numbered, lost=lost_text(result), full=full,
                                  wrap=wrap), crop=wrap)
        if timing is not None:
            shown.print(render_timing(timing))
    try:
        end(result)
    except SystemExit as exc:
        exc.shown = out  # type: ignore[attr-defined]  # --strict: the JSON is still the file's
        raise
    return out


def _write_reply(result: Result, *, end_line: bool = False) -> None:
    """--quiet off a terminal: each choice's reply as it is, byte for byte (no newline added unless
    `end_line`, so `show -q capture.sse > reply.txt` is what `check --expect reply.txt` compares), and
    its tool calls after it, unwrapped."""
    out = sys.stdout
    ended = True  # whether what was written so far ends a line (or nothing was written)
    for choice in result.choices:
        content = choice.content
        if content is not None and not isinstance(content, str):  # a server may send a number where text belongs
            content = dumps_strict(content)
        if content:
            out.write(content if ended else "\n" + content)
            ended = content.endswith("\n")
        if choice.tool_calls:
            if not ended:
                out.write("\n")
            out.flush()
            console().print(*render_tool_calls(choice, wrap=False), crop=False)
            ended = True
    if end_line and not ended:
        out.write("\n")
    out.flush()


@click.command()
@input_options
@click.option("--jsonl", is_flag=True, help="One JSON object per frame, for machines.")
@click.option("--wide", is_flag=True, help="Print each event and summary whole on a terminal too (off a terminal, "
                                           "they always are); by default they are cut to the terminal's width.")
@dialect_option
@transport_option
@lane_option
def frames(capture: str, input_format: str, entry: str | None, jsonl: bool, wide: bool, dialect: str | None,
           transport: str | None, lane: str | None) -> None:
    """List every frame: index, line, byte offset, event, kind and a short summary or its error.

    On a terminal, each row fits its width (--wide prints them whole); piped or
    redirected, the rows are always whole.

    \b
    Examples:
      streamfold frames examples/openai-broken.sse
      streamfold frames --wide examples/openai-tool-calls.sse
      streamfold frames --jsonl capture.sse | grep invalid
    """
    # The rows are printed as the capture folds (the first at once on a 100k-frame capture).
    rows = _jsonl_rows if jsonl else FrameTable(console(), whole=wide or not on_terminal()).add
    result = load_capture(capture, input_format, entry, dialect, transport, rows=rows, lane=lane).result
    _why_no_frames(result)
    end(result)


def _why_no_frames(result: Result) -> None:
    """A capture with no frames (an HTML page, binary, an empty file): what the input said, on stderr,
    where the rows would have been."""
    if len(result.frames):
        return
    for message in _no_frames_said(result):
        click.echo(f"streamfold: {message}", err=True)


def _no_frames_said(result: Result) -> list[str]:
    """Why a capture has no frames: its findings at no frame that warn (what the input is first), not
    its notes (how it was read: 'headers were stripped' explains nothing here)."""
    found = [(error.code, error.message) for error in result.errors if error.frame is None]
    found += [(d.code, d.message) for d in result.diagnostics if d.frame is None and d.severity != Severity.INFO]
    found.sort(key=lambda finding: finding[0] not in NOT_A_STREAM)
    return [message for _, message in found] or ["the capture holds no frames"]


def _jsonl_rows(rows: list[dict[str, Any]], _bounds: RowBounds) -> None:
    sys.stdout.write("".join(dumps_strict(row) + "\n" for row in rows))
    sys.stdout.flush()


@click.command()
@input_options
@dialect_option
@transport_option
@lane_option
def export(capture: str, input_format: str, entry: str | None, dialect: str | None, transport: str | None,
           lane: str | None) -> None:
    """Print the non-streaming object the same request would have returned (JSON).

    For OpenAI Chat streams that is a `ChatCompletion`; for legacy completions a
    `text_completion`. Exit 2 when the dialect has no export.

    \b
    Examples:
      streamfold export examples/openai-tool-calls.sse
      streamfold export capture.sse | jq '.choices[0].message'
    """
    result = load_capture(capture, input_format, entry, dialect, transport, lane=lane).result
    try:
        exported = result.export()
    except NotImplementedError as exc:
        # Nothing folded: what the input is, in one line (that no dialect exports it says nothing more).
        said = _no_frames_said(result)[0] if not result.frames else str(exc)
        click.echo(f"streamfold: {said}", err=True)
        sys.exit(EXIT_USAGE)
    write_json(exported)
    end(result)
    if not result.complete:
        click.echo("streamfold: warning: the stream is incomplete (cut off or failed), so the exported "
                   "object keeps the stream's own finish reason; a non-streaming reply would not have it",
                   err=True)


@click.command()
@input_options
@click.option("--offset", type=int, required=True, help="Character offset in the field (0-based).")
@click.option("--choice", type=int, default=0, show_default=True)
@click.option("--field", "field_name", default="content", show_default=True, metavar="content|reasoning|refusal|tool:K",
              help="Which text: the reply, the reasoning, the refusal or tool call K's arguments.")
@dialect_option
@transport_option
@lane_option
def blame(capture: str, input_format: str, entry: str | None, offset: int, choice: int, field_name: str,
          dialect: str | None, transport: str | None, lane: str | None) -> None:
    """Name the frame, line and byte offset that produced one character of the reply.

    \b
    Examples:
      streamfold blame examples/openai-tool-calls.sse --offset 12
      streamfold blame capture.sse --field tool:1 --offset 0
    """
    result = load_capture(capture, input_format, entry, dialect, transport, lane=lane).result
    try:
        frame = result.frame_producing_char(offset, choice=choice, field=field_name)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--field") from None
    if frame is None:
        click.echo(f"streamfold: choice {choice} {field_name} has no character {offset}", err=True)
        sys.exit(EXIT_USAGE)
    text = _field_text(result, choice, field_name)
    shown = console()
    source: tuple[tuple[str, str], str]
    if result.transport in BINARY_TRANSPORTS:  # a binary stream has no lines
        source = ((f"message {frame.index}", "bold"), f", byte offset {frame.offset}")
    else:
        source = ((f"frame {frame.index}", "bold"), f", line {frame.line}, byte offset {frame.offset}")
    shown.print(Text.assemble(
        (f"character {offset} ", "bold"), (repr(text[offset]), "bold magenta"), " of choice ", str(choice), " ",
        field_name, " came from ", *source))
    context = Text.assemble("…", text[max(0, offset - 30) : offset], (text[offset], "reverse"),
                            text[offset + 1 : offset + 30], "…")
    shown.print(context)
    # A binary message's raw bytes are its prelude, headers and CRCs: its payload is what to read.
    raw = (frame.data or "") if result.transport in BINARY_TRANSPORTS else frame.raw.decode("utf-8", "replace")
    shown.print(Text(raw.rstrip("\r\n"), style="dim"), soft_wrap=True)


def _field_text(result: Result, choice: int, field_name: str) -> str:
    found = result.choice(choice)
    if found is None:
        return ""
    if field_name.startswith("tool:"):
        return found.tool_calls[int(field_name[5:])].arguments
    return str(getattr(found, field_name) or "")
