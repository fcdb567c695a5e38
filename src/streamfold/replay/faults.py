"""The fault vocabulary of `streamfold serve --fault SPEC`, as a closed set: each kind with its
parameters, whether a correct client's reply survives it (transparent) or changes (destructive),
the transports it is defined for, and one line on what a correct client must then build.

`parse_fault` turns a SPEC string into a `Fault` or raises `FaultError` with a sentence that
shows the kind's usage; `refusal` says why a fault cannot apply to one capture (a transport it
is not defined for, a frame the capture does not have, a vendor without the shape it needs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..dialects import spec_of
from ..dialects._replay import ReplayQuirks

__all__ = ["FAULTS", "TEXT_TRANSPORTS", "Fault", "FaultError", "FaultKind", "describe", "parse_fault", "quirks_of",
           "refusal"]

SSE = ("sse",)
TEXT_TRANSPORTS = ("sse", "ndjson", "json-array")
LINES = ("sse", "ndjson")
#: A `websocket` capture is served as its JSONL of messages (there is no WebSocket server): its frames are lines.
ANY = ("sse", "ndjson", "json-array", "aws-eventstream", "websocket")


class FaultError(ValueError):
    """A SPEC that is no fault, or a fault that cannot apply; the message is the sentence to show."""


@dataclass(frozen=True, slots=True)
class FaultKind:
    name: str
    #: The parameters, as the usage shows them ("N", "FRAME[:BYTE]", ...); "" for none.
    usage: str
    transparent: bool
    transports: tuple[str, ...]
    #: What a correct client builds from the stream served with this fault.
    client: str
    #: The SPECs a test runs a client over (`streamfold.testing.transparent_faults`): the kind with the
    #: parameters that stress a client most and still keep a test fast; () for the destructive kinds.
    examples: tuple[str, ...] = ()


FAULTS: dict[str, FaultKind] = {kind.name: kind for kind in (
    FaultKind("chunk", "N|random", True, ANY,
              "the same reply: writes of N bytes (1 included) or of random sizes (1-64, --seed) are reassembled",
              ("chunk:1", "chunk:random")),
    FaultKind("split-utf8", "", True, ANY,
              "the same reply: every multi-byte UTF-8 character is split across two writes and decoded whole",
              ("split-utf8",)),
    FaultKind("crlf", "", True, LINES, "the same reply: every line ends CRLF", ("crlf",)),
    FaultKind("cr", "", True, SSE, "the same reply: every line ends with a lone CR, which SSE allows", ("cr",)),
    FaultKind("nospace", "", True, SSE, "the same reply: `data:{...}` without the space after the colon",
              ("nospace",)),
    FaultKind("keepalive", "N", True, SSE, "the same reply: a `: keep-alive` comment after every N frames is skipped",
              ("keepalive:1",)),
    FaultKind("bom", "", True, SSE, "the same reply: the UTF-8 BOM before the first byte is dropped", ("bom",)),
    FaultKind("fields", "", True, SSE,
              "the same reply: `id:` lines on every frame and `retry:` on the first are not data", ("fields",)),
    FaultKind("stall", "FRAME:SECONDS", True, ANY,
              "the same reply, late: SECONDS of silence before frame FRAME (a client's read timeout may fire)",
              ("stall:1:0.05",)),
    FaultKind("slow", "MS", True, ANY, "the same reply, slowly: MS milliseconds more before every write",
              ("slow:1",)),
    FaultKind("cut", "FRAME[:BYTE]", False, ANY,
              "an incomplete reply: the connection closes BYTE bytes into frame FRAME (half of it by default) "
              "without the end of the chunked body; a client must raise or mark the reply incomplete, not "
              "treat the text so far as whole"),
    FaultKind("glue", "FRAME", False, LINES,
              "frame FRAME and the next arrive as one (the blank line or newline after FRAME lost): a strict "
              "client fails to parse it; streamfold reports glued documents and still reads both"),
    FaultKind("drop", "FRAME", False, ANY, "the reply without what frame FRAME carried"),
    FaultKind("duplicate", "FRAME", False, ANY, "frame FRAME twice: its text twice, unless the client de-duplicates"),
    FaultKind("corrupt", "FRAME", False, TEXT_TRANSPORTS,
              "frame FRAME's JSON loses its last byte: a client must skip or report it, not crash; its text is lost"),
    FaultKind("no-terminal", "", False, TEXT_TRANSPORTS,
              "the stream ends without the vendor's end sign ([DONE], message_stop, finishReason, done): the "
              "reply is incomplete"),
    FaultKind("strip-events", "", False, SSE,
              "no `event:` lines (a proxy strips them): a client that dispatches on the JSON type still builds "
              "the reply; one that needs the event names gets nothing"),
    FaultKind("http-error", "STATUS", False, ANY,
              "no stream: the HTTP STATUS (400-599) with the vendor's JSON error body; the client raises its "
              "API error"),
    FaultKind("error-event", "FRAME", False, TEXT_TRANSPORTS,
              "the vendor's in-stream error in place of frame FRAME and everything after it: the client raises "
              "(or reports) the error, with the text before it"),
    FaultKind("cumulative-args", "", False, TEXT_TRANSPORTS,
              "each tool-call argument fragment re-sent with everything before it: a client that appends "
              "fragments gets invalid JSON; streamfold recovers the value (cumulative-resend)"),
    FaultKind("reorder", "A,B", False, ANY, "frames A and B swapped: text out of order, or a delta before its start"),
)}


@dataclass(frozen=True, slots=True)
class Fault:
    """One fault as given (`spec`), with its parameters parsed."""

    kind: str
    spec: str
    #: FRAME / N / MS / STATUS / A, as it applies; None when the kind has none or it was left out.
    number: int | None = None
    #: BYTE (cut), B (reorder).
    second: int | None = None
    #: SECONDS (stall).
    seconds: float | None = None
    #: chunk:random.
    random: bool = False

    @property
    def transparent(self) -> bool:
        return FAULTS[self.kind].transparent

    def frames(self) -> tuple[int, ...]:
        """The capture's frame numbers this fault names (checked against each capture)."""
        if self.kind in ("cut", "glue", "drop", "duplicate", "corrupt", "error-event", "stall"):
            return (self.number,) if self.number is not None else ()
        if self.kind == "reorder":
            return tuple(n for n in (self.number, self.second) if n is not None)
        return ()


