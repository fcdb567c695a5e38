"""A2A streaming (`message/stream`, A2A 0.3; `SendStreamingMessage`, A2A 1.0): the dialect
(`fold`), the two versions' wire shapes read alike (`shapes`), and the final Task or Message with
the frames-table summaries (`task`)."""

from ..spec import DialectSpec
from .fold import A2A
from .replay import A2A_REPLAY
from .task import export_reply, read_reply, summarize_event

__all__ = ["A2A", "SPEC"]


SPEC = DialectSpec(
    "a2a", A2A, title="A2A streaming (`message/stream`, `SendStreamingMessage`)", keyless=True,
    export=export_reply, read_response=read_reply, summary=summarize_event, replay=A2A_REPLAY,
    fast_path=f"{__name__}.fast")
