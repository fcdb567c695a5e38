"""The `streamfold` program: the command line's group with the web page's `web` command, the
recording proxy's `record`, the recorders' `capture` and the replay server's `serve` added. The
fronts never import each other; this module is where they meet (the console script and
`python -m streamfold` run `main`)."""

from __future__ import annotations

import sys

from .capture.command import capture
from .cli import make_cli
from .proxy.command import record
from .replay.command import serve
from .web.command import web

__all__ = ["cli", "main"]

cli = make_cli(web, record, capture, serve)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    try:
        cli.main(args=argv, prog_name="streamfold", standalone_mode=True)
    except KeyboardInterrupt:  # pragma: no cover - interactive only
        sys.exit(130)
