"""The transparent faults a client's test runs over: `transparent_faults()` lists their SPECs, taken from
the replay vocabulary (`streamfold.replay.faults.FAULTS`: each transparent kind's `examples`), and
`every_transparent_fault` parametrises a test over them (`@every_transparent_fault` gives the test a
`fault` argument).

Strategy: pytest is imported only when the decorator is applied, so `streamfold.testing` stays
importable where pytest is not installed; the vocabulary is read when the list is asked for, so
importing this module costs nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["FaultParametrize", "every_transparent_fault", "transparent_faults"]

Decorated = TypeVar("Decorated", bound=Callable[..., Any])


def transparent_faults(transport: str | None = None) -> list[str]:
    """The SPECs of every transparent fault (a correct client's reply must not change under any), each kind
    with the parameters a test runs: `chunk:1`, `chunk:random`, `split-utf8`, `crlf`, ... . `transport`
    ("sse", "ndjson", "json-array", "aws-eventstream") keeps those defined for it; None: all, which are
    the SSE ones (every transparent fault applies to SSE)."""
    from ..replay.faults import FAULTS

    known = sorted({transport for kind in FAULTS.values() for transport in kind.transports})
    if transport is not None and transport not in known:
        raise ValueError(f"transport must be one of {', '.join(known)}, not {transport!r}")
    return [spec for kind in FAULTS.values() if kind.transparent
            and (transport is None or transport in kind.transports) for spec in kind.examples]


class FaultParametrize:
    """A decorator: `@every_transparent_fault` runs the test once per transparent fault, the SPEC in its
    `fault` argument (test ids are the SPECs: `test_x[chunk:1]`). `every_transparent_fault.for_transport(
    "ndjson")` keeps the faults an NDJSON capture takes; `argname=` names the argument otherwise."""

    def __init__(self, transport: str | None = None, argname: str = "fault") -> None:
        self.transport = transport
        self.argname = argname

    def for_transport(self, transport: str | None, *, argname: str | None = None) -> FaultParametrize:
        """The same decorator over the transparent faults defined for `transport` only."""
        transparent_faults(transport)  # an unknown transport is refused here, where it is written
        return FaultParametrize(transport, argname or self.argname)

    def __call__(self, test: Decorated) -> Decorated:
        import pytest

        specs = transparent_faults(self.transport)
        decorated: Decorated = pytest.mark.parametrize(self.argname, specs, ids=specs)(test)
        return decorated

    def __repr__(self) -> str:
        return f"every_transparent_fault.for_transport({self.transport!r}, argname={self.argname!r})"


#: `@every_transparent_fault`: the test runs once per transparent fault, with the SPEC as `fault`.
every_transparent_fault = FaultParametrize()
