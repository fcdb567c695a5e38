"""A dialect as one declared value: `DialectSpec`. Each dialect module or package exports its `SPEC`;
`registry` collects them (the built-ins, and the `streamfold.dialects` entry points of other packages).

The spec says what identifies the dialect's payloads, so detection is a table lookup (as h11 picks its
reader from its `READERS` table) and not an order of dialects argued pair by pair:

- `discriminators`: a payload key and the string values of it this dialect sends
  (`{"type": {"message_start", ...}}`, `{"object": {"chat.completion.chunk"}}`); a value ending in `*`
  is a prefix (`"response.*"`);
- `keys`: top-level keys its payloads carry (`candidates`, `session_id`, `done`);
- `claims`: the dialect's own test of a payload. The table offers a payload to the specs whose
  discriminators or keys it carries, whose `claims` decide (Ollama's and Cloudflare's lines both have a
  `response`); a payload no spec's `claims` took there is offered to the `keyless` specs, whose `claims`
  take shapes without a key of their own (a bare `{"content": ..., "stop": false}`, an error envelope).

No two specs claim one payload (tests/dialects/test_dialect_specs.py holds that on every capture), so
the table's answer does not depend on any order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._codes import CodeInfo, Kind, Severity
from ..framing.hints import LineFormat
from ..opaque import Opaque
from ._base import Dialect, compact_json
from ._replay import ReplayQuirks

if TYPE_CHECKING:
    from ..result import Result

__all__ = ["Dialect", "DialectSpec", "vendor_codes"]


@dataclass(frozen=True, slots=True)
class DialectSpec:
    """Everything streamfold knows of one dialect, as a value: its name, its fold class, what
    identifies its payloads, its functions (taken from the fold class unless given), the URL paths
    of its API, its own finding codes and its framing hint."""

    #: The name results carry (`Result.dialect`), `--dialect` takes and the docs list.
    name: str
    #: The class that folds its payloads (a `Dialect`; its `name` is this spec's).
    fold: type[Dialect]
    #: One line for the docs' table of dialects.
    title: str = ""
    #: Payload key -> the string values of it this dialect sends (`*` at the end: a prefix): a payload
    #: holding one is offered to this spec's `claims`.
    discriminators: Mapping[str, frozenset[str]] = field(default_factory=dict)
    #: Top-level keys this dialect's payloads carry: a payload holding one is offered to its `claims`.
    keys: frozenset[str] = frozenset()
    #: Its `claims` accepts payloads no discriminator or key of its own names (asked after the table).
    keyless: bool = False
    #: Does a decoded payload look like this dialect's? (Default: the fold class's `claims`.)
    claims: Callable[[object], bool] = None  # type: ignore[assignment]
    # The functions below default to the fold class's classmethod of that name (`summarize` for
    # `summary`) when it has one, else to what a dialect without them does.
    #: The vendor-native non-streaming object the stream stands for, from the Result alone (its `native`
    #: snapshot included): `Result.export()`. Raises NotImplementedError where there is none.
    export: Callable[[Result], dict[str, Any]] = None  # type: ignore[assignment]
    #: The reverse of `export`: the facts of this vendor's non-streaming response body, or None when a
    #: value is not one: {"content", "reasoning", "tool_calls": [(name, arguments text)], "tool_call_ids":
    #: [the id of each call, or None] (when the reply gives them), "finish_reason" (raw), "usage" (the raw
    #: usage object)}. Used by `show` (a reply given where a stream was expected), `check` and `diff`; it
    #: reads back all of that its `export` writes.
    read_response: Callable[[object], dict[str, Any] | None] = None  # type: ignore[assignment]
    #: A payload's one-line description, for the frames table.
    summary: Callable[[object], str] = None  # type: ignore[assignment]
    #: The values in an export a client must send back unchanged with the next request (signatures,
    #: encrypted reasoning), without their frames: `dialects.opaque_state` finds those.
    opaque_state: Callable[[dict[str, Any]], list[Opaque]] = None  # type: ignore[assignment]
    #: How many opaque values an export was to hold that the stream started but never completed (a thinking
    #: block whose signature never arrived); 0 for a dialect whose opaque values arrive whole.
    opaque_dropped: Callable[[dict[str, Any]], int] = None  # type: ignore[assignment]
    #: How the replay server breaks this vendor's streams (`dialects._replay`); None: it refuses the
    #: faults that need the vendor's shapes.
    replay: ReplayQuirks | None = None
    #: Markers of the URL paths its API serves (a request path that ends with or holds one is this
    #: dialect's: `serve` answers it with a capture of this dialect).
    request_paths: tuple[str, ...] = ()
    #: URL path endings of its streaming endpoints that take no `"stream": true` in the body (the
    #: mitmproxy addon records them as streams).
    stream_paths: tuple[str, ...] = ()
    #: Transports only this dialect uses: a capture framed so is this dialect's.
    transports: tuple[str, ...] = ()
    #: Its own finding codes (`vendor` set to its name), listed with every other code.
    codes: tuple[CodeInfo, ...] = ()
    #: Its framing hint: a line format that is not JSON (the Vercel data stream's `T:JSON`).
    line_format: LineFormat | None = None
    #: The module of its fast path (msgspec Structs of its hot payloads), whose equivalence test
    #: is tests/folding/test_fast_paths.py; None when it has none.
    fast_path: str | None = None

    @property
    def exports(self) -> bool:
        """Does it have an export (`Result.export()` of its results gives the vendor's object)?"""
        return not isinstance(self.export, _NoExport)

    @property
    def has_opaque_state(self) -> bool:
        """Can its replies carry opaque state (`opaque_state` finds values in an export)?"""
        return self.opaque_state is not _no_opaque_state

    @property
    def reads_responses(self) -> bool:
        """Does it read the vendor's non-streaming bodies back (`read_response`)?"""
        return self.read_response is not _reads_nothing

    def __post_init__(self) -> None:
        dialect = self.fold
        defaults: dict[str, Callable[..., Any]] = {
            "claims": dialect.claims, "export": getattr(dialect, "export", _NoExport(self.name)),
            "read_response": getattr(dialect, "read_response", _reads_nothing),
            "summary": getattr(dialect, "summarize", compact_json),
            "opaque_state": getattr(dialect, "opaque_state", _no_opaque_state),
            "opaque_dropped": getattr(dialect, "opaque_dropped", _none_dropped)}
        for name, default in defaults.items():
            if getattr(self, name) is None:
                object.__setattr__(self, name, default)
        if dialect.name != self.name:
            raise ValueError(f"the spec {self.name!r} names the fold class {dialect.__name__}, "
                             f"whose name is {dialect.name!r}")
        for name in ("request_paths", "stream_paths", "transports"):
            if isinstance(getattr(self, name), str):
                raise TypeError(f"the {self.name} spec's {name} is a string, not a tuple of them")
        for info in self.codes:
            if info.vendor != self.name:
                raise ValueError(f"the code {info.code!r} of the {self.name} spec says its vendor is {info.vendor!r}")


def vendor_codes(vendor: str, *rows: tuple[str, Severity, str]) -> tuple[CodeInfo, ...]:
    """A dialect's own finding codes, as its spec lists them: (code, default severity, one line on what
    it means) each; every vendor code is a diagnostic."""
    return tuple(CodeInfo(code, Kind.DIAGNOSTIC, severity, doc, vendor) for code, severity, doc in rows)


@dataclass(frozen=True, slots=True)
class _NoExport:
    """The export of a dialect that has none: it says so."""

    name: str

    def __call__(self, result: Result) -> dict[str, Any]:
        raise NotImplementedError(f"export is not available for the {self.name} dialect yet")


def _reads_nothing(value: object) -> dict[str, Any] | None:
    return None


def _no_opaque_state(exported: dict[str, Any]) -> list[Opaque]:
    return []


def _none_dropped(exported: dict[str, Any]) -> int:
    return 0
