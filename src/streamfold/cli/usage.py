"""How the command line takes its options and reports their misuse.

- The group options (--color, --quiet, --strict, --require-complete, --max-inflated) are accepted after the
  subcommand too: `with_group_options` adds them to each command, where they
  update the group's `Settings`.
- A usage error is one line and a hint, `streamfold show: missing FILE (try:
  streamfold show --help)`, exit 2, instead of click's "Usage: … Try … Error: …"
  block; an unknown option or command names the nearest one when there is one.
"""

from __future__ import annotations

import difflib
import math
from typing import IO, Any

import click

from .._sizes import parse_size
from .common import REQUIRE_COMPLETE_HELP, Settings

__all__ = ["COLORS", "MAX_INFLATED_HELP", "OneLineGroup", "Seconds", "Size", "one_line", "with_group_options"]

COLORS = ("auto", "always", "never")


class Seconds(click.ParamType):  # type: ignore[type-arg]
    """A positive, finite number of seconds (a threshold: zero, NaN and infinity mean nothing)."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if math.isnan(number) or math.isinf(number) or number <= 0:
            self.fail(f"{value} is not a positive, finite number of seconds", param, ctx)
        return number


class Size(click.ParamType):  # type: ignore[type-arg]
    """A size in bytes, or with KiB, MiB, GiB (`256MiB`)."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            return parse_size(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


#: What `--max-inflated` says, for the group and after each command.
MAX_INFLATED_HELP = ("The most bytes a compressed body (a gzip body, a HAR's or a stored one) is inflated to; past "
                     "it the rest is dropped and an inflated-too-large finding says where. Default 256MiB.")


def _settings(ctx: click.Context) -> Settings:
    found = ctx.find_object(Settings)
    if found is None:
        found = ctx.ensure_object(Settings)
    return found


def _set(name: str) -> Any:
    def callback(ctx: click.Context, _param: click.Parameter, value: Any) -> None:
        if value not in (None, False):  # given after the subcommand: it overrides the group's
            setattr(_settings(ctx), name, value)
    return callback


def with_group_options(command: click.Command) -> click.Command:
    """Let `command` take the group options too (`streamfold show --quiet x.sse`)."""
    if any(param.name == "quiet" for param in command.params):
        return command
    command.params.extend([
        click.Option(["--color"], type=click.Choice(COLORS), default=None, expose_value=False,
                     callback=_set("color"), help="As the group option --color."),
        click.Option(["--quiet", "-q"], is_flag=True, default=False, expose_value=False,
                     callback=_set("quiet"), help="As the group option --quiet."),
        click.Option(["--strict"], is_flag=True, default=False, expose_value=False,
                     callback=_set("strict"), help="As the group option --strict."),
        click.Option(["--require-complete"], is_flag=True, default=False, expose_value=False,
                     callback=_set("require_complete"), help=REQUIRE_COMPLETE_HELP),
        click.Option(["--max-inflated"], type=Size(), default=None, expose_value=False, metavar="SIZE",
                     callback=_set("max_inflated"), help=MAX_INFLATED_HELP),
    ])
    return command


class _OneLine(click.UsageError):
    """A usage error already put in one line; shown as it is."""

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(self.message, err=True)


def one_line(exc: click.UsageError, path: str = "streamfold") -> str:
    """`exc` in one line: `streamfold show: missing FILE (try: streamfold show --help)`; `path` names
    the command when the error does not."""
    ctx = exc.ctx
    path = ctx.command_path if ctx is not None else path
    if isinstance(exc, click.MissingParameter) and exc.param is not None:
        param = exc.param
        if isinstance(param, click.Argument):
            what = param.make_metavar(ctx) if ctx is not None else (param.name or "").upper()
            said = f"missing {what.split('|')[0].strip('[]')}"
        else:
            said = f"missing option {param.opts[0] if param.opts else param.name}"
    elif isinstance(exc, click.NoSuchOption):
        said = f"unknown option {exc.option_name}"
        if exc.possibilities:
            said += f"; did you mean {' or '.join(sorted(exc.possibilities)[:3])}?"
    elif isinstance(exc, click.BadParameter) and (exc.param_hint or exc.param is not None):
        hint = exc.param_hint or (exc.param.opts[0] if exc.param is not None and exc.param.opts else "")
        if isinstance(exc.param, click.Argument) and ctx is not None:
            hint = exc.param.make_metavar(ctx).strip("[]")
        named = hint if isinstance(hint, str) else " / ".join(hint)
        said = f"invalid {named}: {' '.join(exc.message.split()).rstrip('.')}"
    else:
        message = exc.format_message().strip().rstrip(".")
        said = message[:1].lower() + message[1:]
        said = " ".join(said.split())
    return f"{path}: {said} (try: {path} --help)"


class OneLineGroup(click.Group):
    """The `streamfold` group: usage errors in one line; an unknown command names the nearest."""

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as exc:
            raise _brief(exc) from None

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None,
                                                                               list[str]]:
        name = args[0] if args else ""
        if args and self.get_command(ctx, name) is None and not name.startswith("-"):
            near = difflib.get_close_matches(name, self.list_commands(ctx), n=1)
            hint = f"; did you mean {near[0]}?" if near else ""
            raise _OneLine(f"{ctx.command_path}: unknown command {name!r}{hint} (try: {ctx.command_path} --help)",
                           ctx)
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as exc:
            command = ctx.invoked_subcommand
            raise _brief(exc, f"{ctx.command_path} {command}" if command else ctx.command_path) from None


def _brief(exc: click.UsageError, path: str = "streamfold") -> click.UsageError:
    if isinstance(exc, _OneLine):
        return exc
    return _OneLine(one_line(exc, path), exc.ctx)  # exit 2 (EXIT_USAGE), as every UsageError
