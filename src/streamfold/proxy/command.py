"""`streamfold record`: the command that runs the recording proxy. It lives
here, with the proxy; `streamfold.launcher` adds it to the command line's group."""

from __future__ import annotations

import os
import shlex
import sys

import click

from ..fronts.extras import require

__all__ = ["record"]

EXIT_USAGE = 2


@click.command()
@click.option("--target", required=True, metavar="URL",
              help="Where every request goes: http(s)://host[:port][/prefix].")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. Off loopback (0.0.0.0, a LAN address) every request must carry this run's "
                   "access token, printed in the URL (path prefix /t/TOKEN, or header X-Streamfold-Token); the "
                   "rest is refused and never forwarded. Plain HTTP: the token does not encrypt anything.")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port to listen on; 0 picks a free one.")
@click.option("--db", "db", default=None, metavar="PATH",
              help="The capture store to write (default: $STREAMFOLD_DB, else ./streamfold.sqlite).")
@click.option("--keep-secrets", is_flag=True, help="Store credentials (Authorization, API keys, cookies) as sent.")
def record(target: str, host: str, port: int, db: str | None, keep_secrets: bool) -> None:
    """Record live streams: a reverse proxy to URL that writes every exchange into the capture store.

    Point the client's base URL at the address printed first; each request is forwarded
    to --target and its response passed back as it arrives, read by read, while every
    read is stored with its arrival time. One line per exchange follows as it ends:

    \b
      POST /v1/chat/completions 200 openai-chat complete ttfb=0.18s ttft=0.21s frames=14 finish=stop findings=0

    TTFB (time to first byte): from the request reaching the proxy to the first
    byte of the response body. TTFT (time to first text): from the request to
    the first frame that adds reply text (content, reasoning, a refusal or
    tool-call arguments). `show`, `tail` and the page measure them the same way.
    Ctrl-C stops it and says how many exchanges went into which store.

    Bound off loopback (--host 0.0.0.0), the URL printed carries a per-run access
    token as its path prefix (http://HOST:PORT/t/TOKEN): clients use it as their base
    URL (or send X-Streamfold-Token: TOKEN); a request without it gets 401 and is
    neither forwarded nor recorded. On loopback (the default) no token is needed.

    On a terminal, each exchange still in flight also has a live line below those
    (method, path, elapsed time, bytes and reads so far), redrawn about 4 times a
    second and replaced by its finished line when it ends. When stdout is not a
    terminal (a pipe, a file) no live lines are drawn: one line per exchange, nothing else.

    \b
    Examples:
      streamfold record --target https://api.openai.com
      OpenAI(base_url="http://127.0.0.1:PORT/v1")
      streamfold captures
    """
    require("record", "streamfold record")
    # Imported here: the other commands need neither httpx nor uvicorn.
    from ..fronts.serving import LineOutput, is_loopback_address, log_through, new_token
    from ..store import CaptureStore, StoreError, default_db
    from .app import RecordingProxy
    from .console import Console
    from .server import serve

    path = db or default_db()
    try:
        store = CaptureStore.open(path, keep_secrets=keep_secrets)
    except StoreError as exc:
        click.echo(f"streamfold: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    # Lines go out through a bounded backlog on a thread of their own (see LineOutput): a terminal or pipe
    # nobody reads never holds up an exchange; uvicorn's own warnings likewise on stderr.
    output, errors = LineOutput(sys.stdout), LineOutput(sys.stderr)
    log_through(errors)
    console = Console(output.line, out=output, live=output.isatty())
    token = None if is_loopback_address(host) else new_token()
    try:
        app = RecordingProxy(target, store, console=console, token=token)
    except ValueError as exc:
        store.close()
        raise click.BadParameter(str(exc), param_hint="--target") from None
    # The store folds each ended exchange's summary on a thread of its own; a big fold holds the GIL for
    # the whole default 5 ms switch interval each time the event loop gives it up for a socket call, so a
    # stream in flight stalls behind it. 1 ms lets the loop back in sooner (bench_proxy.py: 9 -> 29 MB/s
    # for a stream relayed while an 80 MB fold runs).
    sys.setswitchinterval(0.001)
    if token is not None:
        errors.line(f"streamfold record: listening on {host}, off loopback: a request must carry this run's access "
                    "token (the /t/TOKEN prefix of the URL printed, or the header X-Streamfold-Token) or it gets 401 "
                    "and is neither forwarded nor recorded. Whoever has the token can send requests through this "
                    f"proxy to {app.target.url} with the credentials they send, and the connection to this proxy is "
                    "plain HTTP: the token, API keys, prompts and replies can be read on the network. Prefer the "
                    "loopback default and an SSH tunnel (ssh -L PORT:127.0.0.1:PORT host).")
    try:
        serve(app, host=host, port=port)
    except KeyboardInterrupt:
        pass  # Ctrl+C is how it stops: uvicorn has shut down gracefully and re-raised the signal
    except OSError as exc:
        click.echo(f"streamfold: cannot listen on {host}:{port}: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_USAGE)
    finally:
        console.close()
        store.close()
        output.close()
        errors.close()
    click.echo(stopped_line(app.recorded, path), err=True)


def stopped_line(recorded: list[int], path: str) -> str:
    """What `record` says when it stops: how many exchanges went into which store, and how to see them."""
    where = os.path.abspath(path)
    if not recorded:
        return f"streamfold record: stopped; no exchange was recorded (the store is {where})"
    ids = sorted(recorded)
    contiguous = ids == list(range(ids[0], ids[-1] + 1))
    named = (f"capture {ids[0]}" if len(ids) == 1 else f"captures {ids[0]}-{ids[-1]}" if contiguous else
             "captures " + ", ".join(map(str, ids[:5])) + (f" and {len(ids) - 5} more" if len(ids) > 5 else ""))
    count = f"{len(ids)} exchange{'s' if len(ids) != 1 else ''}"
    return (f"streamfold record: stopped; {count} recorded into {where} ({named}): "
            f"streamfold captures --db {shlex.quote(where)} lists them, "
            f"streamfold show {shlex.quote(f'{where}#{ids[-1]}')} shows the last")
