"""`streamfold tail`: fold a stream as it arrives and show it live.

Waits for input with `select` (at most a quarter second at a time) and reads
with `os.read`, which returns as soon as any bytes are there, so nothing
waits for a buffer to fill and the status line keeps ticking while the
stream is silent ("no data for N s"). The input format is detected on the
first bytes as `show` detects it (`services.live`): `curl -i`/`-v` headers
and a timestamped log are unwrapped as they come. On a terminal the reply is
typed out in a live view under a status line; into a pipe it is written as
marked text (`tail_views`). Ctrl-C stops reading: the summary of what arrived
is shown and tail exits 130. Either way the summary, findings and timing follow.

Clocks. tail never sees the request, so from a pipe (or a FIFO, a terminal)
its times count from when tail started: with `curl … | streamfold tail` the
shell starts both at once, so that is about when curl sent the request, and
TTFB and TTFT mean what they mean in `record` and `show` (see
`services.timing`). On Linux the process's own start is read from /proc, so
Python's start-up is inside the count, as it is inside curl's. A regular
file (`tail < capture.sse`) is read at once and has no arrival times: there
is no timing unless the file carries its own (a timestamped log, a
`curl --trace-time` dump), and then its times are said to be the file's.
"""

from __future__ import annotations

import contextlib
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
from typing import BinaryIO

import click
from rich.console import Console, Group, RenderableType
from rich.text import Text

from ..findings import Diagnostic, Severity
from ..folding import Folder
from ..result import Result
from ..services import (
    DEFAULT_STALL,
    FORMATS,
    InputError,
    Timing,
    analyse,
    annotate,
    ended_by_finish_reason,
    load,
    transport_notes,
)
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
@click.option("--save", "save", type=click.Path(dir_okay=False, writable=True), metavar="FILE",
              help="Also write every byte read to FILE as it comes, exactly as read (curl's headers too), so a "
                   "stream seen once can be shown, diffed or replayed later; kept when Ctrl-C stops tail or the "
                   "stream is cut.")