def describe(kind: FaultKind) -> str:
    """`cut:FRAME[:BYTE]`, the kind as its usage writes it."""
    return f"{kind.name}:{kind.usage}" if kind.usage else kind.name


def _count(text: str, spec: str, what: str, *, least: int = 0) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) < least:
        raise FaultError(f"--fault {spec!r}: {what} must be a whole number of at least {least}, got {text!r}")
    return int(text)


def parse_fault(spec: str) -> Fault:
    """The fault a `--fault` SPEC names. Raises `FaultError` with the kind's usage, or the list of kinds."""
    name, _, rest = spec.strip().partition(":")
    kind = FAULTS.get(name)
    if kind is None:
        known = ", ".join(describe(k) for k in FAULTS.values())
        raise FaultError(f"--fault {spec!r}: no such fault; the faults are {known}")
    usage = f"--fault {spec!r}: usage is {describe(kind)}"
    parts = rest.split(":") if rest else []
    if not kind.usage:
        if parts:
            raise FaultError(f"{usage} (it takes no parameter)")
        return Fault(name, spec)
    if name in ("chunk", "keepalive", "slow", "drop", "duplicate", "corrupt", "glue", "error-event", "http-error"):
        if len(parts) != 1:
            raise FaultError(usage)
        if name == "chunk" and parts[0] == "random":
            return Fault(name, spec, random=True)
        least = 1 if name in ("chunk", "keepalive") else 0
        number = _count(parts[0], spec, kind.usage, least=least)
        if name == "http-error" and not 400 <= number <= 599:
            raise FaultError(f"--fault {spec!r}: STATUS must be an HTTP error status, 400 to 599")
        return Fault(name, spec, number)
    if name == "cut":
        if not 1 <= len(parts) <= 2:
            raise FaultError(usage)
        return Fault(name, spec, _count(parts[0], spec, "FRAME"),
                     _count(parts[1], spec, "BYTE") if len(parts) == 2 else None)
    if name == "stall":
        if len(parts) != 2:
            raise FaultError(usage)
        try:
            seconds = float(parts[1])
        except ValueError:
            seconds = -1.0
        if not 0 <= seconds < 86400:
            raise FaultError(f"--fault {spec!r}: SECONDS must be a number of seconds, 0 or more")
        return Fault(name, spec, _count(parts[0], spec, "FRAME"), seconds=seconds)
    # reorder:A,B
    pair = parts[0].split(",") if len(parts) == 1 else []
    if len(pair) != 2:
        raise FaultError(usage)
    first, second = (_count(part, spec, "A and B") for part in pair)
    if first == second:
        raise FaultError(f"--fault {spec!r}: A and B must be two different frames")
    return Fault(name, spec, first, second)


