"""Claude Code / Agent SDK `stream-json`: the envelope (`fold`) around Anthropic events, and the
events an `assistant` line stands for when no `stream_event` lines came (`turns`)."""

from .fold import ClaudeStreamJSON

__all__ = ["ClaudeStreamJSON"]
