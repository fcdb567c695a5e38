"""The lanes of a capture (the replies it interleaves), as the Result lists them, and the finding
for a lane asked for that the capture does not hold.

Lanes come from two places: the framer (the `websocket` transport's `stream_id`s) and the dialect
(a Realtime session's responses, an agent protocol's agents). One id names one lane wherever it
comes from; the user's `lane=` is given to both, and each follows it if it is one of its own.
"""

from __future__ import annotations

from ..dialects import Dialect
from ..findings import Report, Severity
from ..framing import Framer
from ..framing.websocket import WebSocketParser
from ..result import Lane

__all__ = ["checked_lane", "lanes_of", "report_missing_lane"]

#: How many lanes a `lane-not-found` finding names.
_NAMED = 10


def checked_lane(lane: str | None) -> str | None:
    """`lane`, when it can be a lane's id (None: the default lane); raises ValueError otherwise."""
    if lane is not None and (type(lane) is not str or not lane):
        raise ValueError(f"lane must be a lane's id (a non-empty str), got {lane!r}")
    return lane


def lanes_of(dialect: Dialect, framer: Framer | None) -> tuple[Lane, ...]:
    """Every lane the framer and the dialect saw, in the order of their first frames."""
    lanes = [Lane(lane, kind, first, lane == dialect.followed_lane) for lane, (kind, first) in dialect.lanes.items()]
    if isinstance(framer, WebSocketParser):
        lanes.extend(Lane(lane, "stream_id", first, lane == framer.followed_lane)
                     for lane, first in framer.lanes.items())
    return tuple(sorted(lanes, key=lambda lane: lane.first_frame))


def report_missing_lane(report: Report, asked: str, lanes: tuple[Lane, ...]) -> None:
    """The lane asked for is none of the capture's: nothing of any lane was folded."""
    if any(lane.id == asked for lane in lanes):
        return
    if lanes:
        named = ", ".join(f"{lane.id} ({lane.kind}, from frame {lane.first_frame})" for lane in lanes[:_NAMED])
        more = f" and {len(lanes) - _NAMED} more" if len(lanes) > _NAMED else ""
        held = f"its lanes are {named}{more}"
    else:
        held = "it holds one reply, with no lanes"
    report.diagnostic("lane-not-found", None, f"no lane {asked!r} in this capture ({held}): the reply folded is "
                      "what no lane owns, if anything", severity=Severity.WARNING, lanes=[lane.id for lane in lanes])
