"""`streamfold tail`: fold a stream as it arrives and show it live.

Waits for input with `select` (at most a quarter second at a time) and reads
with `os.read`, which returns as soon as any bytes are there, so nothing
waits for a buffer to fill and the status line keeps ticking while the
stream is silent ("no data for N s"). The input format is detected on the
first bytes as `show` detects it (`services.live`): `curl -i`/`-v` headers
and a timestamped log are unwrapped as they come. On a terminal the reply is
typed out in a live view under a status line; into a pipe it is written as
marked text (`tail_views`). Times are counted from the first byte received,
not from tail's start. Ctrl-C stops reading: the summary of what arrived is
shown and tail exits 130. Either way the summary, findings and timing follow.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import select
import signal
import stat
import sys
import threading
import time
from dataclasses import dataclass
from types import FrameType

import click
from rich.console import Console, Group, RenderableType
from rich.text import Text

from ..findings import Diagnostic, Severity
from ..folding import Folder
from ..result import Result
from ..services import DEFAULT_STALL, FORMATS, InputError, Timing, analyse, annotate, load, transport_notes
from ..services.live import LiveInput
from .common import EXIT_USAGE, console, dialect_option, end, settings, transport_option
from .render import render_result, render_timing
from .tail_views import REASONING, LiveView, PipeView, Progress, View
from .usage import Seconds

__all__ = ["EXIT_INTERRUPTED", "Tailed", "render_summary", "tail", "tail_stream"]

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command Ctrl-C stopped
_READ_SIZE = 65536
_TICK = 0.25  # seconds between redraws of the status line while nothing arrives
_SETTLE = 0.5  # seconds of silence after which the input format is decided on what has come


@click.command()
@click.argument("capture", default="-", metavar="[FILE|-]")
@click.option("--input-format", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="What the input is: a raw body, curl -v/-i output, a timestamped log, ... Detected by default "
                   "on the first bytes.")
@click.option("--stall", type=Seconds(), default=DEFAULT_STALL, show_default=True, metavar="SECONDS",
              help="A gap longer than this between frames is reported as a stall.")
@click.option("--reasoning", type=click.Choice(REASONING), default="mark", show_default=True,
              help="Into a pipe: reasoning lines marked '[reasoning] ' on stdout, written to stderr, or left out.")
@dialect_option
@transport_option
def tail(capture: str, input_format: str, stall: float, reasoning: str, dialect: str | None,
         transport: str | None) -> None:
    """Fold a stream live as it arrives, then show the summary, findings and timing.

    Reads standard input (or FILE, e.g. a named pipe) without buffering: each
    piece is shown the moment it arrives, with frames, time to first token
    (from the first byte), characters per second, elapsed time and how long
    nothing has come. Ctrl-C stops it and shows what arrived (exit 130).

    \b
    Examples:
      curl -sN https://api.openai.com/v1/chat/completions -H ... -d ... | streamfold tail
      curl -siN ... | streamfold tail | less
      streamfold tail < capture.sse
    """
    try:
        source = sys.stdin.fileno() if capture == "-" else os.open(capture, os.O_RDONLY)
        if stat.S_ISDIR(os.fstat(source).st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
    except OSError as exc:
        click.echo(f"streamfold: cannot read {capture!r}: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:  # Ctrl-C while a named pipe waited for its writer
        sys.exit(EXIT_INTERRUPTED)
    shown = console()
    # Ctrl-C is taken from here to the end, not only while reading: one that comes as the input
    # ends (or while the summary is made) still gets the summary and exit 130, never a traceback.
    with _Interrupt() as interrupt:
        try:
            tailed = tail_stream(source, shown, dialect=dialect, transport=transport, stall=stall,
                                 input_format=input_format, reasoning=reasoning, interrupt=interrupt)
        except OSError as exc:  # the stream broke off (EIO on a terminal that went away, ...)
            click.echo(f"streamfold: reading {capture!r} failed: {exc.strerror or exc}", err=True)
            sys.exit(EXIT_USAGE)
        except InputError as exc:  # read whole, it could not be used (a HAR without a streamed entry, ...)
            click.echo(f"streamfold: {exc}", err=True)
            sys.exit(EXIT_USAGE)
        except KeyboardInterrupt:  # a second Ctrl-C while what arrived is folded
            sys.exit(EXIT_INTERRUPTED)
        try:
            if not settings().quiet:
                shown.print(render_summary(tailed.result, tailed.timing, tailed))
        except KeyboardInterrupt:  # a second Ctrl-C while the summary is written
            sys.exit(EXIT_INTERRUPTED)
    if interrupt.hit:
        sys.exit(EXIT_INTERRUPTED)
    end(tailed.result)


@dataclass(frozen=True, slots=True)
class Tailed:
    """What a tail read: the result (annotated as `load` annotates a capture) and its timing."""

    result: Result
    timing: Timing | None
    #: Bytes of input received, and in how many seconds from the first of them to the last.
    received: int
    duration: float
    #: Seconds from tail's start to the first byte (None: none came).
    waited: float | None
    #: Ctrl-C stopped it before the input ended; `silent` seconds had passed since the last byte.
    interrupted: bool = False
    silent: float = 0.0


def tail_stream(source: int, console: Console, *, dialect: str | None, transport: str | None,
                stall: float, input_format: str = "auto", reasoning: str = "mark",
                interrupt: _Interrupt | None = None) -> Tailed:
    """Fold the bytes of file descriptor `source` live until it ends or Ctrl-C (`interrupt`, the
    caller's when it takes Ctrl-C for longer than the reading)."""
    folder = Folder(dialect, transport=transport)
    live = LiveInput(input_format)
    view: View = LiveView(console) if console.is_terminal else PipeView(console.file, sys.stderr, reasoning)
    progress = Progress(time.monotonic())
    interrupt = interrupt or _Interrupt()

    def fold(body: bytes, now: float) -> None:
        if body:
            events = folder.feed(body)
            progress.frames = len(folder.frames)
            progress.took(events, now)
            view.show(events, progress, now)

    with view, interrupt:
        while not interrupt.hit:
            ready, _, _ = select.select([source], [], [], _TICK)
            now = time.monotonic()
            if not ready:
                if progress.last is not None and now - progress.last >= _SETTLE:
                    fold(live.settle(now - (progress.first or now)), now)
                view.tick(progress, now)
                continue
            chunk = os.read(source, _READ_SIZE)
            if not chunk:
                break
            if progress.first is None:
                progress.first = now
            progress.last = now
            progress.received += len(chunk)
            fold(live.feed(chunk, now - progress.first), now)
            progress.whole = live.what if live.whole else ""
            view.tick(progress, now)
        now = time.monotonic()
        fold(live.close(now - (progress.first or now)), now)
        result = folder.close()
    timing, result = _finish(live, result, dialect=dialect, transport=transport, stall=stall)
    silent = now - progress.last if progress.last is not None else 0.0
    if interrupt.hit and silent > stall and progress.last is not None:
        result = _with_last_silence(result, silent, stall)
    first, last = progress.first, progress.last
    return Tailed(result, timing, progress.received, (last - first) if first is not None and last is not None else 0.0,
                  (first - progress.started) if first is not None else None, interrupt.hit, silent)


def _finish(live: LiveInput, result: Result, *, dialect: str | None, transport: str | None,
            stall: float) -> tuple[Timing | None, Result]:
    """The timing and the annotated result: an input read whole is loaded as `show` loads it."""
    if live.whole:
        # A gzip body is no format of its own: the reader unwraps it whatever the format.
        loaded = load(bytes(live.data), input_format=live.kind if live.kind in FORMATS else "auto", dialect=dialect,
                      transport=transport, stall=stall, max_inflated=settings().max_inflated)
        return loaded.timing, loaded.result
    capture = live.capture()
    notes = tuple(note.diagnostic() for note in (*capture.notes, *transport_notes(capture)))
    # Live reads count from the first byte; a log's from its first timestamp.
    start = None if live.kind == "log" else 0.0
    timing = analyse(result, tuple(live.reads), start=start, stall=stall) if live.reads else None
    return timing, annotate(result, notes, timing)


def _with_last_silence(result: Result, silent: float, stall: float) -> Result:
    """A stall still going on when Ctrl-C came: no frame ends it, so it points at none."""
    return dataclasses.replace(result, diagnostics=(*result.diagnostics, Diagnostic.note(
        "stall", f"nothing had come for {silent:.2f} s when the stream was stopped (threshold {stall:g} s): "
                 "the server, a proxy or the network held the stream", Severity.WARNING)))


def render_summary(result: Result, timing: Timing | None, tailed: Tailed | None = None) -> RenderableType:
    parts: list[RenderableType] = [render_result(result)]
    if timing is not None:
        parts.append(render_timing(timing))
    if tailed is not None:
        parts.append(_received(result, tailed))
    return Group(*parts)


def _received(result: Result, tailed: Tailed) -> Text:
    if tailed.waited is None:
        line = "received nothing"
    else:
        line = (f"received {tailed.received} bytes in {len(result.frames)} frames over {tailed.duration:.2f} s "
                f"(the first byte after {tailed.waited:.2f} s)")
    if tailed.interrupted:
        line += f"; stopped by Ctrl-C before the stream ended, {tailed.silent:.1f} s after the last byte"
    return Text(line, style="bold yellow" if tailed.interrupted else "dim")


class _Interrupt:
    """Ctrl-C (SIGINT) while reading sets `hit` instead of raising, so the loop stops between
    reads and the fold so far is kept whole. Only the main thread can take signals."""

    def __init__(self) -> None:
        self.hit = False
        self._previous: signal.Handlers | object | None = None
        self._depth = 0  # entered by the command and by the reading: the handler is set once

    def __enter__(self) -> _Interrupt:
        self._depth += 1
        if self._depth == 1 and threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.hit:
            raise KeyboardInterrupt  # a second Ctrl-C: stop whatever is taking long
        self.hit = True

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        if self._depth == 0 and self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)  # type: ignore[arg-type]
            self._previous = None
