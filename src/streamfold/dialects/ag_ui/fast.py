"""AG-UI's hot payload shape as a msgspec Struct: the content of a text or reasoning message
(`TEXT_MESSAGE_CONTENT`, `REASONING_MESSAGE_CONTENT`), for `AGUI.fold_fast_run`.

Declared whole (the event's own fields and the base event's `timestamp`), with unknown fields
refused, so any other event, or one with a `rawEvent` or anything else, fails validation and goes
to `fold`; that also keeps msgspec from skipping bytes it never checks as UTF-8. The Struct only
chooses the fast way, never the result.

Importing this module raises ImportError without msgspec; the dialect then has no fast path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import msgspec

__all__ = ["MessageContent", "decode_message_content"]


class MessageContent(msgspec.Struct, forbid_unknown_fields=True):
    type: Literal["TEXT_MESSAGE_CONTENT", "REASONING_MESSAGE_CONTENT"]
    message_id: str = msgspec.field(name="messageId")
    delta: str
    timestamp: int | None = None


#: Bytes to a `MessageContent`; raises ValueError (msgspec's ValidationError) for any other payload.
decode_message_content: Callable[[bytes], MessageContent] = msgspec.json.Decoder(MessageContent).decode
