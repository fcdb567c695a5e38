"""`streamfold serve`: the command that runs the replay server. It lives here, with the server;
`streamfold.launcher` adds it to the command line's group."""

from __future__ import annotations

import random
import sys

import click

from ..fronts.extras import require

__all__ = ["serve"]

EXIT_USAGE = 2


class _Speed(click.ParamType):  # type: ignore[type-arg,unused-ignore]
    name = "original|max|FACTOR"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> str | float:
        if isinstance(value, float) or value in ("original", "max"):
            return value  # type: ignore[return-value,unused-ignore]
        try:
            factor = float(str(value))
        except ValueError:
            factor = 0.0
        if not 0 < factor < float("inf"):
            self.fail(f"{value!r} is not original, max or a positive number (2 = twice as fast)", param, ctx)
        return factor


def _fault_help() -> str:
    from .faults import FAULTS, describe
    transparent = ", ".join(describe(kind) for kind in FAULTS.values() if kind.transparent)
    destructive = ", ".join(describe(kind) for kind in FAULTS.values() if not kind.transparent)
    return (f"A fault to serve the capture with (repeat to combine). Transparent (a correct client's reply does "
            f"not change): {transparent}. Destructive: {destructive}. FRAME numbers are the capture's, as "
            "`streamfold frames` shows them. See docs/replay.md.")


@click.command()
@click.argument("sources", metavar="SOURCE...", nargs=-1, required=True)
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. Off loopback (0.0.0.0, a LAN address) every request must carry this run's "
                   "access token, printed in the URL (path prefix /t/TOKEN, header X-Streamfold-Token, or "
                   "Authorization: Bearer TOKEN as an SDK's api_key); the rest get 401. Plain HTTP: the token does "
                   "not encrypt anything.")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port to listen on; 0 picks a free one.")
@click.option("--speed", type=_Speed(), default="original", show_default=True,
              help="Pace: the recorded arrival times (original; as fast as possible for a capture without them), "
                   "max (no waiting), or FACTOR (recorded times divided by it: 2 is twice as fast).")
@click.option("--fault", "fault_specs", multiple=True, metavar="SPEC", help=_fault_help())
@click.option("--seed", type=int, default=None,
              help="Seed of the random faults (chunk:random): the same seed serves request N the same way every "
                   "run. Default: a random one, printed.")
@click.option("--expect-out", default=None, metavar="PATH",
              help="Write the reference of each request's served bytes (the `show --json` result) to PATH, before "
                   "its body ends; `{request}` in PATH is replaced by the request id (else it is overwritten).")
def serve(sources: tuple[str, ...], host: str, port: int, speed: str | float, fault_specs: tuple[str, ...],
          seed: int | None, expect_out: str | None) -> None:
    """Serve captures over HTTP, with framing faults, for a client under test.

    SOURCE is any input streamfold reads, a stored capture DB.sqlite#ID, a whole store
    DB.sqlite, or a directory of captures. The first line printed is the URL: point the
    client's base URL there. Bound off loopback (--host 0.0.0.0), that URL carries a
    per-run access token as its path prefix (http://HOST:PORT/t/TOKEN); a request
    without the token gets 401. A request to any path gets the capture's status, Content-Type
    and stream (decoded, uncompressed); GET /_streamfold/expect returns streamfold's result
    for the bytes the last request was served (?request=ID for another).

    \b
    With several captures, a request gets (first that applies):
      the header x-streamfold-capture: NAME (or its index from 0);
      the path prefix /@NAME/ (base URL http://127.0.0.1:PORT/@NAME/v1);
      the capture recorded at the request's path;
      the first capture of the path's dialect (/v1/messages -> anthropic, ...).

    \b
    Examples:
      streamfold serve examples/openai-plain-text.sse --fault chunk:1
      OpenAI(base_url="http://127.0.0.1:PORT/v1", api_key="x")
      streamfold serve captures/ --fault split-utf8 --fault keepalive:3
      streamfold serve streamfold.sqlite#12 --speed 2 --fault cut:20
      curl -s http://127.0.0.1:PORT/_streamfold/expect | jq '.choices[0].content'
    """
    require("serve", "streamfold serve")
    from ..fronts.serving import LineOutput, is_loopback_address, log_through, new_token, shorten
    from .app import ReplayServer
    from .faults import FaultError, parse_fault
    from .server import serve as run
    from .sources import SourceError, read_sources

    # Every line goes out through a bounded backlog on a thread of its own: a caller that reads the URL line
    # and nothing more must not freeze the server once the pipe is full (see LineOutput).
    output, errors = LineOutput(sys.stdout), LineOutput(sys.stderr)
    log_through(errors)
    try:
        faults = [parse_fault(spec) for spec in fault_specs]
        recordings = read_sources(list(sources))
        chosen = random.SystemRandom().randrange(1 << 31) if seed is None else seed
        token = None if is_loopback_address(host) else new_token()
        app = ReplayServer(recordings, faults, speed=speed, seed=chosen, expect_out=expect_out, echo=output.line,
                           token=token)
    except (FaultError, SourceError) as exc:
        click.echo(f"streamfold serve: {exc}", err=True)
        sys.exit(EXIT_USAGE)

    def said(line: str) -> None:
        output.line(line)
        if line.startswith("http"):  # after the URL: what is served, one line each
            shown = ", ".join(spec for spec in fault_specs) or "none"
            output.line(f"seed {chosen}, speed {speed}, faults: {shown}")
            for index, recording in enumerate(recordings):
                output.line(f"  [{index}] {shorten(recording.name)}: {recording.dialect} {recording.transport}, "
                            f"{len(recording.frames)} frames{', with arrival times' if recording.reads else ''}"
                            f"{f', recorded at {shorten(recording.path)}' if recording.path else ''}")

    if token is not None:
        errors.line(f"streamfold serve: listening on {host}, off loopback: a request must carry this run's access "
                    "token (the /t/TOKEN prefix of the URL printed, the header X-Streamfold-Token, or "
                    "Authorization: Bearer TOKEN) or it gets 401. The token keeps out whoever does not have it; the "
                    "connection is plain HTTP, so the token and the captures served can be read on the network.")
    try:
        run(app, host=host, port=port, echo=said)
    except OSError as exc:
        click.echo(f"streamfold serve: cannot listen on {host}:{port}: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_USAGE)
    finally:
        output.close()
        errors.close()