def quirks_of(dialect: str) -> ReplayQuirks | None:
    """The dialect's replay hooks (its spec's `replay`), if it has them."""
    try:
        return spec_of(dialect).replay
    except KeyError:
        return None


def refusal(faults: Sequence[Fault], *, transport: str, dialect: str, frames: int) -> str | None:
    """Why these faults cannot apply to a capture of `transport`/`dialect` with `frames` frames, or None."""
    kinds = [fault.kind for fault in faults]
    for repeated in ("chunk", "http-error", "crlf", "cr"):
        if kinds.count(repeated) > 1:
            return f"--fault {repeated} is given twice; give it once"
    if "crlf" in kinds and "cr" in kinds:
        return "--fault crlf and --fault cr both rewrite the line ends; give one of them"
    if "http-error" in kinds and any(not fault.transparent and fault.kind != "http-error" for fault in faults):
        return "--fault http-error serves an error body instead of the stream: it combines with no other " \
               "destructive fault"
    quirks = quirks_of(dialect)
    for fault in faults:
        kind = FAULTS[fault.kind]
        if fault.kind == "http-error":
            if quirks is None or quirks.http_error(fault.number or 500) is None:
                return f"--fault {fault.spec}: streamfold does not know the {dialect} dialect's HTTP error body"
            continue
        if transport not in kind.transports:
            return (f"--fault {fault.spec}: defined for {', '.join(kind.transports)} streams only; this capture is "
                    f"{transport}")
        for frame in fault.frames():
            if frame >= frames:
                numbered = f", numbered 0 to {frames - 1}" if frames else ""
                return f"--fault {fault.spec}: the capture has {frames or 'no'} frame(s){numbered}"
        if fault.kind == "error-event" and (quirks is None or quirks.error_frame(None) is None):
            return f"--fault {fault.spec}: streamfold does not know the {dialect} dialect's in-stream error"
        if fault.kind == "no-terminal" and (quirks is None or not quirks.has_end_of_stream):
            reason = quirks.no_end_sign if quirks is not None and quirks.no_end_sign else \
                f"streamfold does not know how a {dialect} stream says it is over"
            return f"--fault {fault.spec}: {reason}"
        if fault.kind == "cumulative-args" and (quirks is None or quirks.cumulative_arguments() is None):
            reason = quirks.no_fragments if quirks is not None and quirks.no_fragments else \
                f"streamfold does not know the {dialect} dialect's tool-call argument fragments"
            return f"--fault {fault.spec}: {reason}"
    return None
