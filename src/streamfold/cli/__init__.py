"""The `streamfold` command line: a thin front over the services layer (see `main.py`).

It never imports the web page's package; the `streamfold` program
(`streamfold.launcher`) puts the two together.
"""

from __future__ import annotations

from .main import COMMANDS, cli, make_cli

__all__ = ["COMMANDS", "cli", "make_cli"]
