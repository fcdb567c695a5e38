"""Cohere's hot payload shape as msgspec Structs: a `content-delta` event with text
or thinking, for `Cohere.fold_fast_run`.

Declared whole and with unknown fields refused (`forbid_unknown_fields`), which also
keeps msgspec from skipping bytes it never checks as UTF-8: a payload that does not
fit is decoded again as plain JSON and folded by `fold`. The Structs only choose the
fast way, never the result.

Importing this module raises ImportError without msgspec; the dialect then has no
fast path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import msgspec

__all__ = ["CohereContentDelta", "decode_cohere_content_delta"]


class CohereContent(msgspec.Struct, forbid_unknown_fields=True):
    text: str | None = None
    thinking: str | None = None


class CohereMessage(msgspec.Struct, forbid_unknown_fields=True):
    content: CohereContent


class CohereDelta(msgspec.Struct, forbid_unknown_fields=True):
    message: CohereMessage


class CohereContentDelta(msgspec.Struct, forbid_unknown_fields=True):
    type: Literal["content-delta"]
    delta: CohereDelta
    index: int | None = None


#: Bytes to a `CohereContentDelta`; raises ValueError for any other payload.
decode_cohere_content_delta: Callable[[bytes], CohereContentDelta] = msgspec.json.Decoder(CohereContentDelta).decode
