"""The `streamfold` command line: a thin front over the core (see `main.py`)."""

from __future__ import annotations

from .main import cli, main

__all__ = ["cli", "main"]
