"""Anthropic's legacy Text Completions (`/v1/complete`): the dialect (`fold`), its export (`native`) and
how the replay server breaks it (`replay`)."""

from __future__ import annotations

from ..spec import DialectSpec
from .fold import AnthropicCompletions
from .native import export, read_completion
from .replay import COMPLETIONS_REPLAY

__all__ = ["SPEC", "AnthropicCompletions"]


SPEC = DialectSpec(
    "anthropic-completions", AnthropicCompletions, title="Anthropic legacy Text Completions (`/v1/complete`)",
    export=export, read_response=read_completion, replay=COMPLETIONS_REPLAY,
    # Captures from before `type` was sent have the text and stop reason alone.
    discriminators={"type": frozenset({"completion"})}, keys=frozenset({"completion"}),
    request_paths=("/v1/complete",))
