"""Commands. Each reads its input, calls the core, and hands the Result to
`render`. Exit codes: 0 when the input was read (whatever it contained),
2 on usage errors or unreadable input (one line on stderr, no traceback).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from typing import Any

import click
from rich.console import Console

from .. import __version__
from .._folder import fold
from .._report import Diagnostic
from .._result import Result
from ..inputs import FORMATS, Capture, InputError, read_capture, transport_notes
from .._sniff import TRANSPORTS
from ..dialects import DIALECTS
from ..timing import DEFAULT_STALL, analyse
from .render import frame_rows, render_frames, render_result, render_timing
from .tail import render_summary, tail_stream

__all__ = ["cli", "main"]

EXIT_OK = 0
EXIT_USAGE = 2

_dialect_option = click.option(
    "--dialect", type=click.Choice(sorted(DIALECTS)), default=None,
    help="Force the dialect instead of detecting it from the payloads.")
_transport_option = click.option(
    "--transport", type=click.Choice(TRANSPORTS), default=None,
    help="Force the framing instead of sniffing it from the first bytes.")
_input_argument = click.argument("capture", metavar="FILE|-")


def _input_options(command: Any) -> Any:
    """FILE plus how to read it: shared by every command that takes a capture."""
    command = click.option(
        "--entry", default=None, metavar="N|URL",
        help="HAR input: the entry to use, by index or by a substring of its URL.")(command)
    command = click.option(
        "--input-format", type=click.Choice(FORMATS), default="auto", show_default=True,
        help="What FILE is: a raw body, a HAR, curl -v/-i output, a curl --trace dump, a timestamped log, "
             "or a chunked body. Detected by default.")(command)
    return _input_argument(command)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="streamfold")
def cli() -> None:
    """Fold a captured LLM stream (SSE, NDJSON, JSON array) into the reply it carried,
    and explain what went wrong, frame by frame. Nothing leaves your machine.

    \b
    Examples:
      streamfold show examples/openai-tool-calls.sse
      curl -sN https://... | streamfold show -
      streamfold frames examples/openai-broken.sse
      streamfold export examples/openai-tool-calls.sse
      curl -sN ... | streamfold tail
    """


@cli.command()
@_input_options
@click.option("--json", "as_json", is_flag=True, help="Print the JSON result contract (schema 1) instead.")
@click.option("--stall", type=float, default=DEFAULT_STALL, show_default=True, metavar="SECONDS",
              help="With arrival times: a gap longer than this between frames is reported as a stall.")
@_dialect_option
@_transport_option
def show(capture: str, input_format: str, entry: str | None, as_json: bool, stall: float, dialect: str | None,
         transport: str | None) -> None:
    """Show the folded reply: text, reasoning, tool calls, usage, finish reason and findings.

    \b
    Examples:
      streamfold show examples/openai-reasoning.sse
      streamfold show --json capture.sse | jq .choices[0].content
    """
    result, loaded = _load(capture, input_format, entry, dialect, transport)
    timing = None
    if loaded.reads:
        timing = analyse(result, loaded.reads, start=loaded.started, stall=stall)
        result = dataclasses.replace(result, diagnostics=(*result.diagnostics, *timing.stalls))
    if as_json:
        out = result.to_dict()
        if timing is not None:
            out["timing"] = timing.to_dict()
        _write_json(out)
    else:
        console = _console()
        console.print(render_result(result))
        if timing is not None:
            console.print(render_timing(timing))


@cli.command()
@_input_options
@click.option("--jsonl", is_flag=True, help="One JSON object per frame, for machines.")
@_dialect_option
@_transport_option
def frames(capture: str, input_format: str, entry: str | None, jsonl: bool, dialect: str | None,
           transport: str | None) -> None:
    """List every frame: index, line, byte offset, event, kind and a short summary or its error.

    \b
    Examples:
      streamfold frames examples/openai-broken.sse
      streamfold frames --jsonl capture.sse | grep invalid
    """
    result, _ = _load(capture, input_format, entry, dialect, transport)
    if jsonl:
        out = sys.stdout
        for row in frame_rows(result):
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    else:
        _console().print(render_frames(result))


@cli.command()
@_input_options
@_dialect_option
@_transport_option
def export(capture: str, input_format: str, entry: str | None, dialect: str | None, transport: str | None) -> None:
    """Print the non-streaming object the same request would have returned (JSON).

    For OpenAI Chat streams that is a `ChatCompletion`; for legacy completions a
    `text_completion`. Exit 2 when the dialect has no export.

    \b
    Examples:
      streamfold export examples/openai-tool-calls.sse
      streamfold export capture.sse | jq .choices[0].message
    """
    result, _ = _load(capture, input_format, entry, dialect, transport)
    try:
        exported = result.export()
    except NotImplementedError as exc:
        click.echo(f"streamfold: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    _write_json(exported)
    if not result.complete:
        click.echo("streamfold: warning: the stream is incomplete (cut off or failed), so the exported "
                   "object keeps the stream's own finish reason; a non-streaming reply would not have it",
                   err=True)


@cli.command()
@click.argument("capture", default="-", metavar="[FILE|-]")
@click.option("--stall", type=float, default=DEFAULT_STALL, show_default=True, metavar="SECONDS",
              help="A gap longer than this between frames is reported as a stall.")
@_dialect_option
@_transport_option
def tail(capture: str, stall: float, dialect: str | None, transport: str | None) -> None:
    """Fold a stream live as it arrives, then show the summary, findings and timing.

    Reads standard input (or FILE, e.g. a named pipe) without buffering: each
    piece is shown the moment it arrives, with frames, time to first token,
    characters per second and elapsed time.

    \b
    Examples:
      curl -sN https://api.openai.com/v1/chat/completions -H ... -d ... | streamfold tail
      streamfold tail < capture.sse
    """
    try:
        source = sys.stdin.fileno() if capture == "-" else os.open(capture, os.O_RDONLY)
    except OSError as exc:
        click.echo(f"streamfold: cannot read {capture!r}: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_USAGE)
    console = _console()
    result, timing = tail_stream(source, console, dialect=dialect, transport=transport, stall=stall)
    if timing is not None:
        result = dataclasses.replace(result, diagnostics=(*result.diagnostics, *timing.stalls))
    console.print(render_summary(result, timing))


def _load(path: str, input_format: str, entry: str | None, dialect: str | None,
          transport: str | None) -> tuple[Result, Capture]:
    """Read FILE, unwrap it into a stream body, fold it; input and transport notes join the diagnostics."""
    try:
        capture = read_capture(_read(path), input_format=input_format, entry=entry)
    except InputError as exc:
        click.echo(f"streamfold: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    result = fold(capture.body, dialect=dialect, transport=transport)
    notes = [*capture.notes, *transport_notes(capture)]
    if notes:
        found = tuple(Diagnostic(note.code, note.severity, note.message, None, None, None) for note in notes)
        result = dataclasses.replace(result, diagnostics=(*found, *result.diagnostics))
    return result, capture


def _read(capture: str) -> bytes:
    """The capture's bytes; unreadable input ends the program with one line and exit 2."""
    try:
        if capture == "-":
            return sys.stdin.buffer.read()
        with open(capture, "rb") as handle:
            return handle.read()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        click.echo(f"streamfold: cannot read {capture!r}: {reason}", err=True)
        sys.exit(EXIT_USAGE)


def _write_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


def _console() -> Console:
    return Console(highlight=False, soft_wrap=False)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    try:
        cli.main(args=argv, prog_name="streamfold", standalone_mode=True)
    except KeyboardInterrupt:  # pragma: no cover - interactive only
        sys.exit(130)