@dialect_option
@transport_option
def tail(capture: str, input_format: str, stall: float, reasoning: str, save: str | None, dialect: str | None,
         transport: str | None) -> None:
    """Fold a stream live as it arrives, then show the summary, findings and timing.

    Reads standard input (or FILE, e.g. a named pipe) without buffering: each
    piece is shown the moment it arrives, with frames, TTFB and TTFT,
    characters per second, elapsed time and how long nothing has come. Ctrl-C
    stops it and shows what arrived (exit 130).

    \b
    TTFB (time to first byte): from the request to the first byte of the body.
    TTFT (time to first text): from the request to the first frame that adds
    reply text (content, reasoning, a refusal or tool-call arguments).
    tail does not see the request: from a pipe it counts from its own start,
    which with `curl ... | streamfold tail` is when curl started. A regular
    file has no arrival times (unless it carries its own, as a timestamped
    log does), so `tail < FILE` gives no TTFB or TTFT.

    \b
    Examples:
      curl -sN https://api.openai.com/v1/chat/completions -H ... -d ... | streamfold tail
      curl -siN ... | streamfold tail --save reply.txt | less
      streamfold tail < capture.sse
    """
    started = process_start()
    try:
        source = sys.stdin.fileno() if capture == "-" else os.open(capture, os.O_RDONLY)
        mode = os.fstat(source).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
    except OSError as exc:
        click.echo(f"streamfold: cannot read {capture!r}: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:  # Ctrl-C while a named pipe waited for its writer
        sys.exit(EXIT_INTERRUPTED)
    try:
        saved = open(save, "wb") if save is not None else None  # noqa: SIM115 - closed below, after the summary
    except OSError as exc:
        click.echo(f"streamfold: cannot write {save!r}: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_USAGE)
    shown = console()
    # Ctrl-C is taken from here to the end, not only while reading: one that comes as the input
    # ends (or while the summary is made) still gets the summary and exit 130, never a traceback.
    with _Interrupt() as interrupt, contextlib.closing(saved) if saved is not None else contextlib.nullcontext():
        try:
            tailed = tail_stream(source, shown, dialect=dialect, transport=transport, stall=stall,
                                 input_format=input_format, reasoning=reasoning, interrupt=interrupt,
                                 started=None if stat.S_ISREG(mode) else started, save=saved)
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
            if save is not None:
                click.echo(f"saved the {tailed.received} bytes read to {save}", err=True)
        except KeyboardInterrupt:  # a second Ctrl-C while the summary is written
            sys.exit(EXIT_INTERRUPTED)
    if interrupt.hit:
        sys.exit(EXIT_INTERRUPTED)
    end(tailed.result)


def process_start() -> float:
    """When this process started, on the `time.monotonic` clock. A shell starts the commands of a
    pipeline at once, so for `curl … | streamfold tail` this is about when curl started; counting from
    tail's own first line would leave Python's start-up (half a second) out of every TTFB. Read from
    /proc on Linux; elsewhere, now."""
    now = time.monotonic()
    try:
        with open(f"/proc/{os.getpid()}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        ticks = int(fields[19])  # field 22, starttime: clock ticks from boot to the process's start
        alive = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return now
    return now - alive if 0 <= alive < 60 else now  # a start that far back is no pipeline's: not trusted


@dataclass(frozen=True, slots=True)
class Tailed:
    """What a tail read: the result (annotated as `load` annotates a capture) and its timing."""

    result: Result
    timing: Timing | None
    #: Bytes of input received.
    received: int
    #: Whether nothing came (no first byte).
    empty: bool
    #: Whether the input had arrival times of tail's own (a pipe, not a regular file).
    timed: bool
    #: Ctrl-C stopped it before the input ended; `silent` seconds had passed since the last byte.
    interrupted: bool = False
    silent: float = 0.0
    #: Where the timing's times count from, in words, when they are tail's own (`TAILS_CLOCK`).
    clock: str | None = None
    #: Seconds from tail's start to its first read, when the first byte was already there by then: it
    #: came while Python started, so TTFB and TTFT say at most this much too much.
    late: float | None = None


def tail_stream(source: int, console: Console, *, dialect: str | None, transport: str | None,
                stall: float, input_format: str = "auto", reasoning: str = "mark",
                interrupt: _Interrupt | None = None, started: float | None = None,
                save: BinaryIO | None = None) -> Tailed:
    """Fold the bytes of file descriptor `source` live until it ends or Ctrl-C (`interrupt`, the
    caller's when it takes Ctrl-C for longer than the reading). `started`: when tail started on the
    monotonic clock, the origin of its times (None: `source` is a regular file, read with no times).
    `save`: every byte read is written to it, as it comes."""
    folder = Folder(dialect, transport=transport)
    live = LiveInput(input_format)
    view: View = LiveView(console) if console.is_terminal else PipeView(console.file, sys.stderr, reasoning)
    progress = Progress(time.monotonic() if started is None else started, timed=started is not None)
    interrupt = interrupt or _Interrupt()

    def fold(body: bytes, now: float) -> None:
        if body:
            events = folder.feed(body)
            progress.frames = len(folder.frames)
            progress.took(events, now)
            view.show(events, progress, now)

    reading, waited = time.monotonic(), False
    with view, interrupt:
        while not interrupt.hit:
            ready, _, _ = select.select([source], [], [], _TICK)
            now = time.monotonic()
            waited = waited or not ready
            if not ready:
                if progress.last is not None and now - progress.last >= _SETTLE:
                    fold(live.settle(now - progress.started), now)
                view.tick(progress, now)
                continue
            chunk = os.read(source, _READ_SIZE)
            if not chunk:
                break
            if save is not None:
                save.write(chunk)
                save.flush()  # kept as it came, whatever stops tail later
            if progress.first is None:
                progress.first = now
            progress.last = now
            progress.received += len(chunk)
            fold(live.feed(chunk, now - progress.started), now)
            progress.whole = live.what if live.whole else ""
            view.tick(progress, now)
        now = time.monotonic()
        fold(live.close(now - progress.started), now)
        result = folder.close()
    timing, result, clock = _finish(live, result, dialect=dialect, transport=transport, stall=stall,
                                    timed=started is not None)
    silent = now - progress.last if progress.last is not None else 0.0
    if interrupt.hit and silent > stall and progress.last is not None:
        result = _with_last_silence(result, silent, stall)
    late = reading - progress.started if clock is not None and not waited else None
    return Tailed(result, timing, progress.received, progress.first is None, started is not None, interrupt.hit,
                  silent, clock, late)


def _finish(live: LiveInput, result: Result, *, dialect: str | None, transport: str | None,
            stall: float, timed: bool) -> tuple[Timing | None, Result, str | None]:
    """The timing, the annotated result and, when the times are tail's own, where they count from: an
    input read whole is loaded as `show` loads it, its times (if any) its own."""
    if live.whole:
        # A gzip body is no format of its own: the reader unwraps it whatever the format.
        loaded = load(bytes(live.data), input_format=live.kind if live.kind in FORMATS else "auto", dialect=dialect,
                      transport=transport, stall=stall, max_inflated=settings().max_inflated)
        return loaded.timing, loaded.result, None
    capture = live.capture()
    if capture.handed_out:
        result = ended_by_finish_reason(result)  # as `load` decides it: no end marker is no cut here
    notes = tuple(note.diagnostic() for note in (*capture.notes, *transport_notes(capture)))
    timing, clock = None, None
    if live.reads and live.kind == "log":  # the log's own clock: from its first timestamp
        timing = analyse(result, tuple(live.reads), start=None, stall=stall)
    elif live.reads and timed:  # tail's clock: from its start, about when a piped curl sent the request
        timing, clock = analyse(result, tuple(live.reads), start=0.0, stall=stall), TAILS_CLOCK
    return timing, annotate(result, notes, timing), clock


def _with_last_silence(result: Result, silent: float, stall: float) -> Result:
    """A stall still going on when Ctrl-C came: no frame ends it, so it points at none."""
    return dataclasses.replace(result, diagnostics=(*result.diagnostics, Diagnostic.note(
        "stall", f"nothing had come for {silent:.2f} s when the stream was stopped (threshold {stall:g} s): "
                 "the server, a proxy or the network held the stream", Severity.WARNING)))


def render_summary(result: Result, timing: Timing | None, tailed: Tailed | None = None) -> RenderableType:
    parts: list[RenderableType] = [render_result(result)]
    if timing is not None:
        parts.append(render_timing(timing, tailed.clock if tailed is not None else None))
    if tailed is not None:
        parts.append(_received(result, tailed, timing))
    return Group(*parts)


#: How tail says where its times count from.
TAILS_CLOCK = "tail's start: with `curl … | streamfold tail`, about when curl sent the request"


def _received(result: Result, tailed: Tailed, timing: Timing | None) -> Text:
    frames = f"{tailed.received} bytes in {len(result.frames)} frames"
    if tailed.empty:
        line = "received nothing"
    elif tailed.timed:
        line = f"received {frames}"
        if tailed.late is not None:
            line += (f"; the first byte was there before tail could read it ({tailed.late:.2f} s after its start, "
                     "Python's start-up), so TTFB and TTFT are at most what they say")
    else:
        line = f"read {frames} from a file, all at once: " + (
            "the times above are the file's own" if timing is not None else
            "a file has no arrival times, so there is no timing (pipe the stream into tail as it comes)")
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
