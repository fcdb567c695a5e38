"""AG-UI's fast way over a run (`AGUI` inherits it, `HotDeltas` walks the run): text and reasoning
messages' content, decoded by `fast`, a stretch of one message's added in one call, as `fold` adds it
piece by piece. `tests/folding/test_fast_path_ui_streams.py` holds it to the plain path."""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING

from .._hot import HotDeltas

if TYPE_CHECKING:
    from ...merge import TextBuffer
    from .fast import MessageContent
    from .lifecycle import Lifecycle
    from .native import Conversation

__all__ = ["REASONING", "TEXT", "ContentRuns"]

# What the open/closed bookkeeping keys messages by: (kind, id).
TEXT, REASONING = "text message", "reasoning message"


class ContentRuns(HotDeltas):
    """What the fast way reads of the dialect, and where the hot message's content goes: its pieces in
    the conversation, and the reply's text or reasoning (None: a user or system message echoed)."""

    hot_key = attrgetter("type", "message_id")

    _run: str | None
    lifecycle: Lifecycle
    conversation: Conversation
    _content: TextBuffer
    _reasoning: TextBuffer
    _hot_pieces: list[str]
    _hot_buffer: TextBuffer | None = None

    def _add_text(self, ident: str, what: str, delta: str, frame: int) -> bool:
        raise NotImplementedError

    def _cold(self, value: MessageContent, frame: int) -> bool:
        """Content for a message that started and has not ended, in an open run: its text added as
        `fold` adds it (nothing to report then), the message made hot. Anything else is `fold`'s."""
        what = TEXT if value.type == "TEXT_MESSAGE_CONTENT" else REASONING
        if self._run != "open" or (what, value.message_id) not in self.lifecycle.open:
            return False
        if value.delta:
            role = self._add_text(value.message_id, what, value.delta, frame)
            self._hot, self._hot_pieces = self.hot_key(value), self.conversation.pieces(value.message_id)
            self._hot_buffer = (self._reasoning if what == REASONING else self._content) if role else None
        return True

    def _extend_hot(self, texts: list[str], frames: list[int]) -> None:
        """The hot message's content that waited, added as `_add_text` adds each (the blank line before it
        was added with its first piece)."""
        if texts:
            self._hot_pieces += texts
            if self._hot_buffer is not None:
                self._hot_buffer.extend(texts, frames)
