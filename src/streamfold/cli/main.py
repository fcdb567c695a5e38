"""Commands. Each reads its input, calls the core, and hands the Result to
`render`. Exit codes: 0 when the input was read (whatever it contained);
1 when `check` or `diff` find a difference, or with `--strict` when the
stream had errors; 2 on usage errors or unreadable input (one line on
stderr, no traceback).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn
from rich.text import Text

from .. import __version__
from ..folding import fold
from ..findings import Diagnostic
from ..result import Result
from ..compare import check_reply, diff_frames, diff_results, summary_of_response, summary_of_result
from ..inputs import FORMATS, Capture, InputError, read_capture, transport_notes
from ..framing.sniff import TRANSPORTS
from ..dialects import DIALECTS
from ..timing import DEFAULT_STALL, analyse
from ..rows import frame_rows, frame_summary
from .render import render_frames, render_reply_only, render_result, render_timing
from .tail import render_summary, tail_stream

__all__ = ["cli", "main"]

EXIT_OK = 0
EXIT_MISMATCH = 1
EXIT_USAGE = 2
# Inputs from this size on get a progress bar (on a terminal).
_PROGRESS_FROM = 4 * 1024 * 1024

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


@dataclasses.dataclass
class Settings:
    """The group options every command honours."""

    color: str = "auto"
    quiet: bool = False
    strict: bool = False


_EPILOG = """\b
Exit codes:
  0  the input was read (whatever it contained)
  1  check/diff found a difference; with --strict, the stream had errors
  2  a usage error or unreadable input
