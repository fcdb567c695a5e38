"""From a recorded capture and the faults to the response served: the status, the headers, and
the writes, each with the delay before it. Pure and deterministic for a seed: no I/O, no clock.

The bytes come from `edits` (the faults that change them, or the vendor's error body for
`http-error`). The writes follow the capture's recorded reads (their boundaries carried over to
the edited bytes), or one write per frame when the capture has no reads; `chunk` replaces them,
`split-utf8` and `stall` add boundaries. Each byte keeps the arrival time of the clean byte it came
from (an added byte: the one before it), and a write is sent once its last byte had arrived: with
`--speed original` the delay before a write is the recorded time between it and the write before
(the first: from the request's start), divided by FACTOR for a number, none for `max`. `slow`
and `stall` add their seconds on top, at any speed.

`joined` is how the server sends a plan: the writes nothing separates (no delay, no boundary a
fault put there) go out as one, which is what serves `--speed max` at the speed of the disk.
"""

from __future__ import annotations

import bisect
import itertools
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from .._json import dumps_strict
from ..framing import Frame
from .edits import Unit, edit
from .faults import Fault, FaultError, quirks_of

__all__ = ["Plan", "Recording", "Write", "joined", "plan_response", "served_headers"]

#: chunk:random writes are 1 to this many bytes.
RANDOM_CHUNK_MOST = 64
#: The most bytes `joined` puts in one send: enough that a send's fixed cost (an ASGI message, an HTTP
#: chunk) vanishes, few enough that a send waits for a slow client's socket, and notices one that left, often.
JOINED_MOST = 256 * 1024
_MULTIBYTE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")
#: Response headers of the capture not served: the body is served decoded, in the server's own framing.
_NOT_SERVED = frozenset({"content-length", "transfer-encoding", "content-encoding", "connection", "keep-alive",
                         "date", "server", "trailer", "upgrade", "te"})
_CONTENT_TYPES = {"sse": "text/event-stream", "ndjson": "application/x-ndjson", "json-array": "application/json",
                  "aws-eventstream": "application/vnd.amazon.eventstream", "websocket": "application/jsonl"}


@dataclass(frozen=True, slots=True)
class Recording:
    """A capture ready to serve: its decoded body, frames and reads, and what the fold found."""

    name: str
    body: bytes
    transport: str
    dialect: str
    frames: tuple[Frame, ...]
    #: (body offset, seconds) of each read, when the input had arrival times.
    reads: tuple[tuple[int, float], ...] | None = None
    #: When the request was sent, on the clock of `reads`.
    started: float | None = None
    status: int | None = None
    response_headers: tuple[tuple[str, str], ...] = ()
    #: The path of the recorded request's URL ("/v1/chat/completions"), when the input says.
    path: str | None = None


@dataclass(frozen=True, slots=True)
class Write:
    data: bytes
    #: Seconds to wait before sending it.
    delay: float
    #: A fault (chunk, split-utf8, stall) splits the bytes where this write starts: it is never sent
    #: together with the write before it, even when no time separates them.
    fault_split: bool = False


@dataclass(frozen=True, slots=True)
class Plan:
    """The response to serve."""

    status: int
    headers: tuple[tuple[str, str], ...]
    writes: tuple[Write, ...]
    #: Close the connection after the last write, without ending the body (`cut`).
    cut: bool = False

    @property
    def body(self) -> bytes:
        return b"".join(write.data for write in self.writes)


def served_headers(recording: Recording, content_type: str | None = None) -> tuple[tuple[str, str], ...]:
    """The capture's response headers that still hold for the decoded body served, Content-Type
    first (the transport's when the capture had none)."""
    kept = [(name, value) for name, value in recording.response_headers
            if name.lower() not in _NOT_SERVED and name.lower() != "content-type"]
    recorded = next((value for name, value in reversed(recording.response_headers)
                     if name.lower() == "content-type"), None)
    kind = content_type or recorded or _CONTENT_TYPES.get(recording.transport, "application/octet-stream")
    return (("content-type", kind), *kept)


