"""The faults that change the bytes served: the capture's body as a list of `Unit`s (each frame,
and the bytes between frames, such as a JSON array's commas), edited fault by fault.

Every frame number in a fault is the clean capture's (as `streamfold frames` numbers them),
whatever other faults did first. The order is fixed: frames replaced or moved (error-event, drop,
duplicate, reorder), payloads rewritten (corrupt, no-terminal, cumulative-args), lines edited
(strip-events, fields, nospace, glue), keep-alives added, line ends rewritten (crlf, cr), the BOM,
and the cut last. Each unit keeps the range of the clean body it stands for, so that the plan
can give its bytes the arrival times of the bytes they came from. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .._json import dumps_strict
from ..decoding import PayloadKind, decode_data, decode_frame
from ..dialects._replay import DROP, Rewrite
from ..framing import Frame
from .faults import Fault, FaultError, quirks_of

__all__ = ["Unit", "edit", "units_of"]

BOM = b"\xef\xbb\xbf"
KEEPALIVE = b": keep-alive"
_EOL = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class Unit:
    """Bytes to serve: frame `frame` of the clean capture (None: bytes between frames, or added
    ones), standing for `body[start:end]` of the clean body (start == end: added). `framed`: a
    frame on the wire, the capture's or one a fault added (an error event, a keep-alive)."""

    data: bytes
    start: int
    end: int
    frame: int | None = None
    framed: bool = False


def units_of(body: bytes, frames: Sequence[Frame]) -> list[Unit]:
    """The clean body as units: each frame, and the bytes before, between and after them."""
    units: list[Unit] = []
    position = 0
    for frame in frames:
        if frame.offset > position:
            units.append(Unit(body[position : frame.offset], position, frame.offset))
        units.append(Unit(body[frame.offset : frame.end], frame.offset, frame.end, frame.index, framed=True))
        position = max(position, frame.end)
    if position < len(body):
        units.append(Unit(body[position:], position, len(body)))
    return units


def _lines(raw: bytes) -> list[tuple[bytes, bytes]]:
    """(line, its end) pairs; the last end is b"" when the bytes do not end a line."""
    pairs: list[tuple[bytes, bytes]] = []
    position = 0
    for found in _EOL.finditer(raw):
        pairs.append((raw[position : found.start()], found.group()))
        position = found.end()
    if position < len(raw):
        pairs.append((raw[position:], b""))
    return pairs


def _text_lines(text: str) -> list[tuple[str, str]]:
    return [(line.decode("utf-8", "replace"), end.decode("ascii")) for line, end in _lines(text.encode("utf-8"))]


def _joined(pairs: Sequence[tuple[bytes, bytes]]) -> bytes:
    return b"".join(line + end for line, end in pairs)


def _eol(raw: bytes) -> bytes:
    found = _EOL.search(raw)
    return found.group() if found else b"\n"


def _json(value: Any) -> str:
    return dumps_strict(value, separators=(",", ":"))


