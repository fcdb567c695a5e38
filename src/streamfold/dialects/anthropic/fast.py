"""Anthropic's hot payload shape as msgspec Structs (see `Dialect.fold_fast_run`): a
`content_block_delta` event whose delta is a `text_delta`, `thinking_delta` or
`input_json_delta` (`Anthropic.fold_fast_run`), declared whole and with unknown
fields refused (which also keeps msgspec from skipping bytes it never checks as
UTF-8). A payload that does not fit is decoded again as plain JSON and folded by
`fold`: the Structs only choose the fast way, never the result.

Importing this module raises ImportError without msgspec; the dialect then has
no fast path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, Literal

import msgspec

__all__ = ["BlockDelta", "InputJSONDelta", "TextDelta", "ThinkingDelta", "decode_block_delta"]


class TextDelta(msgspec.Struct, tag="text_delta", tag_field="type", forbid_unknown_fields=True):
    #: The fragment, whatever the delta calls it.
    piece: str = msgspec.field(name="text")
    #: The kind of block this delta belongs to.
    block: ClassVar[str] = "text"


class ThinkingDelta(msgspec.Struct, tag="thinking_delta", tag_field="type", forbid_unknown_fields=True):
    piece: str = msgspec.field(name="thinking")
    block: ClassVar[str] = "thinking"


class InputJSONDelta(msgspec.Struct, tag="input_json_delta", tag_field="type", forbid_unknown_fields=True):
    piece: str = msgspec.field(name="partial_json")
    block: ClassVar[str] = "tool_use"


class BlockDelta(msgspec.Struct, forbid_unknown_fields=True):
    type: Literal["content_block_delta"]
    index: int
    delta: TextDelta | ThinkingDelta | InputJSONDelta


#: Bytes to a `BlockDelta`; raises ValueError for any other payload.
decode_block_delta: Callable[[bytes], BlockDelta] = msgspec.json.Decoder(BlockDelta).decode
