"""Claude Code / Agent SDK `stream-json`: the envelope (`fold`) around Anthropic events, and the
events an `assistant` line stands for when no `stream_event` lines came (`turns`)."""

from ..spec import DialectSpec
from .fold import ClaudeStreamJSON
from .replay import CLAUDE_STREAM_JSON_REPLAY

__all__ = ["SPEC", "ClaudeStreamJSON"]


SPEC = DialectSpec(
    "claude-stream-json", ClaudeStreamJSON, title="Claude Code / Agent SDK `stream-json`",
    keys=frozenset({"session_id"}), replay=CLAUDE_STREAM_JSON_REPLAY)
