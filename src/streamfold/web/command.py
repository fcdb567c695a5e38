"""`streamfold web`: the command that serves the page. It lives here, with the
page, and the `streamfold` program (`streamfold.launcher`) adds it to the
command line's group, so neither front imports the other."""

from __future__ import annotations

import os
import sys
from typing import Literal, NoReturn

import click

from ..fronts.extras import require

__all__ = ["web"]

EXIT_USAGE = 2


@click.command()
@click.argument("capture", metavar="[FILE]", required=False)
@click.option("--db", "db", default=None, metavar="PATH",
              help="List the captures of this capture store (streamfold record's), newest first, as it is written; "
                   "click one to open it with its arrival times. It may not exist yet.")
@click.option("--fleet", "fleet", default=None, metavar="DIR",
              help="Report on this fleet (streamfold fleet fold's --out DIR): how its streams ended as tables and "
                   "charts, filters by dialect, model, outcome class and finding code, and any capture opened "
                   "again from where it was folded, with one click.")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port to listen on; 0 picks a free one.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. On loopback (the default) the page answers only requests addressed to a "
                   "loopback name. Off loopback (0.0.0.0, a LAN address) every request must carry this run's access "
                   "token: the URL printed ends in ?token=..., which the page keeps in a cookie (scripts: "
                   "Authorization: Bearer TOKEN); plain HTTP, so the token and the captures cross the network "
                   "unencrypted.")
@click.option("--open", "open_browser", is_flag=True, help="Open the page in the default browser.")
@click.option("--max-size", default="64MiB", show_default=True,
              help="Largest capture accepted per request (bytes, or with KiB, MiB, GiB); a gzip body counts inflated.")
@click.option("--header-timeout", type=click.FloatRange(min=0, min_open=True), default=10.0, show_default=True,
              metavar="SECONDS", help="Time a request has to send its headers; later, 408 and the connection closed.")
@click.option("--body-timeout", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
              metavar="SECONDS", help="Time a request has, once its headers are in, to send its body.")
@click.option("--max-folds", type=click.IntRange(min=1), default=4, show_default=True,
              help="Captures folded at once; more get 503 and are asked to try again.")
@click.pass_context
def web(ctx: click.Context, capture: str | None, db: str | None, fleet: str | None, port: int, host: str,
        open_browser: bool, max_size: str, header_timeout: float, body_timeout: float, max_folds: int) -> None:
    """Serve the local web page: raw bytes, events, JSON per frame and the merged reply, side by side.

    Paste a capture, drop a file, or give FILE to open it at once. FILE may be a stored
    capture (PATH.sqlite#ID, or PATH.sqlite for the latest): the page then lists that store
    too, as --db does. Everything runs on this machine through the same core as the other
    commands; nothing is sent anywhere else. Bound off loopback (--host 0.0.0.0), every
    request must carry the per-run access token the printed URL ends in (?token=...).

    \b
    Examples:
      streamfold web examples/openai-broken.sse --open
      streamfold web --db streamfold.sqlite --open
      streamfold web --fleet fleet/ --open
      streamfold web streamfold.sqlite#3
      streamfold web --port 8765
    """
    require("web", "streamfold web")
    # Imported here: the other commands need neither starlette nor uvicorn.
    from ..fronts.serving import LineOutput, is_loopback_address, log_through, new_token
    from .app import create_app
    from .server import Timeouts, parse_size, serve

    try:
        limit = parse_size(max_size)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--max-size") from None
    capture, db, open_stored = _store_and_file(ctx, capture, db)
    if fleet is not None:
        _check_fleet(fleet)
    errors = LineOutput(sys.stderr)  # uvicorn's warnings (a bad request each) never wait on an unread stderr
    log_through(errors)
    token = None if is_loopback_address(host) else new_token()
    if token is not None:
        errors.line(f"streamfold web: listening on {host}, off loopback: every request must carry this run's access "
                    "token (the URL printed ends in ?token=...; the page keeps it in a cookie of its port; scripts "
                    "send Authorization: Bearer TOKEN), or it gets 401. The token keeps out whoever does not have "
                    "it; it encrypts nothing: this is plain HTTP, so the token, the captures and everything the page "
                    "shows can be read on the network. Prefer the loopback default and an SSH tunnel "
                    "(ssh -L PORT:127.0.0.1:PORT host).")
    try:
        app = create_app(capture_path=capture, max_size=limit, max_folds=max_folds, db_path=db,
                         open_stored=open_stored, token=token, fleet_path=fleet)
        serve(app, host=host, port=port, open_browser=open_browser, echo=click.echo,
              timeouts=Timeouts(header_timeout, body_timeout), token=token)
    except OSError as exc:
        click.echo(f"streamfold: cannot listen on {host}:{port}: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_USAGE)
    finally:
        errors.close()


def _store_and_file(ctx: click.Context, capture: str | None,
                    db: str | None) -> tuple[str | None, str | None, int | Literal["latest"] | None]:
    """(FILE to open, store to list, stored capture to open) from the command line; a FILE that is not
    there, a store that is not one, or a FILE in another store than --db ends the command (exit 2)."""
    from ..store import StoreError, list_exchanges, parse_ref

    try:
        ref = parse_ref(capture) if capture is not None else None
    except StoreError as exc:
        _refuse(str(exc))
    open_stored: int | Literal["latest"] | None = None
    if ref is not None:
        path, capture_id = ref
        if db is not None and os.path.abspath(db) != os.path.abspath(path):
            _refuse(f"FILE {capture!r} is a capture of another store than --db {db!r}: give one store")
        if not os.path.exists(path):
            _refuse(f"no capture store at {path!r}")
        db, capture, open_stored = path, None, "latest" if capture_id is None else capture_id
    elif capture is not None:
        argument = next(param for param in ctx.command.params if param.name == "capture")
        click.Path(exists=True, dir_okay=False, readable=True).convert(capture, argument, ctx)  # its usage error
    if db is not None and os.path.exists(db):
        try:
            list_exchanges(db, limit=1)
        except StoreError as exc:
            _refuse(str(exc))
    elif db is not None:
        click.echo(f"streamfold web: no capture store at {db} yet; the page lists its captures once a recorder "
                   f"writes it (streamfold record --db {db} ...)")
    return capture, db, open_stored


def _check_fleet(path: str) -> None:
    """A fleet directory the page can report on, or the command ends (exit 2; without the fleet extra, 1)."""
    require("fleet", "streamfold web --fleet")
    from ..fleet.layout import FleetError
    from .fleet_view import FleetSource

    try:
        FleetSource(path).check()
    except FleetError as exc:
        _refuse(str(exc))


def _refuse(message: str) -> NoReturn:
    click.echo(f"streamfold: {message}", err=True)
    sys.exit(EXIT_USAGE)
