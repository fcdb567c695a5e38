"""The Realtime API's hot payload shape as a msgspec Struct: a text delta of a response's message
(`response.output_text.delta`, the audio transcript's, and their beta names), for
`OpenAIRealtime.fold_fast_run`.

Declared whole, with unknown fields refused, so an event of another type or with anything `fold`
would read beyond the response, the item and the text (a `response` object, say) fails
validation and goes to `fold`; that also keeps msgspec from skipping bytes it never checks as
UTF-8. The Struct only chooses the fast way, never the result.

Importing this module raises ImportError without msgspec; the dialect then has no fast path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import msgspec

__all__ = ["TextDelta", "decode_text_delta"]


class TextDelta(msgspec.Struct, forbid_unknown_fields=True):
    type: Literal["response.output_text.delta", "response.text.delta", "response.output_audio_transcript.delta",
                  "response.audio_transcript.delta"]
    response_id: str
    item_id: str
    delta: str
    event_id: str | None = None
    output_index: int | None = None
    content_index: int | None = None


#: Bytes to a `TextDelta`; raises ValueError (msgspec's ValidationError) for any other payload.
decode_text_delta: Callable[[bytes], TextDelta] = msgspec.json.Decoder(TextDelta).decode
