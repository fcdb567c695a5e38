"""Turn a `Result` into rich renderables. Knows terminals; knows no files or argv.

Stream content is untrusted: every string from a stream goes through
`Text(...)` (never markup), so `[bold]` or escape-looking text in a reply is
shown as typed.

Off a terminal (`wrap=False`) the texts of the reply (content, reasoning,
refusal, tool-call arguments) are written whole, one output line per line of
theirs: a pipe or a file gets URLs and long lines unbroken, never cut at 80
columns. Print such a renderable with `crop=False`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.json import JSON
from rich.padding import Padding
from rich.rule import Rule
from rich.segment import Segment
from rich.text import Text

from .._json import dumps_strict
from ..findings import BINARY_TRANSPORTS, location
from ..result import Choice, Result, ToolCall
from ..services import NOT_A_STREAM
from ..services.lost import LostText
from ..services.timing import Timing, chart_top, sparkline
from .long_text import HEAD, TAIL, clip, clipped_runs, marker

__all__ = ["render_reply_only", "render_result", "render_timing", "render_tool_calls"]

_SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def render_result(result: Result, *, annotate: bool = False, numbered: bool = False,
                  lost: Sequence[LostText] = (), full: bool = True, wrap: bool = True) -> RenderableType:
    """The header, each choice's reply (with `annotate`, each frame's piece marked; with `numbered`,
    preceded by its frame's number; the frames in `lost` marked where their text would have gone),
    usage and findings. Without `full`, long text fields are clipped (`long_text`); without `wrap`,
    the reply's texts are written whole (see the module's docstring)."""
    parts: list[RenderableType] = [_header(result)]
    for choice in result.choices:
        marks = [found for found in lost if found.choice == choice.index]
        content = _Reply(result, choice.index, annotate or numbered, numbered, marks, full, wrap) \
            if marks or (choice.content and (annotate or numbered)) else None
        parts.append(_choice(choice, several=len(result.choices) > 1, content=content, full=full, wrap=wrap))
    if not result.choices:
        parts.append(Text("(no reply was folded)", style="dim"))
        parts.extend(_Reply(result, found.choice, False, False, [found]) for found in lost)
    if result.usage is not None:
        parts.append(_usage(result))
    if result.lanes:
        parts.append(_lanes(result))
    if result.errors or result.diagnostics:
        parts.append(_findings(result))
    return Group(*parts)


def render_reply_only(result: Result, *, full: bool = True) -> RenderableType:
    """--quiet on a terminal: the reply text and the tool calls, nothing else."""
    parts: list[RenderableType] = []
    for choice in result.choices:
        if choice.content:
            parts.append(clip(_shown(choice.content), full))
        parts.extend(render_tool_calls(choice))
    return Group(*parts)


def render_tool_calls(choice: Choice, *, full: bool = True, wrap: bool = True) -> list[RenderableType]:
    """Each tool call of `choice`: its index, name and id, then its arguments."""
    return [_tool_call(call, full, wrap) for call in choice.tool_calls]


class _Whole:
    """A text written whole: each of its lines as one output line (after `indent` spaces), never
    wrapped, cut or padded, tabs kept (print it with `crop=False`)."""

    def __init__(self, text: Text, indent: int = 0) -> None:
        self.text, self.indent = text, indent

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for line in self.text.split("\n", allow_blank=True):
            if self.indent and line.plain:
                yield Segment(" " * self.indent)
            yield from line.render(console, end="")
            yield Segment.line()


def _block(text: Text, wrap: bool, indent: int = 0) -> RenderableType:
    """`text` laid out for the terminal (wrapped, after `indent` spaces), or written whole."""
    if not wrap:
        return _Whole(text, indent)
    return Padding(text, (0, 0, 0, indent), expand=False) if indent else text


class _Header:
    """Dialect, transport, status and model; then the frame counts and the id, on one
    line when they fit and on two when they do not (never a dangling separator)."""

    def __init__(self, result: Result) -> None:
        self.result = result

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        result = self.result
        counts = result.frame_counts
        status = Text("complete", style="green") if result.complete else Text("incomplete", style="bold yellow")
        # The model and id are the stream's own values: shown as text whatever type the server sent.
        model, reply_id = (_shown(value) for value in (result.model, result.id))
        unread = next((d for d in result.diagnostics if d.code in NOT_A_STREAM), None)
        if unread is not None:  # nothing was framed: no transport or dialect to name (the finding says what it is)
            what = str(unread.details.get("format") or _NOT_A_STREAM[unread.code]).split(" (")[0]
            if unread.code == "error-response":
                what += f" ({unread.details.get('vendor')})"
            yield Text.assemble(("not a stream", "bold"), " · ", (str(what), "bold yellow"))
            return
        yield Text.assemble(
            (result.dialect, "bold"), " · ", result.transport, " · ", status,
            *((" · ", (model, "bold")) if model else ()))
        frames = Text(f"{counts['total']} frames: {counts['data']} data, {counts['comments']} comments, "
                      f"{counts['invalid']} invalid", style="dim")
        if reply_id and len(frames) + 3 + len(reply_id) <= options.max_width:
            frames.append(f" · {reply_id}", style="dim")
            yield frames
        else:
            yield frames
            if reply_id:
                yield Text(reply_id, style="dim")


_NOT_A_STREAM = {"empty-input": "nothing to fold", "html-page": "an HTML page", "not-text": "not text",
                 "error-response": "an error response"}


def _shown(value: object) -> str:
    """A value from the stream as text: a server may send a number or a list where text belongs."""
    if value is None or isinstance(value, str):
        return "" if value is None else value
    return dumps_strict(value, ensure_ascii=True, default=str)


def _header(result: Result) -> RenderableType:
    return _Header(result)


class _Reply:
    """A choice's reply, marked. `annotate`: each frame's piece in turn plain and cyan, a dim ¦ where
    frames meet (`numbered`: a dim ‹N› before each piece instead, N its frame). `lost`: a marker where
    each frame that did not decode came, `⟦frame 17 lost: invalid JSON; partial text " wor"⟧`
    (`[[...]]` on a terminal that only takes ASCII). Without `full`, a long reply shows the pieces in
    its head and its tail (`long_text`); a marker in the part left out comes after that line."""

    def __init__(self, result: Result, choice: int, annotate: bool, numbered: bool, lost: Sequence[LostText],
                 full: bool = True, wrap: bool = True) -> None:
        self.result, self.choice, self.annotate, self.numbered = result, choice, annotate, numbered
        self.lost = sorted(lost, key=lambda found: (found.offset, found.frame))
        self.full, self.wrap = full, wrap

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        found = self.result.choice(self.choice)
        content = _shown(found.content) if found is not None else ""
        pieces: list[tuple[int, int, int | None]] = list(self.result.text_runs(choice=self.choice)) \
            if self.annotate else [(0, len(content), None)]
        opening, closing = ("[[", "]]") if options.ascii_only else ("⟦", "⟧")
        unit = "message" if self.result.transport in BINARY_TRANSPORTS else "frame"
        text = Text()
        lost = iter(self.lost)
        waiting = next(lost, None)

        def mark() -> None:
            nonlocal waiting
            assert waiting is not None
            said = f"{unit} {waiting.frame} lost: {waiting.reason}"
            if waiting.partial:
                said += f"; partial text {dumps_strict(waiting.partial, ensure_ascii=options.ascii_only)}"
            text.append(f"{opening}{said}{closing}", style="bold red")
            waiting = next(lost, None)

        shown_to = 0
        for low, high in clipped_runs(len(content), self.full):
            if low > shown_to:
                text.append(marker(low - shown_to))
            shown_to, first = high, True
            for position, (run_start, run_end, frame) in enumerate(pieces):
                start, end = max(run_start, low), min(run_end, high)
                if start >= end:
                    continue
                while waiting is not None and waiting.offset <= start:
                    mark()
                if self.numbered:
                    text.append(f"‹{frame}›", style="dim")
                elif self.annotate and position and not first:
                    text.append("¦", style="dim")
                first = False
                style = "cyan" if self.annotate and position % 2 else ""
                at = start
                while waiting is not None and waiting.offset < end:
                    cut = max(at, waiting.offset)
                    text.append(content[at:cut], style=style)
                    at = cut
                    mark()
                text.append(content[at:end], style=style)
        while waiting is not None:
            mark()
        yield _block(text, self.wrap)


def _choice(choice: Choice, *, several: bool, content: RenderableType | None = None,
            full: bool = True, wrap: bool = True) -> RenderableType:
    parts: list[RenderableType] = []
    title = f"choice {choice.index}" if several else "reply"
    parts.append(Rule(Text(title, style="bold"), align="left", style="dim"))
    if choice.reasoning:
        parts.append(Text("reasoning", style="dim italic"))
        parts.append(_block(clip(_shown(choice.reasoning), full, style="dim"), wrap, indent=2))
        parts.append(Text())
    if content is not None:
        parts.append(content)
    elif choice.content:
        parts.append(_block(clip(_shown(choice.content), full), wrap))
    if choice.refusal:
        parts.append(_block(Text.assemble(("refusal: ", "bold red"), clip(_shown(choice.refusal), full)), wrap))
    parts.extend(render_tool_calls(choice, full=full, wrap=wrap))
    finish = _shown(choice.finish_reason) or "none"
    line = Text.assemble(("finish: ", "dim"), (finish, "bold" if choice.finish_reason else "yellow"))
    if choice.finish_reason_raw and choice.finish_reason_raw != choice.finish_reason:
        line.append(f" (raw {choice.finish_reason_raw!r})", style="dim")
    parts.append(line)
    return Group(*parts)


def _tool_call(call: ToolCall, full: bool = True, wrap: bool = True) -> RenderableType:
    title = Text.assemble(("tool call ", "dim"), (str(call.index), "bold"), " ",
                          (_shown(call.name) or "?", "bold magenta"))
    if call.id:
        title.append(f"  {_shown(call.id)}", style="dim")
    long = not full and len(call.arguments) > HEAD + TAIL  # then as sent: laying out a huge parsed value is slow
    if call.error is None:
        body = clip(call.arguments, full) if long else JSON(dumps_strict(call.parsed), indent=2, highlight=False).text
    else:
        body = Text.assemble(("arguments do not parse: ", "bold red"), call.error, "\n",
                             clip(call.arguments, full, style="red"))
    return Group(title, _block(body, wrap, indent=2))


def _usage(result: Result) -> Text:
    assert result.usage is not None
    usage = result.usage
    fields = (("input", usage.input_tokens), ("output", usage.output_tokens), ("reasoning", usage.reasoning_tokens),
              ("cache read", usage.cache_read_tokens), ("total", usage.total_tokens))
    text = Text("usage: ", style="dim")
    text.append(", ".join(f"{name} {value}" for name, value in fields if value is not None))
    return text


def _lanes(result: Result) -> Text:
    """The replies the capture interleaves, the folded one marked, and how to fold another."""
    text = Text(f"lanes ({result.lanes[0].kind}): ", style="dim")
    for position, lane in enumerate(result.lanes):
        if position:
            text.append(", ")
        text.append(lane.id, style="bold" if lane.followed else "")
        text.append(f" (frame {lane.first_frame}{', folded' if lane.followed else ''})", style="dim")
    if len(result.lanes) > 1:
        text.append("; --lane ID folds another", style="dim")
    return text


#: Findings of one code shown in full; the others are one line that counts them (`--json` lists them).
SHOWN_PER_CODE = 3


def _findings(result: Result) -> RenderableType:
    lines: list[RenderableType] = [Rule(Text("findings", style="bold"), align="left", style="dim")]
    transport = result.transport
    # (severity, code, where, message, the code a findings-collapsed one counts)
    found: list[tuple[str, str, str, str, str | None]] = [
        ("error", error.code, location(error.frame, error.offset, error.line, transport), error.message, None)
        for error in result.errors]
    # Most severe first; within a severity, stream order.
    found += [(str(d.severity), d.code, location(d.frame, d.offset, d.line, transport), d.message,
               str(d.details.get("code")) if d.code == "findings-collapsed" else None)
              for d in sorted(result.diagnostics, key=lambda d: _SEVERITY_ORDER.get(d.severity, 3))]
    totals = Counter(code for _, code, *_ in found)
    # Past the core's cap its findings-collapsed diagnostic has the real count: the count line says it instead.
    counted = {str(d.details.get("code")): d.details["count"] for d in result.diagnostics
               if d.code == "findings-collapsed" and isinstance(d.details.get("count"), int)}
    listed = {str(d.details.get("code")): d.details.get("listed") for d in result.diagnostics
              if d.code == "findings-collapsed"}
    shown: Counter[str] = Counter()
    for severity, code, where, message, of in found:
        if of is not None and totals[of] > SHOWN_PER_CODE:
            continue  # the count line of that code says what this one does
        shown[code] += 1
        if shown[code] <= SHOWN_PER_CODE:
            lines.append(_finding(severity, code, where, message))
        elif shown[code] == SHOWN_PER_CODE + 1:
            total = counted.get(code, totals[code])
            which = f"the first {listed[code]}" if code in listed else "them"
            lines.append(Text(f"{'':8}… and {total - SHOWN_PER_CODE:,} more {code} findings ({total:,} in all; "
                              f"--json lists {which})", style="dim"))
    return Group(*lines)


def _finding(severity: str, code: str, where: str, message: str) -> Text:
    """One finding: "warning code (frame 3, line 12): message" (a binary stream's: message 3, byte 668)."""
    return Text.assemble(
        (f"{severity:<7} ", _SEVERITY_STYLE.get(severity, "")), (code, "bold"),
        (f" ({where})" if where else "", "dim"), ": ", message)


def render_timing(timing: Timing, clock: str | None = None) -> RenderableType:
    """The timing section; `clock` says where the times count from when the front knows it better
    than the timing does (tail: its own start)."""
    chart = sparkline(timing, 60)
    lines: list[RenderableType] = [Rule(Text("timing", style="bold"), align="left", style="dim"),
                                   Text(timing.summary(clock))]
    if chart:
        top = chart_top(timing)
        full = f"  full bar = {top * 1000:.0f} ms" if top < 1 else f"  full bar = {top:.2f} s"
        lines.append(Text.assemble(("gaps ", "dim"), (chart, "cyan"), (full, "dim")))
    return Group(*lines)
