"""MCP's hot payload shape as a msgspec Struct: a notification (progress, log message: `method`
and `params`, no `id`), for `MCP.fold_fast_run`. Its `params` stay the JSON text they came as
(`msgspec.Raw`), kept so until the native snapshot reads them: a long tool call sends a
notification a step, and 100k kept dicts made every garbage collection longer as the stream grew.

Declared whole with unknown fields refused, so a request (`id`), a response (`result`, `error`)
or a message without `"jsonrpc": "2.0"` fails validation and goes to `fold`. msgspec checks the
JSON of `params` as it skips it but not its UTF-8, nor nesting past the core's cap: `fold_fast_run`
checks those. The Struct only chooses the fast way, never the result.

Importing this module raises ImportError without msgspec; the dialect then has no fast path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import msgspec

__all__ = ["Notification", "decode_notification"]


class Notification(msgspec.Struct, forbid_unknown_fields=True):
    jsonrpc: Literal["2.0"]
    method: str
    params: msgspec.Raw = msgspec.Raw(b"null")


#: Bytes to a `Notification`; raises ValueError (msgspec's errors) for any other payload.
decode_notification: Callable[[bytes], Notification] = msgspec.json.Decoder(Notification).decode
