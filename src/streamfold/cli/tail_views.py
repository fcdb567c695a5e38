"""What `streamfold tail` shows while the stream arrives: a live view with a
status line on a terminal, the reply as marked text into a pipe.

Into a pipe (`| less`, `> file`), stdout is line-oriented text:

- the reply's text as it is;
- each line of reasoning, an empty one too, begins with `[reasoning] ` (and
  of a refusal with `[refusal] `), so `grep -v '^\\[reasoning\\] '` leaves the reply alone
  (`--reasoning stderr` writes the reasoning, unmarked, to stderr instead;
  `--reasoning hide` leaves it out);
- each finished tool call on a line of its own: `[tool call K NAME: ARGUMENTS]`;
- at the end, after a blank line, the summary, findings and timing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.rule import Rule
from rich.text import Text

from .._json import dumps_strict
from ..events import Event, Finding, TextDelta, ToolCallDelta, ToolCallDone

__all__ = ["MARKS", "REASONING", "LiveView", "PipeView", "Progress", "View"]

#: How a line of each field begins in a pipe (the reply's lines are not marked).
MARKS = {"reasoning": "[reasoning] ", "refusal": "[refusal] "}
#: Where reasoning goes in a pipe: marked on stdout, to stderr, or nowhere.
REASONING = ("mark", "stderr", "hide")
# Nothing arrived for this long: the status line says so.
_QUIET = 1.0


@dataclass
class Progress:
    """What has arrived so far; times on the monotonic clock. `started` is where TTFB and TTFT count
    from (tail's start, about when a piped curl sent the request: see `tail`); `timed` is False for
    a regular file, which has no arrival times (no TTFB or TTFT is shown for it)."""

    started: float
    timed: bool = True
    #: What the input is when it must be read whole before it is folded (a HAR file, ...).
    whole: str = ""
    first: float | None = None
    last: float | None = None
    received: int = 0
    frames: int = 0
    findings: int = 0
    first_token: float | None = None
    characters: int = 0

    def took(self, events: Sequence[Event], now: float) -> None:
        for event in events:
            # The first text as `services.timing` finds it: content, reasoning, a refusal or arguments.
            text = event.text if isinstance(event, TextDelta) else \
                event.arguments if isinstance(event, ToolCallDelta) else ""
            if text:
                self.characters += len(text)
                if self.first_token is None:
                    self.first_token = now - self.started
            elif isinstance(event, Finding):
                self.findings += 1

    def status(self, now: float) -> str:
        if self.first is None:
            return f"waiting for the first byte · {now - self.started:.1f} s"
        elapsed = now - self.started
        parts = [f"{self.frames} frames", f"{self.received} bytes"]
        if self.whole:
            parts = [f"{self.whole}: read whole, folded at its end", f"{self.received} bytes"]
        if self.timed:
            parts.append(f"TTFB {_ms(self.first - self.started)}")
            parts.append(f"TTFT {_ms(self.first_token)}" if self.first_token is not None else "TTFT -")
        if self.first_token is not None and elapsed > self.first_token:
            parts.append(f"{self.characters / (elapsed - self.first_token):.0f} chars/s")
        parts.append(f"{elapsed:.1f} s")
        if self.findings:
            parts.append(f"{self.findings} findings")
        idle = now - (self.last if self.last is not None else self.first)
        if idle >= _QUIET:
            parts.append(f"no data for {int(idle)} s")
        return " · ".join(parts)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


class ToolCallNumbers:
    """Tool calls numbered as `show`, `--json` and `blame` number them: by their place among the
    choice's calls in key order, not by the dialect's key (Anthropic's and Bedrock's is the content
    block's index, which counts the text and thinking blocks before the call too)."""

    def __init__(self) -> None:
        self._keys: dict[int, set[int]] = {}

    def see(self, event: Event) -> None:
        if isinstance(event, (ToolCallDelta, ToolCallDone)):
            self._keys.setdefault(event.choice, set()).add(event.tool_call)

    def number(self, event: ToolCallDone) -> int:
        self.see(event)
        return sorted(self._keys[event.choice]).index(event.tool_call)


class View:
    def __enter__(self) -> View:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def show(self, events: Sequence[Event], progress: Progress, now: float) -> None:
        raise NotImplementedError

    def tick(self, progress: Progress, now: float) -> None:
        """Time passed with nothing new (called at least once a second)."""


class PipeView(View):
    """Into a pipe: the reply as it comes, reasoning marked line by line (see the module's doc)."""

    def __init__(self, out: IO[str], err: IO[str], reasoning: str = "mark") -> None:
        self._out = out
        self._err = err
        self._reasoning = reasoning
        self._field: str | None = None
        self._line_start = True
        self._wrote = False
        self._numbers = ToolCallNumbers()

    def show(self, events: Sequence[Event], progress: Progress, now: float) -> None:
        pieces: list[str] = []
        for event in events:
            self._numbers.see(event)
            if isinstance(event, TextDelta):
                if event.field == "reasoning" and self._reasoning != "mark":
                    if self._reasoning == "stderr":
                        self._err.write(event.text)
                        self._err.flush()
                    continue
                self._text(pieces, event.field, event.text)
            elif isinstance(event, ToolCallDone):
                arguments = dumps_strict(event.arguments) if event.error is None else event.error
                self._text(pieces, "tool", f"[tool call {self._numbers.number(event)} {event.name}: {arguments}]\n")
        if pieces:
            self._out.write("".join(pieces))
            self._out.flush()
            self._wrote = True

    def _text(self, pieces: list[str], field: str, text: str) -> None:
        if field != self._field and not self._line_start:
            pieces.append("\n")  # another field begins on a line of its own
            self._line_start = True
        self._field = field
        mark = MARKS.get(field, "")
        lines = text.split("\n")
        for index, line in enumerate(lines):
            if index:
                pieces.append("\n")
                self._line_start = True
            if line or index + 1 < len(lines):  # the line has text, or ends here (an empty line is marked too)
                if self._line_start and mark:
                    pieces.append(mark)
                pieces.append(line)
                self._line_start = False

    def __exit__(self, *exc: object) -> None:
        if self._wrote:
            self._out.write("\n" if self._line_start else "\n\n")
            self._out.flush()


class LiveView(View):
    """On a terminal: a status line over the end of the reply, redrawn as frames arrive and at
    least once a second while nothing does (so a stall shows as one)."""

    def __init__(self, console: Console) -> None:
        self._console = console
        self._reasoning: list[str] = []
        self._content: list[str] = []
        self._tools: list[str] = []
        self._numbers = ToolCallNumbers()
        self._live = Live(console=console, refresh_per_second=10, transient=True, auto_refresh=False)

    def __enter__(self) -> LiveView:
        self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._live.stop()

    def show(self, events: Sequence[Event], progress: Progress, now: float) -> None:
        for event in events:
            self._numbers.see(event)
            if isinstance(event, TextDelta):
                (self._reasoning if event.field == "reasoning" else self._content).append(event.text)
            elif isinstance(event, ToolCallDone):
                arguments = dumps_strict(event.arguments) if event.error is None else event.error
                self._tools.append(f"tool call {self._numbers.number(event)} {event.name}: {arguments}")
        self.tick(progress, now)

    def tick(self, progress: Progress, now: float) -> None:
        self._live.update(self._render(progress.status(now)), refresh=True)

    def _render(self, status: str) -> RenderableType:
        budget = max(3, self._console.height - 3)
        body = Text()
        reasoning = _tail_lines("".join(self._reasoning), budget // 3, self._console.width)
        if reasoning:
            body.append(reasoning + "\n", style="dim")
        for line in self._tools[-3:]:
            body.append(line + "\n", style="magenta")
        body.append(_tail_lines("".join(self._content), budget - body.plain.count("\n"), self._console.width))
        return Group(Text(status, style="bold cyan"), Rule(style="dim"), body)


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
