"""The replay server (`streamfold serve`): serves recorded captures over HTTP on 127.0.0.1 with the
framing faults of `faults` applied, and the reference of what each request was served. A front,
beside the command line, the web page and the recording proxy: it imports none of them.

`faults` is the vocabulary, `edits` and `plan` turn a capture and faults into the writes to serve
(pure), `reference` folds what was served, `sources` reads the SOURCE arguments, `choose` picks a
capture for a request, `app` is the ASGI app, `server` runs it, `command` is `streamfold serve`.
See docs/replay.md. (`server.start_in_thread` runs it in a thread; imported from there, so
that the other commands do not load uvicorn.)
"""

from __future__ import annotations

from .app import ReplayServer
from .faults import FAULTS, Fault, FaultError, parse_fault
from .plan import Plan, Recording, Write, plan_response
from .reference import reference, reply_part
from .sources import SourceError, read_sources, recording_of

__all__ = ["FAULTS", "Fault", "FaultError", "Plan", "Recording", "ReplayServer", "SourceError", "Write",
           "parse_fault", "plan_response", "read_sources", "recording_of", "reference", "reply_part"]
