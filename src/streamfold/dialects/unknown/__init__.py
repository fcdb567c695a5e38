"""The dialect of a stream no dialect claims (`fold`) and its spec."""

from __future__ import annotations

from ..spec import DialectSpec
from .fold import Unknown

__all__ = ["SPEC", "Unknown"]


SPEC = DialectSpec(
    "unknown", Unknown, title="a stream no dialect claimed")
