"""Timing, wherever arrival times exist (live tail, curl --trace-time, timestamped
logs, the capture store): when each frame arrived, time to first byte and to
first text, gaps between frames, stalls, throughput, and a compact chart of
the gaps over the stream.

Two times are named apart and measured the same way wherever they appear:

- TTFB, time to first byte: from the request being sent to the arrival of the
  first byte of the response body;
- TTFT, time to first token (first text): from the request being sent to the
  arrival of the first frame that added reply text (content, reasoning, a
  refusal or tool-call arguments).

Both need the request's time. An input that does not carry it (a timestamped
log, WebSocket message times) has neither: its times count from its first
byte, and what it tells is `first_text`, the time from the first byte to the
first text (TTFT - TTFB when both are known). `origin` says which clock the
arrivals and the duration are on.

A frame has arrived when its last byte has; a read at (offset, time) delivers
the bytes from its offset to the next read's. Pure computation: no clocks.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate, pairwise
from statistics import median

from ..findings import Diagnostic, Severity
from ..result import Result

__all__ = ["DEFAULT_STALL", "ORIGINS", "Timing", "analyse", "chart_top", "sparkline"]

DEFAULT_STALL = 2.0
_CHART_FLOOR = 1.0
_BARS = "▁▂▃▄▅▆▇█"


#: What the times count from: the request being sent, or (its time unknown) the first byte received.
ORIGINS = ("request", "first byte")


@dataclass(frozen=True, slots=True)
class Timing:
    #: Seconds from `origin` to each frame's arrival.
    arrivals: tuple[float, ...]
    #: Time to first text (TTFT): seconds from the request to the first frame that added content,
    #: reasoning, a refusal or tool-call arguments. None without text, or when the request's time is unknown.
    ttft: float | None
    gap_median: float | None
    gap_p95: float | None
    gap_max: float | None
    duration: float
    #: Characters of reply (content, reasoning, arguments) per second after the first token.
    chars_per_second: float | None
    tokens_per_second: float | None
    stalls: tuple[Diagnostic, ...]
    #: What `arrivals` and `duration` count from: "request" or "first byte" (`ORIGINS`).
    origin: str = "first byte"
    #: Time to first byte (TTFB): seconds from the request to the first byte of the body; None when
    #: the request's time is unknown.
    ttfb: float | None = None
    #: Seconds from the first byte to the first text (None without text): known whatever the origin.
    first_text: float | None = None

    def to_dict(self) -> dict[str, float | str | None]:
        return {"origin": self.origin, "ttfb": self.ttfb, "ttft": self.ttft, "first_text": self.first_text,
                "duration": self.duration, "gap_median": self.gap_median, "gap_p95": self.gap_p95,
                "gap_max": self.gap_max, "chars_per_second": self.chars_per_second,
                "tokens_per_second": self.tokens_per_second}

    def summary(self, origin: str | None = None) -> str:
        """One line: TTFB and TTFT (or, the request's time unknown, the first text after the first byte),
        the duration, the gaps and the throughput, and at the end which clock they are on (`origin`: how
        to say it, when a front knows better than "the request", say "tail's start")."""
        if self.origin == "request":
            parts = [f"TTFB {_seconds(self.ttfb)}", f"TTFT {_seconds(self.ttft)}"]
        else:
            parts = [f"first text {_seconds(self.first_text)} after the first byte" if self.first_text is not None
                     else "no text"]
        parts.append(f"duration {_seconds(self.duration)}")
        if self.gap_median is not None:
            parts.append(f"gaps median {_seconds(self.gap_median)}, p95 {_seconds(self.gap_p95)}, "
                         f"max {_seconds(self.gap_max)}")
        if self.tokens_per_second is not None:
            parts.append(f"{self.tokens_per_second:.1f} tokens/s")
        elif self.chars_per_second is not None:
            parts.append(f"{self.chars_per_second:.0f} chars/s")
        clock = origin or ("the request" if self.origin == "request" else
                           "the first byte; the input does not say when the request was sent")
        return " · ".join(parts) + f" (times from {clock})"


def analyse(result: Result, reads: tuple[tuple[int, float], ...], *, start: float | None = None,
            stall: float = DEFAULT_STALL) -> Timing:
    """Timing of `result`'s frames from the reads that delivered them (body offset, seconds). `start`:
    when the request was sent, on the reads' clock; None when it is unknown (times then count from the
    first read, and there is no TTFB or TTFT)."""
    if not reads:
        raise ValueError("analyse() needs at least one read with its time")
    offsets = [offset for offset, _ in reads]
    origin = reads[0][1] if start is None else start
    # No read comes before the start or before the read ahead of it: a clock that went back is held.
    times = list(accumulate((max(0.0, seconds - origin) for _, seconds in reads), max))
    arrivals = tuple(times[max(0, bisect_right(offsets, max(frame.end - 1, frame.offset)) - 1)]
                     for frame in result.frames)
    first_text = _first_text_frame(result)
    text_at = arrivals[first_text] if first_text is not None and first_text < len(arrivals) else None
    ttfb = times[0] if start is not None else None
    data_times = [arrivals[i] for i, kind in enumerate(result.frame_kinds) if kind.value != "comment"]
    gaps = sorted(b - a for a, b in pairwise(data_times))
    stalls = []
    previous: float | None = None
    for index, kind in enumerate(result.frame_kinds):
        if kind.value == "comment":
            continue
        if previous is not None and arrivals[index] - previous > stall:
            frame = result.frames[index]
            stalls.append(Diagnostic(
                "stall", Severity.WARNING,
                f"{arrivals[index] - previous:.2f} s passed before frame {index} arrived (threshold {stall:g} s): "
                "the server, a proxy or the network held the stream", index, frame.offset, frame.line,
                {"seconds": round(arrivals[index] - previous, 6)}))
        previous = arrivals[index]
    duration = arrivals[-1] if arrivals else 0.0
    generation = duration - text_at if text_at is not None else 0.0
    characters = sum(len(c.content) + len(c.reasoning or "") + sum(len(t.arguments) for t in c.tool_calls)
                     for c in result.choices)
    output_tokens = result.usage.output_tokens if result.usage is not None else None
    return Timing(
        arrivals=arrivals,
        ttft=text_at if start is not None else None,
        gap_median=median(gaps) if gaps else None,
        gap_p95=gaps[min(len(gaps) - 1, int(0.95 * len(gaps)))] if gaps else None,
        gap_max=gaps[-1] if gaps else None,
        duration=duration,
        chars_per_second=characters / generation if generation > 0 else None,
        tokens_per_second=_rate(output_tokens, generation) if isinstance(output_tokens, int) else None,
        stalls=tuple(stalls),
        origin="request" if start is not None else "first byte",
        ttfb=ttfb,
        first_text=max(0.0, text_at - times[0]) if text_at is not None else None,
    )


def sparkline(timing: Timing, width: int = 60) -> str:
    """The gaps between frames over the stream, one bar per bucket (the bucket's largest gap)."""
    times = timing.arrivals
    gaps = [b - a for a, b in pairwise(times)]
    if not gaps:
        return ""
    width = max(1, min(width, len(gaps)))
    buckets = [max(gaps[i * len(gaps) // width : max(i * len(gaps) // width + 1, (i + 1) * len(gaps) // width)])
               for i in range(width)]
    top = chart_top(timing)
    return "".join(_BARS[min(len(_BARS) - 1, int(max(0.0, gap) / top * (len(_BARS) - 1) + 0.5))] for gap in buckets)


def chart_top(timing: Timing) -> float:
    """The gap a full bar stands for: the longest gap, but at least a second, so a steady stream stays low."""
    return max(timing.gap_max or 0.0, _CHART_FLOOR)


def _rate(count: int, seconds: float) -> float | None:
    """`count` per second, or None: no time passed, or the count (the stream's own usage) is too large
    for a float (a hostile `output_tokens` of 400 digits)."""
    if seconds <= 0:
        return None
    try:
        return count / seconds
    except OverflowError:
        return None


def _first_text_frame(result: Result) -> int | None:
    """The frame that produced the reply's first character (text, reasoning or tool arguments)."""
    found = []
    for choice in result.choices:
        fields = ["content", "reasoning", "refusal", *(f"tool:{i}" for i in range(len(choice.tool_calls)))]
        for field in fields:
            frame = result.frame_producing_char(0, choice=choice.index, field=field)
            if frame is not None:
                found.append(frame.index)
    return min(found) if found else None


def _seconds(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"
