"""Claude Code / Agent SDK `stream-json`: the envelope (`fold`) around Anthropic events, and the
events an `assistant` line stands for when no `stream_event` lines came (`turns`)."""

from ..spec import DialectSpec
from .fold import ClaudeStreamJSON

__all__ = ["SPEC", "ClaudeStreamJSON"]


SPEC = DialectSpec(
    "claude-stream-json", ClaudeStreamJSON, title="Claude Code / Agent SDK `stream-json`",
    keys=frozenset({"session_id"}))