"""


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog=_EPILOG)
@click.version_option(__version__, prog_name="streamfold")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
              help="Colour output; auto follows the terminal and NO_COLOR.")
@click.option("--quiet", "-q", is_flag=True, help="Only the reply (and tool calls): no header, usage or findings.")
@click.option("--strict", is_flag=True, help="Exit 1 when the stream had errors (bad frames, in-stream errors, "
                                              "unparseable tool arguments).")
@click.pass_context
def cli(ctx: click.Context, color: str, quiet: bool, strict: bool) -> None:
    """Fold a captured LLM stream (SSE, NDJSON, JSON array, AWS event-stream) into the
    reply it carried, and explain what went wrong, frame by frame. Nothing leaves
    your machine.

    \b
    Examples:
      streamfold show examples/openai-tool-calls.sse
      curl -sN https://... | streamfold show -
      streamfold frames examples/openai-broken.sse
      streamfold export examples/openai-tool-calls.sse
      curl -sN ... | streamfold tail
      streamfold --strict show capture.har --entry /v1/chat
    """
    ctx.obj = Settings(color, quiet, strict)


@cli.command()
@_input_options
@click.option("--json", "as_json", is_flag=True, help="Print the JSON result contract (schema 1) instead.")
@click.option("--annotate", is_flag=True, help="Mark where each frame's text begins in the reply (¦).")
@click.option("--stall", type=float, default=DEFAULT_STALL, show_default=True, metavar="SECONDS",
              help="With arrival times: a gap longer than this between frames is reported as a stall.")
@_dialect_option
@_transport_option
def show(capture: str, input_format: str, entry: str | None, as_json: bool, annotate: bool, stall: float,
         dialect: str | None, transport: str | None) -> None:
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
    elif _settings().quiet:
        _console().print(render_reply_only(result))
    else:
        console = _console()
        console.print(render_result(result, annotate=annotate))
        if timing is not None:
            console.print(render_timing(timing))
    _end(result)


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
    _end(result)


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
    _end(result)
    if not result.complete:
        click.echo("streamfold: warning: the stream is incomplete (cut off or failed), so the exported "
                   "object keeps the stream's own finish reason; a non-streaming reply would not have it",
                   err=True)


@cli.command()
@click.argument("capture", metavar="[FILE]", required=False,
                type=click.Path(exists=True, dir_okay=False, readable=True))
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port to listen on; 0 picks a free one.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. The page answers only requests addressed to a loopback name.")
@click.option("--open", "open_browser", is_flag=True, help="Open the page in the default browser.")
@click.option("--max-size", default="64MiB", show_default=True,
              help="Largest capture accepted per request (bytes, or with KiB, MiB, GiB).")
def web(capture: str | None, port: int, host: str, open_browser: bool, max_size: str) -> None:
    """Serve the local web page: raw bytes, events, JSON per frame and the merged reply, side by side.

    Paste a capture, drop a file, or give FILE to open it at once. Everything runs on
    this machine through the same core as the other commands; nothing is sent anywhere else.

    \b
    Examples:
      streamfold web examples/openai-broken.sse --open
      streamfold web --port 8765
    """
    # Imported here: the other commands need neither starlette nor uvicorn.
    from ..web.app import create_app
    from ..web.server import parse_size, serve

    try:
        limit = parse_size(max_size)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--max-size") from None
    try:
        serve(create_app(capture_path=capture, max_size=limit), host=host, port=port,
              open_browser=open_browser, echo=click.echo)
    except OSError as exc:
        click.echo(f"streamfold: cannot listen on {host}:{port}: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_USAGE)


@cli.command()
@_input_options
@click.option("--offset", type=int, required=True, help="Character offset in the field (0-based).")
@click.option("--choice", type=int, default=0, show_default=True)
@click.option("--field", "field_name", default="content", show_default=True, metavar="content|reasoning|refusal|tool:K",
              help="Which text: the reply, the reasoning, the refusal or tool call K's arguments.")
@_dialect_option
@_transport_option
def blame(capture: str, input_format: str, entry: str | None, offset: int, choice: int, field_name: str,
          dialect: str | None, transport: str | None) -> None:
    """Name the frame, line and byte offset that produced one character of the reply.

    \b
    Examples:
      streamfold blame examples/openai-tool-calls.sse --offset 12
      streamfold blame capture.sse --field tool:1 --offset 0
    """
    result, _ = _load(capture, input_format, entry, dialect, transport)
    try:
        frame = result.frame_producing_char(offset, choice=choice, field=field_name)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--field") from None
    if frame is None:
        click.echo(f"streamfold: choice {choice} {field_name} has no character {offset}", err=True)
        sys.exit(EXIT_USAGE)
    text = _field_text(result, choice, field_name)
    console = _console()
    console.print(Text.assemble(
        (f"character {offset} ", "bold"), (repr(text[offset]), "bold magenta"), " of choice ", str(choice), " ",
        field_name, " came from ", (f"frame {frame.index}", "bold"), f", line {frame.line}, byte offset {frame.offset}"))
    context = Text.assemble("…", text[max(0, offset - 30) : offset], (text[offset], "reverse"),
                            text[offset + 1 : offset + 30], "…")
    console.print(context)
    console.print(Text(frame.raw.decode("utf-8", "replace").rstrip("\r\n"), style="dim"), soft_wrap=True)


def _field_text(result: Result, choice: int, field_name: str) -> str:
    found = result.choice(choice)
    if found is None:
        return ""
    if field_name.startswith("tool:"):
        return found.tool_calls[int(field_name[5:])].arguments
    return str(getattr(found, field_name) or "")


@cli.command()
@_input_options
@click.option("--expect", "expected", required=True, metavar="OUTPUT",
              help="What the client built: a file with its text or its JSON message/completion object, or - for stdin.")
@click.option("--choice", type=int, default=0, show_default=True)
@_dialect_option
@_transport_option
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
    result, _ = _load(capture, input_format, entry, dialect, transport)
    raw = _read(expected).decode("utf-8", "replace")
    try:
        value: Any = json.loads(raw) if raw.lstrip().startswith("{") else raw
        divergences = check_reply(result, value, choice=choice)
    except ValueError:
        divergences = check_reply(result, raw, choice=choice)
    console = _console()
    if not divergences:
        console.print(Text("the client's output matches the reference", style="green"))
        return
    for divergence in divergences:
        console.print(Text.assemble(("mismatch ", "bold red"), divergence.message()))
    sys.exit(EXIT_MISMATCH)


@cli.command()
@click.argument("first", metavar="A")
@click.argument("second", metavar="B")
@_dialect_option
def diff(first: str, second: str, dialect: str | None) -> None:
    """Compare two captures: which frames differ or are missing, and how the replies differ.

    B may also be a non-streaming JSON response to the same request ("stream=false
    works"): then only the replies are compared. Exit 1 when they differ.

    \b
    Examples:
      streamfold diff through-proxy.sse direct.sse
      streamfold diff stream.sse non-streaming-response.json
    """
    console = _console()
    a, _ = _load(first, "auto", None, dialect, None)
    second_bytes = _read(second)
    differences: list[tuple[str, Any, Any]]
    try:
        response = json.loads(second_bytes)
        is_response = isinstance(response, dict) and not second_bytes.lstrip().startswith(b"data:")
    except ValueError:
        is_response = False
    if is_response:
        differences = diff_results(summary_of_result(a), summary_of_response(response))
        console.print(Text(f"A: {a.dialect} stream, {len(a.frames)} frames · B: a non-streaming response",
                           style="dim"))
    else:
        b, _ = _load(second, "auto", None, dialect, None)
        frames = diff_frames(a, b)
        differences = diff_results(summary_of_result(a), summary_of_result(b))
        console.print(Text(f"A: {a.dialect}, {len(a.frames)} frames · B: {b.dialect}, {len(b.frames)} frames · "
                           f"{frames.same} frames alike (ids, timestamps and padding ignored)", style="dim"))
        for index_a, index_b in frames.changed[:20]:
            console.print(Text.assemble(("changed ", "yellow"), f"frame A{index_a} ≠ B{index_b}: ",
                                        (_short(a, index_a), "red"), " → ", (_short(b, index_b), "green")))
        for label, indexes, result in (("only in A", frames.only_a, a), ("only in B", frames.only_b, b)):
            for index in indexes[:20]:
                console.print(Text.assemble((f"{label} ", "yellow"), f"frame {index}: ", _short(result, index)))
        if frames.changed or frames.only_a or frames.only_b:
            differences.append(("frames", None, None))
    for key, left, right in differences:
        if key != "frames":
            console.print(Text.assemble(("differs ", "bold red"), (key, "bold"), f": A {left!r:.200} · B {right!r:.200}"))
    if not differences:
        console.print(Text("the replies are the same", style="green"))
        return
    sys.exit(EXIT_MISMATCH)


def _short(result: Result, index: int) -> str:
    summary = frame_summary(result, index)
    return summary if len(summary) <= 100 else summary[:99] + "…"


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
    if not _settings().quiet:
        console.print(render_summary(result, timing))
    _end(result)


@cli.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> None:
    """Print the shell completion script for SHELL.

    \b
    Examples:
      eval "$(streamfold completion bash)"
      streamfold completion fish > ~/.config/fish/completions/streamfold.fish
    """
    from click.shell_completion import get_completion_class

    completer = get_completion_class(shell)
    assert completer is not None
    click.echo(completer(cli, {}, "streamfold", "_STREAMFOLD_COMPLETE").source())


def _load(path: str, input_format: str, entry: str | None, dialect: str | None,
          transport: str | None) -> tuple[Result, Capture]:
    """Read FILE, unwrap it into a stream body, fold it; input and transport notes join the diagnostics."""
    try:
        capture = read_capture(_read(path), input_format=input_format, entry=entry)
    except InputError as exc:
        click.echo(f"streamfold: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    result = _fold_with_progress(capture.body, dialect, transport)
    notes = [*capture.notes, *transport_notes(capture)]
    if notes:
        found = tuple(Diagnostic(note.code, note.severity, note.message, None, None, None) for note in notes)
        result = dataclasses.replace(result, diagnostics=(*found, *result.diagnostics))
    return result, capture


def _fold_with_progress(body: bytes, dialect: str | None, transport: str | None) -> Result:
    """Fold, with a progress bar on stderr for inputs over a few MB when stderr is a terminal."""
    err = Console(stderr=True)
    if len(body) < _PROGRESS_FROM or not err.is_terminal:
        return fold(body, dialect=dialect, transport=transport)
    with Progress(TextColumn("folding"), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                  console=err, transient=True) as progress:
        task = progress.add_task("fold", total=len(body))
        return fold(body, dialect=dialect, transport=transport,
                    progress=lambda done, total: progress.update(task, completed=done))


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


def _settings() -> Settings:
    context = click.get_current_context(silent=True)
    found = context.find_object(Settings) if context is not None else None
    return found if found is not None else Settings()


def _console() -> Console:
    color = _settings().color
    if color == "always":
        return Console(highlight=False, soft_wrap=False, force_terminal=True)
    return Console(highlight=False, soft_wrap=False, no_color=color == "never" or None,
                   color_system=None if color == "never" else "auto")


def _end(result: Result) -> None:
    """--strict: a stream with errors fails the command."""
    if _settings().strict and (result.errors or any(d.severity == "error" for d in result.diagnostics)):
        sys.exit(EXIT_MISMATCH)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    try:
        cli.main(args=argv, prog_name="streamfold", standalone_mode=True)
    except KeyboardInterrupt:  # pragma: no cover - interactive only
        sys.exit(130)
