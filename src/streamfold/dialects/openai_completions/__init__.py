"""Legacy OpenAI completions (`text_completion`): the dialect (`fold`) and its spec."""

from __future__ import annotations

from ..openai_chat.native import export_completion, read_completion
from ..openai_chat.summary import summarize
from ..spec import DialectSpec
from .fold import OpenAICompletions

__all__ = ["SPEC", "OpenAICompletions"]


SPEC = DialectSpec(
    "openai-completions", OpenAICompletions, title="OpenAI legacy Completions (`text_completion`)",
    export=export_completion, read_response=read_completion, summary=summarize,
    discriminators={"object": frozenset({"text_completion", "completion.chunk"})}, keyless=True,
    request_paths=("/completions",))
