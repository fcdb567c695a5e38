"""OpenAI Chat Completions (`chat.completion.chunk`) and the compatible family: the fold
(`fold.py`), its fast way's Structs (`fast.py`), the tool-call identity rules (`tools.py`),
the export and its native snapshot (`native.py`) and the frame summaries (`summary.py`)."""

from __future__ import annotations

from ..spec import DialectSpec
from .fold import OpenAIChat
from .native import export_chat, may_hold_opaque, opaque_values, read_chat
from .replay import OPENAI_CHAT_REPLAY
from .summary import summarize

__all__ = ["SPEC", "OpenAIChat"]


SPEC = DialectSpec(
    "openai-chat", OpenAIChat, replay=OPENAI_CHAT_REPLAY, title="OpenAI Chat Completions and the compatible family",
    export=export_chat, opaque_state=opaque_values, may_hold_opaque=may_hold_opaque, read_response=read_chat,
    summary=summarize,
    discriminators={"object": frozenset({"chat.completion.chunk"})}, keyless=True,
    request_paths=("/chat/completions",), fast_path=f"{__name__}.fast")
