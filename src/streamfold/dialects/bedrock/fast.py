"""Bedrock's hot payload shape as a msgspec Struct: a `contentBlockDelta` that carries text
(`Bedrock.fold_fast_run`), with the random-length `p` padding every payload has.

Declared whole, with unknown fields refused, so a delta of any other kind (tool input,
reasoning, a citation, a tool result) fails validation and goes to `fold`; that also keeps
msgspec from skipping bytes it never checks as UTF-8. The event name is the message's
`:event-type` header, which `fold_fast_run` checks. The Struct only chooses the fast way, never
the result.

Importing this module raises ImportError without msgspec; the dialect then has no fast path.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

__all__ = ["TextBlockDelta", "decode_text_delta"]


class TextDelta(msgspec.Struct, forbid_unknown_fields=True):
    text: str


class TextBlockDelta(msgspec.Struct, forbid_unknown_fields=True):
    index: int = msgspec.field(name="contentBlockIndex")
    delta: TextDelta
    p: str | None = None


#: Bytes to a `TextBlockDelta`; raises ValueError (msgspec's ValidationError) for any other payload.
decode_text_delta: Callable[[bytes], TextBlockDelta] = msgspec.json.Decoder(TextBlockDelta).decode
