"""The UI message stream's hot payload shape as a msgspec Struct: a text or reasoning delta
(`text-delta`, `reasoning-delta`), for `VercelUI.fold_fast_run`.

Declared whole, with unknown fields refused, so any other chunk, or a delta with
`providerMetadata` or anything else, fails validation and goes to `fold`; that also keeps msgspec
from skipping bytes it never checks as UTF-8. The Struct only chooses the fast way, never the
result.

Importing this module raises ImportError without msgspec; the dialect then has no fast path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import msgspec

__all__ = ["PartDelta", "decode_part_delta"]


class PartDelta(msgspec.Struct, forbid_unknown_fields=True):
    type: Literal["text-delta", "reasoning-delta"]
    id: str
    delta: str


#: Bytes to a `PartDelta`; raises ValueError (msgspec's ValidationError) for any other payload.
decode_part_delta: Callable[[bytes], PartDelta] = msgspec.json.Decoder(PartDelta).decode
