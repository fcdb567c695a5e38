"""The command group. Each command reads its input through the services layer,
calls the core, and hands the Result to `render`; they live in `show.py`
(show, frames, export, blame), `compare.py` (check, diff) and `tail.py`.

`make_cli(*extra)` builds the group with the command line's commands and any
`extra` ones: the `streamfold` program (`streamfold.launcher`) adds the web
page's `web` command, which lives in the web package, so that neither front
imports the other.
"""

from __future__ import annotations

import io
import sys

import click

from .. import __version__
from .captures import captures
from .common import REQUIRE_COMPLETE_HELP, Settings
from .compare import check, diff
from .show import blame, export, frames, show
from .tail import tail
from .usage import COLORS, MAX_INFLATED_HELP, OneLineGroup, Size, with_group_options

__all__ = ["COMMANDS", "cli", "make_cli"]

_EPILOG = """\b
Exit codes:
  0  the input was read (whatever it contained)
  1  check/diff found a difference; with --strict, the stream had errors
     or no reply; with --require-complete, it did not end as its protocol
     says (cut off mid-frame or between frames, or failed); why is on stderr
  2  a usage error or unreadable input

\b
In CI:
  streamfold --strict --require-complete show capture.sse > /dev/null

--color, --quiet, --strict, --require-complete and --max-inflated may also
follow the command.
"""


@click.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
@click.pass_context
def completion(ctx: click.Context, shell: str) -> None:
    """Print the shell completion script for SHELL.

    \b
    Examples:
      eval "$(streamfold completion bash)"
      streamfold completion fish > ~/.config/fish/completions/streamfold.fish
    """
    from click.shell_completion import get_completion_class

    completer = get_completion_class(shell)
    assert completer is not None
    click.echo(completer(ctx.find_root().command, {}, "streamfold", "_STREAMFOLD_COMPLETE").source())


#: The command line's own commands.
COMMANDS: tuple[click.Command, ...] = (show, frames, export, blame, check, diff, tail, captures, completion)


def make_cli(*extra: click.Command) -> click.Group:
    """The `streamfold` group: the command line's commands, then `extra`."""

    @click.group(cls=OneLineGroup, context_settings={"help_option_names": ["-h", "--help"]}, epilog=_EPILOG)
    @click.version_option(__version__, prog_name="streamfold")
    @click.option("--color", type=click.Choice(COLORS), default="auto", show_default=True,
                  help="Colour output; auto follows the terminal and NO_COLOR.")
    @click.option("--quiet", "-q", is_flag=True,
                  help="Only the reply (and tool calls): no header, usage or findings.")
    @click.option("--strict", is_flag=True, help="Exit 1 when the stream had errors (bad frames, in-stream errors, "
                                                  "unparseable tool arguments) or no reply; a stream cut off "
                                                  "cleanly has none: add --require-complete.")
    @click.option("--require-complete", is_flag=True, help=REQUIRE_COMPLETE_HELP)
    @click.option("--max-inflated", type=Size(), default=None, metavar="SIZE", help=MAX_INFLATED_HELP)
    @click.pass_context
    def cli(ctx: click.Context, color: str, quiet: bool, strict: bool, require_complete: bool,
            max_inflated: int | None) -> None:
        """Fold a captured LLM stream (SSE, NDJSON, JSON array, AWS event-stream) into the
        reply it carried, and explain what went wrong, frame by frame. Nothing leaves
        your machine.

        \b
        Examples:
          streamfold show examples/openai-tool-calls.sse
          curl -sN https://... | streamfold show -
          streamfold frames examples/openai-broken.sse
          streamfold export examples/openai-tool-calls.sse
          curl -sN ... | streamfold tail
          streamfold --strict show capture.har --entry /v1/chat
        """
        ctx.obj = Settings(color, quiet, strict, require_complete, max_inflated)
        _never_unencodable()

    for command in (*COMMANDS, *extra):
        cli.add_command(with_group_options(command))
    return cli


def _never_unencodable() -> None:
    """A terminal or pipe that takes only ASCII (PYTHONIOENCODING=ascii, an old Windows console) gets
    `\\xb7` for what it cannot show, not a UnicodeEncodeError half way through the output."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors="backslashreplace")


#: The command line's commands alone (the `streamfold` program adds `web`: `streamfold.launcher.cli`).
cli = make_cli()
