"""Ollama's hot payload shape as msgspec Structs: a chat line (`message`) or a
generate line (`response`) that only adds text, for `Ollama.fold_fast_run`.

Declared whole and with unknown fields refused (`forbid_unknown_fields`), so a
line with anything `fold` would act on beyond appending text (tool calls,
logprobs, an error) fails validation; that also keeps msgspec from skipping
bytes it never checks as UTF-8. A payload that does not fit is decoded again as
plain JSON and folded by `fold`: the Structs only choose the fast way, never the
result. The last line (`done: true`) is `fold_fast_run`'s to refuse.

Importing this module raises ImportError without msgspec; the dialect then
has no fast path.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

__all__ = ["OllamaLine", "OllamaMessage", "decode_ollama_line"]


class OllamaMessage(msgspec.Struct, forbid_unknown_fields=True):
    content: str
    role: str | None = None
    thinking: str | None = None
    tool_calls: None = None


class OllamaLine(msgspec.Struct, forbid_unknown_fields=True):
    model: str | None = None
    created_at: str | None = None
    message: OllamaMessage | None = None
    response: str | None = None
    thinking: str | None = None
    done: bool | None = None
    tool_calls: None = None
    logprobs: None = None
    error: None = None
    remote_model: str | None = None
    remote_host: str | None = None


#: Bytes to an `OllamaLine`; raises ValueError (msgspec's ValidationError) for any other payload.
decode_ollama_line: Callable[[bytes], OllamaLine] = msgspec.json.Decoder(OllamaLine).decode
