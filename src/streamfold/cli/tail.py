"""`streamfold tail`: fold a stream as it arrives and show it live.

Reads with `os.read`, which returns as soon as any bytes are there, so
nothing waits for a buffer to fill. On a terminal the reply is typed out in a
live view (reasoning dimmed and apart, tool calls as they complete) under a
status line; into a pipe the reply text is written to stdout as it comes,
flushed per chunk, and reasoning to stderr. Either way the full summary, findings and timing follow at the end.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import sys
import time
from typing import IO

import click
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.rule import Rule
from rich.text import Text

from ..events import Event, Finding, TextDelta, ToolCallDone
from ..folding import Folder
from ..result import Result
from ..services import DEFAULT_STALL, Timing, analyse, annotate
from .common import EXIT_USAGE, console, dialect_option, end, settings, transport_option
from .render import render_result, render_timing

__all__ = ["render_summary", "tail", "tail_stream"]

_READ_SIZE = 65536


@click.command()
@click.argument("capture", default="-", metavar="[FILE|-]")
@click.option("--stall", type=float, default=DEFAULT_STALL, show_default=True, metavar="SECONDS",
              help="A gap longer than this between frames is reported as a stall.")
@dialect_option
@transport_option
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
        if stat.S_ISDIR(os.fstat(source).st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
    except OSError as exc:
        click.echo(f"streamfold: cannot read {capture!r}: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_USAGE)
    shown = console()
    try:
        result, timing = tail_stream(source, shown, dialect=dialect, transport=transport, stall=stall)
    except OSError as exc:  # the stream broke off (EIO on a terminal that went away, ...)
        click.echo(f"streamfold: reading {capture!r} failed: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_USAGE)
    if not settings().quiet:
        shown.print(render_summary(result, timing))
    end(result)


def tail_stream(source: int, console: Console, *, dialect: str | None, transport: str | None,
                stall: float) -> tuple[Result, Timing | None]:
    """Fold the bytes of file descriptor `source` live; return the result, annotated as `load`
    annotates a capture (the stalls after its findings), and its timing."""
    folder = Folder(dialect, transport=transport)
    view: _View = _LiveView(console) if console.is_terminal else _PipeView(console.file, sys.stderr)
    reads: list[tuple[int, float]] = []
    offset = 0
    start = time.monotonic()
    with view:
        while True:
            chunk = os.read(source, _READ_SIZE)
            if not chunk:
                break
            reads.append((offset, time.monotonic() - start))
            offset += len(chunk)
            view.show(folder.feed(chunk), len(folder.frames), time.monotonic() - start)
        result = folder.close()
    timing = analyse(result, tuple(reads), start=0.0, stall=stall) if reads else None
    return annotate(result, (), timing), timing


def render_summary(result: Result, timing: Timing | None) -> RenderableType:
    parts: list[RenderableType] = [render_result(result)]
    if timing is not None:
        parts.append(render_timing(timing))
    return Group(*parts)


class _View:
    def __enter__(self) -> _View:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def show(self, events: list[Event], frames: int, elapsed: float) -> None:
        raise NotImplementedError


class _PipeView(_View):
    """Into a pipe: the reply text on stdout as it comes, reasoning apart on stderr (like `llm`)."""

    def __init__(self, out: IO[str], err: IO[str]) -> None:
        self._out = out
        self._err = err
        self._wrote = False

    def show(self, events: list[Event], frames: int, elapsed: float) -> None:
        pieces = []
        for event in events:
            if isinstance(event, TextDelta):
                if event.field == "reasoning":
                    self._err.write(event.text)
                    self._err.flush()
                else:
                    pieces.append(event.text)
            elif isinstance(event, ToolCallDone):
                arguments = json.dumps(event.arguments, ensure_ascii=False) if event.error is None else event.error
                pieces.append(f"\n[tool call {event.tool_call} {event.name}: {arguments}]\n")
        if pieces:
            self._out.write("".join(pieces))
            self._out.flush()
            self._wrote = True

    def __exit__(self, *exc: object) -> None:
        if self._wrote:
            self._out.write("\n")
            self._out.flush()


class _LiveView(_View):
    """On a terminal: a status line over the end of the reply, redrawn as frames arrive."""

    def __init__(self, console: Console) -> None:
        self._console = console
        self._reasoning: list[str] = []
        self._content: list[str] = []
        self._tools: list[str] = []
        self._findings = 0
        self._first_token: float | None = None
        self._characters = 0
        self._live = Live(console=console, refresh_per_second=10, transient=True, auto_refresh=False)

    def __enter__(self) -> _LiveView:
        self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._live.stop()

    def show(self, events: list[Event], frames: int, elapsed: float) -> None:
        for event in events:
            if isinstance(event, TextDelta):
                (self._reasoning if event.field == "reasoning" else self._content).append(event.text)
                self._characters += len(event.text)
                if self._first_token is None:
                    self._first_token = elapsed
            elif isinstance(event, ToolCallDone):
                arguments = json.dumps(event.arguments, ensure_ascii=False) if event.error is None else event.error
                self._tools.append(f"tool call {event.tool_call} {event.name}: {arguments}")
            elif isinstance(event, Finding):
                self._findings += 1
        self._live.update(self._render(frames, elapsed), refresh=True)

    def _render(self, frames: int, elapsed: float) -> RenderableType:
        rate = ""
        if self._first_token is not None and elapsed > self._first_token:
            rate = f" · {self._characters / (elapsed - self._first_token):.0f} chars/s"
        ttft = f"{self._first_token * 1000:.0f} ms" if self._first_token is not None else "-"
        status = Text(f"{frames} frames · ttft {ttft}{rate} · {elapsed:.1f} s"
                      + (f" · {self._findings} findings" if self._findings else ""), style="bold cyan")
        budget = max(3, self._console.height - 3)
        body = Text()
        reasoning = _tail_lines("".join(self._reasoning), budget // 3, self._console.width)
        if reasoning:
            body.append(reasoning + "\n", style="dim")
        for line in self._tools[-3:]:
            body.append(line + "\n", style="magenta")
        body.append(_tail_lines("".join(self._content), budget - body.plain.count("\n"), self._console.width))
        return Group(status, Rule(style="dim"), body)


def _tail_lines(text: str, lines: int, width: int) -> str:
    """The end of `text` that fits in `lines` terminal lines of `width` columns."""
    kept: list[str] = []
    used = 0
    for line in reversed(text.split("\n")):
        rows = max(1, -(-len(line) // max(1, width)))
        if used + rows > lines:
            if not kept:
                kept.append(line[-(lines * width):])
            break
        kept.append(line)
        used += rows
    return "\n".join(reversed(kept))
