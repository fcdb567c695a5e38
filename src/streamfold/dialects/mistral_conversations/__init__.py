"""Mistral's Conversations API stream: the dialect (`fold`), its export (`native`) and how the replay
server breaks it (`replay`)."""

from __future__ import annotations

from ...findings import Severity
from ..spec import DialectSpec, vendor_codes
from .fold import EVENT_TYPES, MistralConversations
from .native import export, read_response, summarize
from .replay import CONVERSATIONS_REPLAY

__all__ = ["SPEC", "MistralConversations"]


SPEC = DialectSpec(
    "mistral-conversations", MistralConversations, title="Mistral Conversations API (agents, hand-offs)",
    export=export, read_response=read_response, summary=summarize, replay=CONVERSATIONS_REPLAY,
    discriminators={"type": EVENT_TYPES}, request_paths=("/v1/conversations",),
    codes=vendor_codes(
        "mistral-conversations",
        ("mistral-other-agents", Severity.INFO, "the conversation was handed to agents other than the one folded; "
         "they are listed with their first frame")))
