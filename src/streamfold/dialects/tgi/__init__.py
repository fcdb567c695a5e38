"""Hugging Face TGI `/generate_stream`: the dialect (`fold`) and its spec."""

from __future__ import annotations

from ...findings import Severity
from ..spec import DialectSpec, vendor_codes
from .fold import TGI

__all__ = ["SPEC", "TGI"]


SPEC = DialectSpec(
    "tgi", TGI, title="Hugging Face Text Generation Inference `/generate_stream`",
    keys=frozenset({"generated_text", "error_type"}), request_paths=("/generate_stream",),
    codes=vendor_codes(
        "tgi",
        ("special-token-skipped", Severity.INFO, "a special token the server streams but leaves out of the final "
         "text")))
