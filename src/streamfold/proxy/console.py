"""What `streamfold record` prints: one line per finished exchange and, on a
terminal, a live line per exchange still in flight kept below them.

Strategy: rendering is pure (`exchange_line`, `live_lines` take values and
return text), and `Console` only decides where the text goes. Without a
terminal every line goes to `echo` as it is and no live line is drawn, so a
pipe or a log file gets exactly one line per exchange. On a terminal the live
block is redrawn about four times a second from a snapshot of the exchanges in
flight: the cursor goes up over the block, erases to the end of the screen, and
writes the block again, so the finished lines above it are never touched. A
finished line is written in the same locked step that drops its exchange from
the block, so it takes the live line's place. Each live line is cut to the
terminal's width: a wrapped line would make the cursor-up count wrong.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ..fronts.serving import MAX_ECHOED, shorten
from ..store import Summary

__all__ = ["Console", "InFlight", "exchange_line", "live_lines"]

#: Findings named by code on the exchange line when there are at most this many (else the first ones and "+N").
SHOWN_FINDINGS = 3
#: Seconds between redraws of the live block.
REDRAW_SECONDS = 0.25

_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class Output(Protocol):
    """Where the live block is drawn: a terminal's stream, or a `fronts.serving.LineOutput` over it."""

    def write(self, text: str, /) -> int: ...
    def flush(self) -> None: ...
    def fileno(self) -> int: ...


@dataclass(eq=False)  # each exchange is its own, however alike two look
class InFlight:
    """One exchange in flight, as the live line shows it. The proxy's event loop updates it; the
    redraw thread only reads it (a line a read behind is fine)."""

    method: str
    path: str
    started: float = field(default_factory=time.monotonic)
    status: int | None = None
    bytes: int = 0
    reads: int = 0


def printable(text: str) -> str:
    """`text` with control characters shown as escapes: a path or an upstream's error message must not
    move the terminal's cursor or change its colours."""
    return _UNPRINTABLE.sub(lambda match: repr(match.group())[1:-1], text)


def seconds(value: float) -> str:
    """A duration short and readable: `0.4ms`, `12ms`, `0.21s`, `3.40s`."""
    if value < 0.01:
        return f"{value * 1000:.1f}ms"
    if value < 0.1:
        return f"{value * 1000:.0f}ms"
    return f"{value:.2f}s"


def size(count: int) -> str:
    """A byte count short and readable: `512 B`, `12.4 KB`, `3.1 MB`."""
    if count < 1000:
        return f"{count} B"
    if count < 1_000_000:
        return f"{count / 1000:.1f} KB"
    return f"{count / 1_000_000:.1f} MB"


def exchange_line(method: str, path: str, status: int | None, outcome: str, summary: Summary | None,
                  reason: str | None = None) -> str:
    """The one line printed when an exchange ends, each thing said once:

    `POST /v1/chat/completions 200 openai-chat complete ttfb=0.18s ttft=0.21s frames=14 finish=stop findings=0`,
    with TTFB and TTFT from when the proxy got the request (`services.timing`),
    `... incomplete (client cut) ...`, `... findings=1 [stream-truncated] upstream cut: REASON`,
    `POST /v1/x 502 failed: REASON`. `outcome` is how the connection ended (the store's), `summary`
    what the stream said (complete or not); `reason` is the error in a few words."""
    head = f"{shorten(method, 20)} {shorten(path)} {status if status is not None else '-'}"
    reason = shorten(reason, 2 * MAX_ECHOED) if reason is not None else None
    if outcome == "failed":
        return printable(f"{head} failed: {reason or 'no reason recorded'}")
    cut = {"client-cut": "client cut", "upstream-cut": "upstream cut"}.get(outcome)
    if summary is None:  # no fold: the store was opened without summaries, or folding failed
        text = head + (f" {cut}" if cut else " complete")
    else:
        complete = "complete" if summary.complete else "incomplete"
        ttfb, ttft = ("-" if value is None else seconds(value) for value in (summary.ttfb, summary.ttft))
        text = (f"{head} {summary.dialect} {complete}{' (client cut)' if outcome == 'client-cut' else ''} "
                f"ttfb={ttfb} ttft={ttft} frames={summary.frames} finish={summary.finish_reason or '-'} "
                f"findings={len(summary.findings)}{_codes(summary.findings)}")
        if outcome == "upstream-cut":
            text += " upstream cut"
    if outcome == "upstream-cut" and reason:
        text += f": {reason}"
    return printable(text)