class _Clock:
    """The arrival time of each byte of the edited body, from the units' clean ranges and the reads."""

    def __init__(self, units: Sequence[Unit], reads: Sequence[tuple[int, float]] | None) -> None:
        self.starts: list[int] = []
        position = 0
        for unit in units:
            self.starts.append(position)
            position += len(unit.data)
        self.units = units
        # The clean body's units do not overlap (a duplicate shares its original's range): the one that
        # holds a clean offset is the one that starts last before it.
        self.by_clean_start: dict[int, list[int]] = {}
        for index, unit in enumerate(units):
            if unit.end > unit.start:
                self.by_clean_start.setdefault(unit.start, []).append(index)
        self.clean_starts = sorted(self.by_clean_start)
        self.read_offsets = [offset for offset, _ in reads] if reads else []
        self.read_times = [at for _, at in reads] if reads else []

    def clean_offset(self, offset: int) -> int:
        """The clean body's offset the served byte at `offset` came from (proportionally, in an edited unit)."""
        index = bisect.bisect_right(self.starts, offset) - 1
        unit, within = self.units[index], offset - self.starts[index]
        if unit.end <= unit.start:
            return max(unit.start - 1, 0)
        return unit.start + within * (unit.end - unit.start) // max(len(unit.data), 1)

    def time(self, offset: int) -> float | None:
        if not self.read_offsets:
            return None
        index = bisect.bisect_right(self.read_offsets, self.clean_offset(offset)) - 1
        return self.read_times[max(index, 0)]

    def carried(self, clean: int) -> list[int]:
        """Where a read boundary at clean offset `clean` falls in the served body (none, one, or more)."""
        at = bisect.bisect_right(self.clean_starts, clean) - 1
        if at < 0:
            return []
        found = []
        for index in self.by_clean_start[self.clean_starts[at]]:
            unit = self.units[index]
            if clean < unit.end:
                found.append(self.starts[index] + (clean - unit.start) * len(unit.data) // (unit.end - unit.start))
        return found

    def frame_start(self, frame: int) -> int | None:
        return next((start for start, unit in zip(self.starts, self.units) if unit.frame == frame), None)


def _boundaries(body: bytes, clock: _Clock, faults: Sequence[Fault], rng: random.Random) -> tuple[set[int], set[int]]:
    """Where writes start inside the body: (the capture's own boundaries, the faults' boundaries)."""
    chunk = next((fault for fault in faults if fault.kind == "chunk"), None)
    own: set[int] = set()
    cuts: set[int] = set()
    if chunk is not None and chunk.random:
        position = 0
        while position < len(body):
            cuts.add(position)
            position += rng.randint(1, RANDOM_CHUNK_MOST)
    elif chunk is not None:
        cuts.update(range(0, len(body), chunk.number or 1))
    elif clock.read_offsets:
        for clean in clock.read_offsets:
            own.update(clock.carried(clean))
        own.update(start for start, unit in zip(clock.starts, clock.units) if unit.end <= unit.start)
    else:
        own.update(start for start, unit in zip(clock.starts, clock.units) if unit.framed)
    if any(fault.kind == "split-utf8" for fault in faults):
        cuts.update(found.start() + 1 for found in _MULTIBYTE.finditer(body))
    for fault in faults:
        if fault.kind == "stall" and fault.number is not None:
            start = clock.frame_start(fault.number)
            if start is not None:
                cuts.add(start)
    return {cut for cut in own if 0 < cut < len(body)}, {cut for cut in cuts if 0 < cut < len(body)}


def _speed(speed: str | float) -> float | None:
    """The divisor of recorded delays, or None for none at all (`max`)."""
    if speed == "max":
        return None
    if speed == "original":
        return 1.0
    if isinstance(speed, str) or not speed > 0:
        raise ValueError(f"speed must be 'original', 'max' or a positive number, got {speed!r}")
    return float(speed)


def plan_response(recording: Recording, faults: Sequence[Fault] = (), *, speed: str | float = "original",
                  seed: int | str = 0) -> Plan:
    """The response that serves `recording` with `faults`. The same arguments give the same plan.
    Raises `FaultError` when a fault cannot apply to this capture, ValueError for a bad speed."""
    divisor = _speed(speed)
    rng = random.Random(f"streamfold-replay/{seed}")
    error = next((fault for fault in faults if fault.kind == "http-error"), None)
    if error is not None:
        quirks = quirks_of(recording.dialect)
        value = None if quirks is None else quirks.http_error(error.number or 500)
        if value is None:
            raise FaultError(f"--fault {error.spec}: streamfold does not know the {recording.dialect} dialect's "
                             "HTTP error body")
        data = dumps_strict(value, indent=2).encode("utf-8") + b"\n"
        units, cut, reads = [Unit(data, 0, 0)], False, None
        status, headers = error.number or 500, served_headers(recording, "application/json")
    else:
        units, cut = edit(recording.body, recording.frames, faults, transport=recording.transport,
                          dialect=recording.dialect)
        # A WebSocket's messages are served over HTTP as their JSONL: its 101 upgrade is no status to send.
        status = 200 if recording.transport == "websocket" else recording.status or 200
        reads, headers = recording.reads, served_headers(recording)
    body = b"".join(unit.data for unit in units)
    clock = _Clock(units, reads)
    own, split = _boundaries(body, clock, faults, rng)
    edges = [0, *sorted(own | split), len(body)]
    slow = sum((fault.number or 0) / 1000 for fault in faults if fault.kind == "slow")
    stalls: dict[int, float] = {}
    for fault in faults:
        start = clock.frame_start(fault.number) if fault.kind == "stall" and fault.number is not None else None
        if start is not None:
            stalls[start] = stalls.get(start, 0.0) + (fault.seconds or 0.0)
    writes: list[Write] = []
    before = recording.started if recording.started is not None else clock.time(0)
    for start, end in itertools.pairwise(edges):
        if end <= start:
            continue
        at = clock.time(end - 1)
        recorded = 0.0
        if divisor is not None and at is not None and before is not None:
            recorded = max(at - before, 0.0) / divisor
        if at is not None:
            before = at if before is None else max(before, at)
        writes.append(Write(body[start:end], recorded + slow + stalls.get(start, 0.0), start in split))
    return Plan(status, headers, tuple(writes), cut)


def joined(writes: Sequence[Write], most: int = JOINED_MOST) -> tuple[Write, ...]:
    """The writes as the server sends them: a write that nothing separates from the one before (no
    delay before it, no fault's boundary where it starts) joins it, up to `most` bytes a send. Every
    delay, and so every byte's time, and every boundary a fault put stay as the plan has them."""
    sends: list[Write] = []
    group: list[Write] = []
    size = 0
    for write in writes:
        if group and (write.delay > 0 or write.fault_split or size + len(write.data) > most):
            sends.append(_one_send(group))
            group, size = [], 0
        group.append(write)
        size += len(write.data)
    if group:
        sends.append(_one_send(group))
    return tuple(sends)


def _one_send(group: Sequence[Write]) -> Write:
    first = group[0]
    return first if len(group) == 1 else Write(b"".join(write.data for write in group), first.delay, first.fault_split)
