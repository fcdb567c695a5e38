"""`streamfold capture`: the command group of the recorders that run inside other programs. Its
`mitmproxy-addon` prints where the mitmproxy addon file is, and only that, so a shell can hand it to
`mitmdump -s`. The addon is found next to this module, never imported: it needs mitmproxy's interpreter."""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["ADDON", "capture"]

#: The addon file mitmdump loads (`mitmdump -s PATH`); it ships inside the package.
ADDON = Path(__file__).resolve().with_name("mitmproxy_addon.py")


@click.group()
def capture() -> None:
    """Record exchanges from inside other programs into the capture store.

    \b
    Examples:
      mitmdump --listen-host 127.0.0.1 -s "$(streamfold capture mitmproxy-addon)"
      mitmdump --listen-host 127.0.0.1 -s "$(streamfold capture mitmproxy-addon)" \
        --mode reverse:https://api.openai.com
      streamfold captures
    """


@capture.command("mitmproxy-addon")
def mitmproxy_addon() -> None:
    """Print the path of the mitmproxy addon that records streams into the capture store.

    mitmproxy passes each streamed reply (SSE, NDJSON, AWS event-stream, or any reply to a request
    that asked to stream) on to the client chunk by chunk while the addon stores every chunk with its
    arrival time. Options (--set NAME=VALUE): streamfold_db (default $STREAMFOLD_DB, else
    ./streamfold.sqlite), streamfold_keep_secrets, streamfold_all (every response, not only streams).

    \b
    Examples:
      ADDON="$(streamfold capture mitmproxy-addon)"
      mitmdump --listen-host 127.0.0.1 -s "$ADDON" --set streamfold_db=llm.sqlite
      HTTPS_PROXY=http://127.0.0.1:8080 SSL_CERT_FILE=~/.mitmproxy/mitmproxy-ca-cert.pem my-cli ...
      mitmdump --listen-host 127.0.0.1 -s "$ADDON" --mode reverse:https://api.anthropic.com
      streamfold show llm.sqlite
    """
    click.echo(str(ADDON))