def _codes(findings: Sequence[str]) -> str:
    if not findings:
        return ""
    shown = list(findings[:SHOWN_FINDINGS])
    if len(findings) > SHOWN_FINDINGS:
        shown.append(f"+{len(findings) - SHOWN_FINDINGS}")
    return f" [{', '.join(shown)}]"


def live_lines(flights: Sequence[InFlight], now: float, width: int) -> list[str]:
    """The live block for the exchanges in flight, oldest first, each line at most `width - 1` characters:
    `> POST /v1/chat/completions 200 3.2s 12.4 KB in 57 reads`, or `waiting` before the response's head."""
    lines = []
    for flight in sorted(flights, key=lambda flight: flight.started):
        elapsed = seconds(max(0.0, now - flight.started))
        if flight.status is None:
            state = f"waiting {elapsed}"
        else:
            state = f"{flight.status} {elapsed} {size(flight.bytes)} in {flight.reads} read{'s' * (flight.reads != 1)}"
        line = printable(f"> {flight.method} {flight.path} {state}")
        lines.append(line if len(line) < width else line[:max(0, width - 2)] + "…")
    return lines


class Console:
    """Where the proxy's lines go. `echo` takes each finished line (and the first, the URL) when there is
    no terminal; with `live` and a terminal stream `out`, the live block is kept below them."""

    def __init__(self, echo: Callable[[str], None] = print, *, out: Output | None = None,
                 live: bool = False, redraw_seconds: float = REDRAW_SECONDS) -> None:
        self.echo = echo
        self.out = out
        self.live = live and out is not None
        self._flights: list[InFlight] = []
        self._drawn = 0  # live lines on the screen below the cursor's line, to go up over
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._redraw_seconds = redraw_seconds
        self._thread: threading.Thread | None = None

    def line(self, text: str) -> None:
        """Print a finished line (above the live block)."""
        with self._lock:
            self._write_above(text)

    def begin(self, method: str, path: str) -> InFlight:
        """An exchange is in flight: it gets a live line (on a terminal) until `finish`."""
        flight = InFlight(method, path)
        with self._lock:
            self._flights.append(flight)
            if self.live and self._thread is None:
                self._thread = threading.Thread(target=self._redraw_loop, name="streamfold-record-console",
                                                daemon=True)
                self._thread.start()
        return flight

    def finish(self, flight: InFlight, text: str) -> None:
        """The exchange ended: its live line goes and its finished line takes the place."""
        with self._lock:
            if flight in self._flights:
                self._flights.remove(flight)
            self._write_above(text)

    def drop(self, flight: InFlight) -> None:
        """The exchange is gone without a finished line (the store failed, the server stopped)."""
        with self._lock:
            if flight in self._flights:
                self._flights.remove(flight)

    def close(self) -> None:
        """Stop redrawing and erase the live block."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2)
        with self._lock:
            if self.live and self.out is not None and self._drawn:
                self.out.write(self._erase())
                self.out.flush()
                self._drawn = 0

    def _write_above(self, text: str) -> None:
        if not self.live or self.out is None:
            self.echo(text)
            return
        self.out.write(self._erase() + text + "\n" + self._block())
        self.out.flush()

    def _erase(self) -> str:
        erase = f"\r\x1b[{self._drawn}A\x1b[J" if self._drawn else ""
        self._drawn = 0
        return erase

    def _block(self) -> str:
        lines = live_lines(self._flights, time.monotonic(), self._width())
        self._drawn = len(lines)
        return "".join(line + "\n" for line in lines)

    def _width(self) -> int:
        try:
            columns = os.get_terminal_size(self.out.fileno()).columns if self.out is not None else 0
        except (OSError, ValueError, AttributeError):
            columns = 0
        return columns or 80  # a fresh pty says 0 columns until someone sets its size

    def _redraw_loop(self) -> None:
        while not self._stop.wait(self._redraw_seconds):
            with self._lock:
                if self.out is None or (not self._flights and not self._drawn):
                    continue
                self.out.write(self._erase() + self._block())
                self.out.flush()
