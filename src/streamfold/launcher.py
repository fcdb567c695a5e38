"""The `streamfold` program: the command line's group with the web page's `web` command and its static
build's `page`, the recording proxy's `record`, the recorders' `capture` and the replay server's `serve` added. The
fronts never import each other; this module is where they meet (the console script and
`python -m streamfold` run `main`).

The console script comes with the core (`streamfold-core`), which does not bring the command line's
libraries: without them `main` says what to install instead of failing on an import."""

from __future__ import annotations

import sys

from .fronts.extras import advice

__all__ = ["cli", "main"]

_WITHOUT_CLI = advice("cli", "streamfold's command line")

if _WITHOUT_CLI is None:
    from .capture.command import capture
    from .cli import make_cli
    from .fleet.command import fleet
    from .proxy.command import record
    from .replay.command import serve
    from .web.command import web
    from .web.page.command import page

    cli = make_cli(web, page, record, capture, serve, fleet)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    if _WITHOUT_CLI is not None:
        print(f"streamfold: {_WITHOUT_CLI}", file=sys.stderr)
        sys.exit(1)
    try:
        cli.main(args=argv, prog_name="streamfold", standalone_mode=True)
    except KeyboardInterrupt:  # pragma: no cover - interactive only
        sys.exit(130)
