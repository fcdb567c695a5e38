"""A2A streaming (`message/stream`, A2A 0.3; `SendStreamingMessage`, A2A 1.0): the dialect
(`fold`), the two versions' wire shapes read alike (`shapes`), and the final Task or Message with
the frames-table summaries (`task`)."""

from .fold import A2A

__all__ = ["A2A"]
