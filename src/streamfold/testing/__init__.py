"""Testing a streaming client against streamfold's reference: `assert_reply` holds what the client built to
the reference fold of what it was served; `start_server` (the pytest plugin's `streamfold_server`
fixture) serves captures with faults; `every_transparent_fault` runs a test over each transparent fault.

    from streamfold.testing import assert_reply
    assert_reply(final_message, "capture.sse")

The names are loaded when first used (PEP 562): the pytest plugin imports this package in every test
run where streamfold is installed, and a run that uses none of it should not pay for the fold's engine.
pytest is needed only by the plugin and by `every_transparent_fault` when it decorates a test.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._assert import ReplyMismatchError, assert_reply, reference
    from ._faults import FaultParametrize, every_transparent_fault, transparent_faults
    from ._server import StreamfoldServer, start_server

__all__ = ["FaultParametrize", "ReplyMismatchError", "StreamfoldServer", "assert_reply", "every_transparent_fault",
           "reference", "start_server", "transparent_faults"]

_HOME = {"ReplyMismatchError": "_assert", "assert_reply": "_assert", "reference": "_assert",
         "FaultParametrize": "_faults", "every_transparent_fault": "_faults", "transparent_faults": "_faults",
         "StreamfoldServer": "_server", "start_server": "_server"}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
