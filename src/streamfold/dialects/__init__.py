"""Dialects: one small module or package per vendor, each exporting its `SPEC` (a `DialectSpec`:
`spec.py`), collected by `registry` with those other packages register.

`DIALECTS` maps a name to its fold class; `detect()` returns the dialect that claims a decoded
payload (the registry's table of declared discriminators), or None.
"""

from __future__ import annotations

from ..framing import FrameIssue
from ..opaque import Opaque, find_carrier
from ..result import Result
from ._base import Dialect
from .bedrock import Bedrock
from .registry import SPECS, detect, spec_of
from .spec import DialectSpec

__all__ = ["DIALECTS", "SPECS", "Dialect", "DialectSpec", "carried_error", "detect", "for_transport", "opaque_state",
           "spec_of"]

DIALECTS: dict[str, type[Dialect]] = {spec.name: spec.fold for spec in SPECS}


def for_transport(transport: str) -> type[Dialect] | None:
    """The dialect a transport decides on its own (the payloads alone do not say): AWS
    event-stream bytes are Bedrock's."""
    return next((spec.fold for spec in SPECS if transport in spec.transports), None)


def carried_error(issue: FrameIssue) -> tuple[str, str] | None:
    """The in-stream error a frame issue stands for in some vendor's streams (`Dialect.carried_error`)."""
    for spec in SPECS:
        if (found := spec.fold.carried_error(issue)) is not None:
            return found
    return None


def opaque_state(result: Result) -> tuple[Opaque, ...]:
    """The opaque values of a reply a client must send back (`streamfold.opaque`), each with the
    frame that carried it; () for a dialect without an export or without such values."""
    if result.dialect not in DIALECTS:
        return ()
    spec = spec_of(result.dialect)
    try:
        exported = result.export()
    except NotImplementedError:
        return ()
    return tuple(item.at_frame(find_carrier(result, item.value)) for item in spec.opaque_state(exported))


# Bedrock's InvokeModel chunks wrap another vendor's events: it finds their dialect and its summary
# here (it cannot import the registry, which imports it).
Bedrock.detect_inner = detect
Bedrock.summary_of = lambda dialect: spec_of(dialect).summary
