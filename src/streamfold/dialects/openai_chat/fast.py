"""The hot payload shape of OpenAI chat as msgspec Structs: a chunk whose one
choice carries only text (content or reasoning) or only tool-call argument
fragments (`OpenAIChat.fold_fast`). Decoding into these skips the dicts and
the dialect's lookups (see `Dialect.fold_fast`).

Every field `OpenAIChat.fold` reads is declared, and typed so that anything
`fold` would act on beyond appending text (usage, an error, a tool call's id
or name) fails validation; a role and a finish reason, which vendors repeat
on every chunk (as "assistant" and ""), are checked by `fold_fast`. Unknown fields fail too
(`forbid_unknown_fields`), which also keeps msgspec from skipping bytes it
never checks as UTF-8. A payload that does not fit is decoded again as plain
JSON and folded by `fold`: the Structs only choose the fast way, never the result.

Importing this module raises ImportError without msgspec; the dialect then
has no fast path.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

__all__ = ["Chunk", "decode_chunk"]


class Function(msgspec.Struct, forbid_unknown_fields=True):
    arguments: str
    name: None = None


class ToolCall(msgspec.Struct, forbid_unknown_fields=True):
    index: int
    function: Function
    id: None = None
    type: str | None = None


class Delta(msgspec.Struct, forbid_unknown_fields=True):
    content: str | None = None
    reasoning_content: str | None = None
    reasoning: str | None = None
    tool_calls: list[ToolCall] | None = None
    role: str | None = None
    refusal: None = None
    reasoning_details: None = None
    function_call: None = None


class Choice(msgspec.Struct, forbid_unknown_fields=True):
    index: int
    delta: Delta
    finish_reason: str | None = None
    logprobs: None = None
    usage: None = None


class Chunk(msgspec.Struct, forbid_unknown_fields=True):
    choices: list[Choice]
    id: str | None = None
    object: str | None = None
    created: int | None = None
    model: str | None = None
    system_fingerprint: str | None = None
    service_tier: str | None = None
    obfuscation: str | None = None
    usage: None = None
    error: None = None


#: Bytes to a `Chunk`; raises ValueError (msgspec's ValidationError) for any other payload.
decode_chunk: Callable[[bytes], Chunk] = msgspec.json.Decoder(Chunk).decode
