"""What every command shares: the options that say how to read a capture, the
group settings (--color, --quiet, --strict, --max-inflated), reading FILE|- and loading it
through the services layer, and the exit codes.

Exit codes: 0 when the input was read (whatever it contained); 1 when
`check` or `diff` find a difference, with `--strict` when the stream had
errors, or with `--require-complete` when it did not end as its protocol says
(why, in one line on stderr); 2 on usage errors or unreadable input (one line
on stderr, no traceback).
"""

from __future__ import annotations

import dataclasses
import re
import sys
from collections.abc import Callable
from typing import IO, Any, cast

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)

from .._json import dumps_strict
from ..dialects import DIALECTS
from ..findings import Severity
from ..framing.sniff import TRANSPORTS
from ..fronts.terminal import on_terminal
from ..result import Result
from ..services import DEFAULT_STALL, FORMATS, MAX_INFLATED, InputError, Loaded, load
from ..services.load import fold_capture
from ..services.rows import RowBounds
from ..store.reader import parse_ref, read_stored

__all__ = ["EXIT_MISMATCH", "EXIT_OK", "EXIT_USAGE", "REQUIRE_COMPLETE_HELP", "Settings", "console",
           "dialect_option", "end", "input_options", "lane_option", "load_capture", "on_terminal", "read_input",
           "settings", "several_inputs", "transport_option", "write_json"]

EXIT_OK = 0
EXIT_MISMATCH = 1
EXIT_USAGE = 2
# Inputs from this size on get a progress bar (on a terminal).
_PROGRESS_FROM = 4 * 1024 * 1024

dialect_option = click.option(
    "--dialect", type=click.Choice(sorted(DIALECTS)), default=None,
    help="Force the dialect instead of detecting it from the payloads.")
lane_option = click.option(
    "--lane", default=None, metavar="ID",
    help="Of a capture that interleaves replies (Responses WebSocket stream_ids, Realtime responses, agents): the "
         "lane to fold, by the id the result lists under `lanes` (by default the dialect's own choice, the first).")
transport_option = click.option(
    "--transport", type=click.Choice(TRANSPORTS), default=None,
    help="Force the framing instead of sniffing it from the first bytes.")
_input_argument = click.argument("capture", metavar="FILE|-")


def several_inputs(command: Any) -> Any:
    """As `input_options`, for one FILE or more (the command gets a tuple of them)."""
    return input_options(command, several=True)


def input_options(command: Any, *, several: bool = False) -> Any:
    """FILE plus how to read it: shared by every command that takes a capture."""
    command = click.option(
        "--entry", default=None, metavar="N|URL",
        help="HAR, VCR cassette or claude-trace/claude-tap log: the entry (interaction, record) to use, by "
             "index or by a substring of its URL.")(command)
    command = click.option(
        "--input-format", type=click.Choice(FORMATS), default="auto", show_default=True,
        help="What FILE is: a raw body, a HAR, a VCR cassette (vcrpy, pytest-recording, Ruby VCR, go-vcr), a "
             "claude-trace or claude-tap log (trace-log), curl -v/-i output, a curl --trace dump, a timestamped "
             "log, or a chunked body. Detected by default.")(command)
    if several:
        return click.argument("capture", metavar="FILE|-...", nargs=-1, required=True)(command)
    return _input_argument(command)


@dataclasses.dataclass
class Settings:
    """The group options every command honours."""

    color: str = "auto"
    quiet: bool = False
    strict: bool = False
    #: Fail (exit 1) when the stream did not end as its protocol says.
    require_complete: bool = False
    #: The most bytes a compressed body is inflated to (None: the services' default, 256 MiB).
    max_inflated: int | None = None


