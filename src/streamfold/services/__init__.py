"""The services the fronts share, between them and the core: reading what a
person has at hand (`inputs`), folding and annotating it (`load`), timing
from arrival times (`timing`), frames as rows (`rows`), comparing two replies
(`diff`) and a client's output with the reference (`check`).

Front-neutral: no terminal, no HTML, no web server (no click, rich or
starlette). The command line (`streamfold.cli`) and the web page
(`streamfold.web`) both sit on this layer and never import each other; the
core never imports it.
"""

from __future__ import annotations

from ._wrong_input import NOT_A_STREAM
from .inputs import (
           FORMATS,
           MAX_INFLATED,
           Capture,
           InflatedTooLargeError,
           InputError,
           Note,
           read_capture,
           transport_notes,
)
from .load import Loaded, Progress, annotate, ended_by_finish_reason, load
from .timing import DEFAULT_STALL, Timing, analyse

__all__ = ["DEFAULT_STALL", "FORMATS", "MAX_INFLATED", "NOT_A_STREAM", "Capture", "InflatedTooLargeError",
           "InputError", "Loaded", "Note", "Progress", "Timing", "analyse", "annotate", "ended_by_finish_reason",
           "load", "read_capture", "transport_notes"]