class _Editor:
    def __init__(self, body: bytes, frames: Sequence[Frame], transport: str, dialect: str) -> None:
        self.units = units_of(body, frames)
        self.frames = frames
        self.transport = transport
        self.dialect = dialect

    def at(self, frame: int) -> int:
        """The position in `units` of (the first copy of) frame `frame`; -1 once it is gone."""
        return next((i for i, unit in enumerate(self.units) if unit.frame == frame), -1)

    def separated(self) -> bool:
        """A JSON array: elements need the commas between them kept right."""
        return self.transport == "json-array"

    def frame_data(self, unit: Unit, data: str | None) -> bytes:
        """A frame of this transport carrying `data` instead, framed like `unit` was."""
        if self.transport == "sse":
            pairs = _lines(unit.data)
            eol = _eol(unit.data)
            ended = bool(pairs) and pairs[-1][0] == b""
            others = [pair for pair in (pairs[:-1] if ended else pairs)
                      if not (pair[0].startswith(b"data:") or pair[0] == b"data")]
            fresh = [] if data is None else [(b"data: " + line.encode("utf-8"), eol) for line in data.split("\n")]
            return _joined([*others, *fresh, *(pairs[-1:] if ended else [])])
        ending = unit.data[len(unit.data.rstrip(b"\r\n")):]
        return ("" if data is None else data).encode("utf-8") + ending

    def replace_frame(self, position: int, data: str) -> None:
        unit = self.units[position]
        self.units[position] = replace(unit, data=self.frame_data(unit, data))

    # -- frames replaced or moved ------------------------------------------------------

    def error_event(self, frame: int) -> None:
        quirks = quirks_of(self.dialect)
        previous = decode_frame(self.frames[frame - 1]) if frame else None
        error = quirks.error_frame(previous.value if previous is not None else None) if quirks else None
        if error is None:
            raise FaultError(f"--fault error-event: the {self.dialect} dialect has no in-stream error shape")
        position = self.at(frame)
        last = max(i for i, unit in enumerate(self.units) if unit.frame is not None)
        unit = self.units[position]
        template = unit
        if self.transport == "sse":  # the vendor's event name, on a fresh frame
            eol = _eol(unit.data)
            head = b"" if error.event is None else b"event: " + error.event.encode("utf-8") + eol
            template = replace(unit, data=head + b"data: {}" + eol + eol)
        text = error.text if error.text is not None else _json(error.payload)
        errored = replace(unit, data=self.frame_data(template, text), end=unit.start, frame=None, framed=True)
        self.units[position : last + 1] = [errored]

    def drop(self, frame: int) -> None:
        position = self.at(frame)
        if position < 0:
            return
        start, stop = position, position + 1
        if self.separated():  # the comma before it (or, for the first element, after it) goes too
            if position > 0 and self.units[position - 1].frame is None and any(
                    unit.frame is not None for unit in self.units[: position - 1]):
                start -= 1
            elif position + 1 < len(self.units) and any(unit.frame is not None for unit in self.units[stop:]):
                stop += 1
        del self.units[start:stop]

    def duplicate(self, frame: int) -> None:
        position = self.at(frame)
        if position < 0:
            return
        unit = self.units[position]
        copies = [replace(unit, start=unit.end)]
        if self.separated():
            copies.insert(0, Unit(b",", unit.end, unit.end))
        self.units[position + 1 : position + 1] = copies

    def reorder(self, first: int, second: int) -> None:
        a, b = self.at(first), self.at(second)
        if a >= 0 and b >= 0:
            self.units[a], self.units[b] = self.units[b], self.units[a]

    # -- payloads rewritten ------------------------------------------------------------

    def data_of(self, unit: Unit) -> str | None:
        """The data a frame unit carries as it is now (an earlier fault may have rewritten it)."""
        text = unit.data.decode("utf-8", "replace")
        if self.transport != "sse":
            return text.strip() if self.transport == "json-array" else text.rstrip("\r\n")
        values = [line[5:].removeprefix(" ") for line, _ in _text_lines(text) if line.startswith("data:")]
        return "\n".join(values) if values else None

    def payload(self, unit: Unit) -> tuple[str | None, str | None, Any, bool]:
        """(event, data, JSON value, decoded) of a frame unit."""
        assert unit.frame is not None
        data = self.data_of(unit)
        decoded = decode_data(data) if data is not None else None
        return (self.frames[unit.frame].event, data, None if decoded is None else decoded.value,
                decoded is not None and decoded.kind is PayloadKind.JSON)

    def corrupt(self, frame: int) -> None:
        position = self.at(frame)
        if position < 0:
            return
        text = (self.data_of(self.units[position]) or "").rstrip()
        broken = text[:-1] if text else "{"
        if self.transport == "json-array":
            self.units[position] = replace(self.units[position], data=broken.encode("utf-8"))
        else:
            self.replace_frame(position, broken)

    def no_terminal(self) -> None:
        quirks = quirks_of(self.dialect)
        assert quirks is not None
        kept: list[Unit] = []
        for unit in self.units:
            if unit.frame is None:
                kept.append(unit)
                continue
            event, data, value, _ = self.payload(unit)
            verdict = quirks.end_of_stream(event, data, value)
            if verdict == DROP:
                if self.separated() and kept and kept[-1].frame is None and len(kept) > 1:
                    kept.pop()
                continue
            if isinstance(verdict, Rewrite):
                unit = replace(unit, data=self._rewritten(unit, verdict.payload))
            kept.append(unit)
        self.units = kept

    def _rewritten(self, unit: Unit, value: Any) -> bytes:
        text = value if type(value) is str else _json(value)  # a str: a line format's text, as it is
        if self.transport == "json-array":
            return text.encode("utf-8")
        return self.frame_data(unit, text)

    def cumulative_args(self) -> None:
        quirks = quirks_of(self.dialect)
        rewrite = quirks.cumulative_arguments() if quirks is not None else None
        assert rewrite is not None
        for position, unit in enumerate(self.units):
            if unit.frame is None:
                continue
            event, _, value, decoded = self.payload(unit)
            changed = rewrite(event, value) if decoded else None
            if changed is not None:
                self.units[position] = replace(unit, data=self._rewritten(unit, changed))

    # -- lines -------------------------------------------------------------------------

    def lines(self, change: Callable[[list[tuple[bytes, bytes]], Unit], list[tuple[bytes, bytes]]], *,
              frames_only: bool = True) -> None:
        """Apply `change(pairs, unit)` -> pairs to the lines of every frame (every unit, with `frames_only` False)."""
        for position, unit in enumerate(self.units):
            if unit.framed or not frames_only:
                self.units[position] = replace(unit, data=_joined(change(_lines(unit.data), unit)))

    def strip_events(self) -> None:
        self.lines(lambda pairs, unit: [pair for pair in pairs if not pair[0].startswith(b"event:")])

    def fields(self) -> None:
        first = next((unit.frame for unit in self.units if unit.frame is not None), None)

        def add(pairs: list[tuple[bytes, bytes]], unit: Unit) -> list[tuple[bytes, bytes]]:
            if unit.frame is None or not any(line.startswith(b"data") for line, _ in pairs):
                return pairs  # the capture's frames with data only: an added error frame has no number
            eol = _eol(unit.data)
            extra = [(f"id: {unit.frame}".encode("ascii"), eol)]
            if unit.frame == first:
                extra.append((b"retry: 3000", eol))
            return [*extra, *pairs]

        self.lines(add)

    def nospace(self) -> None:
        # Only where the value does not begin with a space itself: SSE drops one space, so
        # `data:  x` without its first space would change the value.
        field = re.compile(rb"^(data|event|id|retry): (?! )")
        self.lines(lambda pairs, unit: [(field.sub(rb"\1:", line), end) for line, end in pairs])

    def glue(self, frame: int) -> None:
        position = self.at(frame)
        if position < 0:
            return
        unit = self.units[position]
        pairs = _lines(unit.data)
        if self.transport == "sse" and pairs and pairs[-1][0] == b"":
            pairs = pairs[:-1]  # the blank line that ends the frame
        elif pairs:
            pairs[-1] = (pairs[-1][0], b"")  # the newline that ends the NDJSON line
        self.units[position] = replace(unit, data=_joined(pairs))

    def keepalive(self, every: int) -> None:
        edited: list[Unit] = []
        seen = 0
        total = sum(1 for unit in self.units if unit.frame is not None)
        for unit in self.units:
            edited.append(unit)
            if unit.frame is not None:
                seen += 1
                if seen % every == 0 and seen < total:
                    eol = _eol(unit.data)
                    edited.append(Unit(KEEPALIVE + eol + eol, unit.end, unit.end, framed=True))
        self.units = edited

    def line_ends(self, eol: bytes) -> None:
        self.lines(lambda pairs, unit: [(line, eol if end else b"") for line, end in pairs], frames_only=False)

    def bom(self) -> None:
        if not (self.units and self.units[0].data.startswith(BOM)):
            self.units.insert(0, Unit(BOM, 0, 0))

    def cut(self, frame: int, at: int | None) -> None:
        position = self.at(frame)
        if position < 0:
            raise FaultError(f"--fault cut:{frame}: frame {frame} is no longer served (another fault removed it)")
        unit = self.units[position]
        size = len(unit.data)
        offset = size // 2 if at is None else at
        if offset >= size:
            raise FaultError(f"--fault cut:{frame}:{at}: frame {frame} is served as {size} byte(s), so BYTE must "
                             f"be below {size}")
        kept = self.units[:position]
        if offset:
            kept.append(replace(unit, data=unit.data[:offset], end=unit.start + offset))
        self.units = kept