def load_capture(path: str, input_format: str = "auto", entry: str | None = None, dialect: str | None = None,
                 transport: str | None = None, *, stall: float = DEFAULT_STALL, data: bytes | None = None,
                 rows: Callable[[list[dict[str, Any]], RowBounds], None] | None = None,
                 lane: str | None = None) -> Loaded:
    """Read FILE (or take `data`, its bytes), unwrap, fold and annotate it; unusable input ends the
    program with one line and exit 2. `rows`: see `services.load` (the rows are the progress: no bar)."""
    ref = stored_ref(path)
    if data is None and ref is None:
        data = read_input(path)
    err = Console(stderr=True)
    bar = _ProgressBar(err) if err.is_terminal and rows is None else None
    try:
        limit = settings().max_inflated
        if ref is not None:  # a stored capture (PATH.sqlite#ID): its reads and their arrival times
            return fold_capture(read_stored(*ref, max_inflated=limit or MAX_INFLATED), dialect=dialect,
                                transport=transport, stall=stall, progress=bar, rows=rows, lane=lane)
        assert data is not None
        return load(data, input_format=input_format, entry=entry, dialect=dialect, transport=transport, stall=stall,
                    progress=bar, rows=rows, max_inflated=limit, lane=lane)
    except InputError as exc:
        click.echo(f"streamfold: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    finally:
        if bar is not None:
            bar.close()


class _ProgressBar:
    """A progress bar on stderr for a fold, drawn once the body turns out to be a few MB or more."""

    def __init__(self, err: Console) -> None:
        self._err = err
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    def __call__(self, done: int, total: int) -> None:
        if self._progress is None:
            if total < _PROGRESS_FROM:
                return
            self._progress = Progress(TextColumn("folding"), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                                      console=self._err, transient=True)
            self._progress.start()
            self._task = self._progress.add_task("fold", total=total)
        assert self._task is not None
        self._progress.update(self._task, completed=done)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()


def read_input(capture: str) -> bytes:
    """The capture's bytes; unreadable input ends the program with one line and exit 2."""
    ref = stored_ref(capture)
    if ref is not None:
        try:
            return read_stored(*ref, max_inflated=settings().max_inflated or MAX_INFLATED).body
        except InputError as exc:
            click.echo(f"streamfold: {exc}", err=True)
            sys.exit(EXIT_USAGE)
    try:
        if capture == "-":
            if sys.stdin.isatty():  # typed or pasted: say what ends it, instead of waiting in silence
                click.echo(f"streamfold: reading stdin… ({_END_OF_INPUT} to end)", err=True)
            return sys.stdin.buffer.read()
        with open(capture, "rb") as handle:
            return handle.read()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        click.echo(f"streamfold: cannot read {capture!r}: {reason}", err=True)
        sys.exit(EXIT_USAGE)


#: The keys that end typed input on this system's terminals.
_END_OF_INPUT = "Ctrl-Z, Enter" if sys.platform == "win32" else "Ctrl-D"


def stored_ref(path: str) -> tuple[str, int | None] | None:
    """(store, id) when `path` names a stored capture (`PATH.sqlite#ID`); a bad one ends the program."""
    try:
        return parse_ref(path) if path != "-" else None
    except InputError as exc:
        click.echo(f"streamfold: {exc}", err=True)
        sys.exit(EXIT_USAGE)


def write_json(value: Any) -> None:
    sys.stdout.write(dumps_strict(value, indent=2) + "\n")


def settings() -> Settings:
    context = click.get_current_context(silent=True)
    found = context.find_object(Settings) if context is not None else None
    return found if found is not None else Settings()


def console() -> Console:
    color = settings().color
    out = cast(IO[str], _NoTrailingBlanks(sys.stdout))
    if color == "always":
        return Console(file=out, highlight=False, soft_wrap=False, force_terminal=True)
    return Console(file=out, highlight=False, soft_wrap=False, no_color=color == "never" or None,
                   color_system=None if color == "never" else "auto")


#: Blanks at the end of a line (colour codes among them kept), and a run of them a newline may follow.
_LINE_END_BLANKS = re.compile(r"(?:[ \t]|\x1b\[[0-9;]*m)*[ \t](?:\x1b\[[0-9;]*m)*(?=\r?\n)")
_HELD = re.compile(r"(?:[ \t]|\x1b\[[0-9;]*m)+\Z")
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


class _NoTrailingBlanks:
    """stdout without spaces or tabs at the end of a line: rich pads wrapped lines, table cells and
    indented blocks with them, and copied output should not carry them. Blanks at the end of a write
    are held until the next write says whether a newline follows (a flush lets them out)."""

    def __init__(self, out: IO[str]) -> None:
        self._out = out
        self._held = ""

    def write(self, text: str) -> int:
        whole = _LINE_END_BLANKS.sub(lambda m: "".join(_COLOUR.findall(m.group())), self._held + text)
        held = _HELD.search(whole)
        self._held = held.group() if held else ""
        self._out.write(whole[: held.start()] if held else whole)
        return len(text)

    def flush(self) -> None:
        if self._held:
            self._out.write(self._held)
            self._held = ""
        self._out.flush()

    def isatty(self) -> bool:
        return self._out.isatty()

    def fileno(self) -> int:
        return self._out.fileno()

    @property
    def encoding(self) -> str:
        return getattr(self._out, "encoding", None) or "utf-8"


#: What --require-complete says, for the group and after each command.
REQUIRE_COMPLETE_HELP = ("Exit 1 when the stream did not end as its protocol says (\"complete\": false: cut off, "
                         "mid-frame or between frames, or failed); for CI, with or without --strict.")


def end(result: Result) -> None:
    """--strict: a stream with errors, or nothing folded (no reply), fails the command; --require-complete:
    a stream that did not end as its protocol says does. Why is one line on stderr (stdout is the output)."""
    chosen = settings()
    why: list[str] = []
    if chosen.strict:
        errors = [error.code for error in result.errors]
        errors += [d.code for d in result.diagnostics if d.severity == Severity.ERROR]
        if errors:
            codes = ", ".join(dict.fromkeys(errors))
            why.append(f"--strict: the stream had {len(errors)} error{'s' if len(errors) > 1 else ''} ({codes})")
        elif not result.choices:
            why.append("--strict: no reply was folded")
    if chosen.require_complete and not result.complete:
        said = [d.code for d in result.diagnostics if d.code in _CUT_CODES] + [e.code for e in result.errors
                                                                                if e.code in _CUT_CODES]
        why.append("--require-complete: the stream is incomplete (cut off or failed)"
                   + (f": {', '.join(dict.fromkeys(said))}" if said else ""))
    if why:
        click.echo(f"streamfold: {'; '.join(why)}", err=True)
        sys.exit(EXIT_MISMATCH)


#: The findings that say how a stream failed to end, named when --require-complete fails.
_CUT_CODES = frozenset({"missing-terminal", "unterminated-final-frame", "unterminated-final-line", "truncated-message",
                        "in-stream-error", "no-final-response", "never-ended", "streamed-call-unfinished",
                        "block-not-closed", "resumable-cut", "store-unfinished", "http-status"})
