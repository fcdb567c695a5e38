"""llama.cpp native `POST /completion` (and `/infill`): the dialect (`fold`) and its spec."""

from __future__ import annotations

from ...findings import Severity
from ..spec import DialectSpec, vendor_codes
from .fold import LlamaCpp

__all__ = ["SPEC", "LlamaCpp"]


SPEC = DialectSpec(
    "llama-cpp", LlamaCpp, title="llama.cpp server native `/completion`",
    keys=frozenset({"stop"}), request_paths=("/completion",),
    codes=vendor_codes(
        "llama-cpp",
        ("text-rebuilt-from-bytes", Severity.WARNING, "the text was rebuilt from the tokens' bytes"),
        ("replacement-char-in-text", Severity.WARNING, "U+FFFD in the streamed text: a character was split across "
         "tokens")))
