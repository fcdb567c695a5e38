"""Anthropic Messages: the dialect (`fold`), its fast shapes (`fast`), the native snapshot and
export (`native`) and the frames-table summaries (`summary`)."""

from .fold import Anthropic

__all__ = ["Anthropic"]