def edit(body: bytes, frames: Sequence[Frame], faults: Sequence[Fault], *, transport: str,
         dialect: str) -> tuple[list[Unit], bool]:
    """The units to serve after the faults that change bytes, and whether the connection is then cut.
    Raises `FaultError` when a fault cannot apply to these bytes."""
    editor = _Editor(body, frames, transport, dialect)
    given = {fault.kind for fault in faults}

    def each(kind: str) -> list[Fault]:
        return [fault for fault in faults if fault.kind == kind]

    for fault in each("error-event")[:1]:
        editor.error_event(_number(fault))
    for fault in each("drop"):
        editor.drop(_number(fault))
    for fault in each("duplicate"):
        editor.duplicate(_number(fault))
    for fault in each("reorder"):
        editor.reorder(_number(fault), fault.second or 0)
    for kind, step in (("no-terminal", editor.no_terminal), ("cumulative-args", editor.cumulative_args)):
        if kind in given:
            step()
    for fault in each("corrupt"):
        editor.corrupt(_number(fault))
    for kind, step in (("strip-events", editor.strip_events), ("fields", editor.fields),
                       ("nospace", editor.nospace)):
        if kind in given:
            step()
    for fault in each("glue"):
        editor.glue(_number(fault))
    for fault in each("keepalive"):
        editor.keepalive(_number(fault))
    if given & {"crlf", "cr"}:
        editor.line_ends(b"\r\n" if "crlf" in given else b"\r")
    if "bom" in given:
        editor.bom()
    for fault in each("cut")[:1]:
        editor.cut(_number(fault), fault.second)
    return editor.units, "cut" in given


def _number(fault: Fault) -> int:
    assert fault.number is not None, fault
    return fault.number
