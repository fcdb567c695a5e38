"""Reading a log into a `Capture` (see `inputs.read_capture`), and the clock
that keeps the timestamps of a log or a curl trace from going backwards.

A log line is a prefix (a timestamp, a level, a logger name, in the shapes
apps print them, Python logging's default formats among them) and a message.
A message that holds stream data (a JSON object, `[DONE]`, an SSE field line,
either alone or after up to two short labels such as a logger name and
`chunk:`, as in `2025-07-01 10:00:00,550 DEBUG app: chunk: {...}`) becomes
part of the body (a logged object that names its `type`, as Anthropic's
events do, with the `event:` line the stream sent it under); the other lines
(an INFO line saying a request went out, a warning) are skipped and counted
in one note.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import datetime

from ..findings import Severity
from .capture import Capture, Note, Segment

__all__ = ["Clock", "LogReader", "from_log", "is_log_line"]

_LEVELS = r"(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL|TRACE|NOTICE)"
_STAMP = r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?|\d\d:\d\d:\d\d(?:[.,]\d+)?"
# A timestamp first, then `- name - LEVEL -` (Python's `%(asctime)s - %(name)s - %(levelname)s - %(message)s`)
# or any run of `>`/`<`, levels (bare, `[LEVEL]` or `LEVEL:`), `chunk` and ` - ` separators.
_TIMESTAMP = re.compile(
    rf"^\[?(?P<stamp>{_STAMP})\]?"
    rf"(?:\s+-\s+[\w.\-]+\s+-\s+{_LEVELS}\s+-(?=\s)"
    rf"|(?:\s+(?:-(?=\s)|[<>]|\[{_LEVELS}\]|{_LEVELS}\b:?|chunk\b:?))*)\s?")
# logging.basicConfig's default: `%(levelname)s:%(name)s:%(message)s`, no time.
_BASIC = re.compile(rf"^{_LEVELS}:[^\s:]*:")
_LEVEL = re.compile(rf"\b{_LEVELS}\b")
# A message that is stream data: a JSON object (keys in double quotes, so Python's dict repr is not one), [DONE].
_PAYLOAD = re.compile(r'\{\s*["}]|\[DONE\]\s*$')
# A short label before the data: a logger name ("app:", "myapp.llm -"), a word or two ("chunk:",
# "received delta:"); at most _LABELS of them, so a sentence that ends in JSON is not read as data.
_LABEL = re.compile(r"[A-Za-z_][\w.\- ]{0,40}?(?::|\s-)\s*")
_LABELS = 2
_SSE_FIELD = re.compile(r"(?:data|event|id|retry)(?::|$)")
# `event: {...}`: a logged event object under the label "event", not an SSE event line (whose name is no JSON).
_LABELLED_OBJECT = re.compile(r'(?:event|id|retry):\s*\{\s*["}]')


def is_log_line(line: str) -> bool:
    """Whether a line starts the way a log line does (a timestamp, or Python logging's default prefix)."""
    return bool(_TIMESTAMP.match(line) or _BASIC.match(line))


def from_log(data: bytes) -> Capture:
    """Log lines: strip each prefix, keep its timestamp as the line's arrival time.

    A logged JSON object or `[DONE]` becomes an SSE `data:` frame, a logged
    `data:` line ends its event (logs drop the blank line that ended it), a
    logged `event:`/`id:`/`retry:` line is kept as it is; every other line is
    skipped and counted.
    """
    reader = LogReader()
    body = bytearray()
    reads: list[tuple[int, float]] = []
    lines = data.decode("utf-8", "replace").splitlines()
    spans = line_spans(data)
    segments: list[Segment] = []
    for number, raw_line in enumerate(lines, 1):
        frame, seconds = reader.line(raw_line, number)
        if seconds is not None:
            reads.append((len(body), seconds))
        if frame and len(spans) == len(lines):
            segments.append((len(body), len(body) + len(frame), *spans[number - 1]))
        body += frame
    return Capture(bytes(body), "log", reads=tuple(reads) or None, notes=tuple(reader.notes()),
                   segments=tuple(segments), handed_out=reader.objects_only)


# What str.splitlines() breaks a line at, as UTF-8 bytes (never inside a character, even next to bad bytes).
_LINE_BREAK = re.compile(rb"\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e]|\xc2\x85|\xe2\x80[\xa8\xa9]")


def line_spans(data: bytes) -> list[tuple[int, int]]:
    """(start, end) in `data` of each line `data.decode("utf-8", "replace").splitlines()` gives, breaks left out."""
    spans, start = [], 0
    for match in _LINE_BREAK.finditer(data):
        spans.append((start, match.start()))
        start = match.end()
    if start < len(data):
        spans.append((start, len(data)))
    return spans


class LogReader:
    """A log read line by line: `from_log` reads a whole one, `tail` each line as it comes."""

    def __init__(self) -> None:
        self.clock = Clock()
        self._lines = 0
        self._data_lines = 0
        self._stamps = 0
        self._wrapped = 0
        self._done = 0
        self._skipped: list[int] = []
        self._levels: Counter[str] = Counter()

    def line(self, raw_line: str, number: int) -> tuple[bytes, float | None]:
        """The SSE bytes line `number` stands for (b"" for a line holding no stream data) and its time."""
        match = _TIMESTAMP.match(raw_line) or _BASIC.match(raw_line)
        prefix = raw_line[: match.end()] if match else ""
        message = raw_line[len(prefix):].strip()
        frame = _frame(message)
        self._lines += bool(raw_line.strip())
        if frame is None:
            if message:
                self._skipped.append(number)
                level = _LEVEL.search(prefix)
                self._levels[level.group() if level else "other"] += 1
            return b"", None
        stamp = match.groupdict().get("stamp") if match else None
        seconds = self.clock.read(stamp, number) if stamp else None
        self._data_lines += 1
        self._stamps += seconds is not None
        self._wrapped += not frame.startswith(message.encode())
        self._done += frame == b"data: [DONE]\n\n"
        return frame, seconds

    @property
    def objects_only(self) -> bool:
        """Every line of stream data was a logged object (an SDK's chunk or event, never `data:` lines or
        `[DONE]`): an app logs what its SDK hands out, and an SDK hands out no end marker."""
        return self._data_lines > 0 and self._wrapped == self._data_lines and not self._done

    def notes(self) -> list[Note]:
        stamps, skipped = self._stamps, self._skipped
        if stamps:
            described = f"{stamps} timestamp{'s' if stamps > 1 else ''} kept as arrival times"
        elif self._data_lines:
            described = "its lines of stream data have no timestamps, so there are no arrival times"
        else:
            described = (f"none of its {self._lines:,} lines held stream data (a JSON object, [DONE] or an SSE "
                         "line, alone or after a label such as `app: chunk:`)")
        notes = [Note("input-log", f"log: {described}"
                      + (f"; {self._wrapped} logged chunks turned into SSE data frames" if self._wrapped else "")),
                 *self.clock.notes()]
        if skipped:
            lines = ", ".join(str(line) for line in skipped[:8]) + (", …" if len(skipped) > 8 else "")
            by_level = ", ".join(f"{level} {count}" for level, count in self._levels.most_common())
            notes.append(Note("log-lines-skipped", f"{len(skipped)} log line{'s' if len(skipped) > 1 else ''} "
                                                   f"holding no stream data {'were' if len(skipped) > 1 else 'was'} "
                                                   f"skipped (line {lines}; by level: {by_level})"))
        return notes


def _frame(message: str) -> bytes | None:
    """The SSE bytes a logged message stands for, or None when it holds no stream data."""
    for labels in range(_LABELS + 1):
        if _SSE_FIELD.match(message) and (labels == 0 or message.startswith("data:")) \
                and not _LABELLED_OBJECT.match(message):
            # Logs print one event per line and drop the blank line that ended it.
            return message.encode() + (b"\n\n" if message.startswith("data") else b"\n")
        if _PAYLOAD.match(message):
            return _event_line(message) + b"data: " + message.encode() + b"\n\n"
        label = _LABEL.match(message)
        if label is None:
            return None
        message = message[label.end():]
    return None


def _event_line(payload: str) -> bytes:
    """`event: TYPE` for a logged event object that names its type (an Anthropic or Responses event: an
    app logs the SDK's event, which has no SSE `event:` line to log), as the stream sent it; else b""."""
    if '"type"' not in payload:
        return b""
    try:
        value = json.loads(payload)
    except (ValueError, RecursionError):
        return b""
    kind = value.get("type") if isinstance(value, dict) else None
    if not isinstance(kind, str) or not kind.strip() or not kind.isprintable():
        return b""
    return b"event: " + kind.encode("utf-8", "surrogatepass") + b"\n"


_DAY = 86400.0


class Clock:
    """Timestamps read in the order of their lines, kept from going backwards.

    A time of day that falls back by more than half a day has passed midnight:
    it and the later ones count as the next day. A clock that goes back
    otherwise (another clock, a dated stamp earlier than the one before) is
    wrong: the line is taken to arrive with the line before it, so no gap or
    duration comes out negative, and the first such line is reported.
    """

    def __init__(self) -> None:
        self._last: float | None = None
        self._days = 0
        self._midnights: list[int] = []
        self._backwards: list[tuple[int, str, str]] = []
        self._last_stamp = ""

    def read(self, stamp: str, line: int) -> float | None:
        seconds = _seconds(stamp)
        if seconds is None:
            return None
        dated = _dated(stamp)
        if not dated:
            seconds += self._days * _DAY
        if self._last is not None and not dated and self._last - seconds > _DAY / 2:
            self._days += 1
            seconds += _DAY
            self._midnights.append(line)
        if self._last is not None and seconds < self._last:
            self._backwards.append((line, self._last_stamp, stamp))
            seconds = self._last
        self._last, self._last_stamp = seconds, stamp
        return seconds

    def notes(self) -> list[Note]:
        notes = []
        if self._midnights:
            lines = ", ".join(str(line) for line in self._midnights[:5])
            notes.append(Note("clock-rollover", f"the clock passed midnight at line {lines}: the times from there "
                                                "on are taken as the next day's"))
        if self._backwards:
            line, before, after = self._backwards[0]
            more = f" ({len(self._backwards)} times in all)" if len(self._backwards) > 1 else ""
            notes.append(Note("clock-backwards", f"the clock went backwards at line {line} ({before} → {after}){more}: "
                                                 "such a line is taken to arrive with the line before it, so the "
                                                 "gaps there are 0", Severity.WARNING))
        return notes


def _dated(stamp: str) -> bool:
    return "T" in stamp or "-" in stamp[:5]


def _seconds(stamp: str) -> float | None:
    stamp = stamp.replace(",", ".")
    try:
        if _dated(stamp):
            return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
        hours, minutes, seconds = stamp.split(":")
        return int(hours) * 3600 + int(minutes) * 60 + float(seconds)
    except (ValueError, OverflowError):
        return None
