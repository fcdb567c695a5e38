"""`streamfold web`: the command that serves the page. It lives here, with the
page, and the `streamfold` program (`streamfold.launcher`) adds it to the
command line's group, so neither front imports the other."""

from __future__ import annotations

import sys

import click

__all__ = ["web"]

EXIT_USAGE = 2


@click.command()
@click.argument("capture", metavar="[FILE]", required=False,
                type=click.Path(exists=True, dir_okay=False, readable=True))
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port to listen on; 0 picks a free one.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. The page answers only requests addressed to a loopback name.")
@click.option("--open", "open_browser", is_flag=True, help="Open the page in the default browser.")
@click.option("--max-size", default="64MiB", show_default=True,
              help="Largest capture accepted per request (bytes, or with KiB, MiB, GiB); a gzip body counts inflated.")
@click.option("--header-timeout", type=click.FloatRange(min=0, min_open=True), default=10.0, show_default=True,
              metavar="SECONDS", help="Time a request has to send its headers; later, 408 and the connection closed.")
@click.option("--body-timeout", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
              metavar="SECONDS", help="Time a request has, once its headers are in, to send its body.")
@click.option("--max-folds", type=click.IntRange(min=1), default=4, show_default=True,
              help="Captures folded at once; more get 503 and are asked to try again.")
def web(capture: str | None, port: int, host: str, open_browser: bool, max_size: str, header_timeout: float,
        body_timeout: float, max_folds: int) -> None:
    """Serve the local web page: raw bytes, events, JSON per frame and the merged reply, side by side.

    Paste a capture, drop a file, or give FILE to open it at once. Everything runs on
    this machine through the same core as the other commands; nothing is sent anywhere else.

    \b
    Examples:
      streamfold web examples/openai-broken.sse --open
      streamfold web --port 8765
    """
    # Imported here: the other commands need neither starlette nor uvicorn.
    from .app import create_app
    from .server import Timeouts, parse_size, serve

    try:
        limit = parse_size(max_size)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--max-size") from None
    try:
        serve(create_app(capture_path=capture, max_size=limit, max_folds=max_folds), host=host, port=port,
              open_browser=open_browser, echo=click.echo, timeouts=Timeouts(header_timeout, body_timeout))
    except OSError as exc:
        click.echo(f"streamfold: cannot listen on {host}:{port}: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_USAGE)
